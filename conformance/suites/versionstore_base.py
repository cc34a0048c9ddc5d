"""What the version-store suites share: a repository initialised with a ``main`` branch, a
:class:`~persist_spi.versionstore.VersionStore` over the backend under test, and small builders for
keys, contents and commits.

The version-store suites exercise Nessie's version-store behaviour (commits with strict validation,
conflicts, namespaces, references, reads, diff, merge, transplant, concurrency) on whatever backend
``--backend`` selects. Contents are compared without their content id (the store assigns ids) unless
a test is about ids.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from conformance.suites.base import ConformanceSuite
from persist_spi.ids import ObjId
from persist_spi.persist import Persist
from persist_spi.versionstore import (
    CommitMeta,
    Content,
    ContentKey,
    Delete,
    IcebergTable,
    Namespace,
    Operation,
    Put,
    Unchanged,
    VersionStore,
)
from persist_spi.versionstore.errors import Conflict, ConflictType
from persist_spi.versionstore.refs import NamedRef, branch

MAIN = branch("main")
#: A commit id no repository holds (22 bytes, as in Nessie's suites).
UNKNOWN_HASH = ObjId.from_hex("12341234123412341234123412341234123412341234")


def exactly(message: str) -> str:
    """A ``pytest.raises(match=...)`` pattern accepting exactly ``message``."""
    return "^" + re.escape(message) + "$"


def key(dotted: str) -> ContentKey:
    """``"a.b.c"`` -> the content key with elements a, b, c."""
    return ContentKey.parse(dotted)


def table(location: str, content_id: str | None = None, snapshot: int = 1) -> IcebergTable:
    """An Iceberg table; without ``content_id`` it is new content (the store assigns an id)."""
    return IcebergTable(id=content_id, metadata_location=location, snapshot_id=snapshot)


def namespace(dotted: str, content_id: str | None = None) -> Namespace:
    return Namespace(id=content_id, elements=tuple(dotted.split(".")))


def without_id(content: Content | None) -> Content | None:
    return None if content is None else dataclasses.replace(content, id=None)


def contents_without_ids(values: Mapping[ContentKey, Content]) -> dict[str, Content | None]:
    """``{"dotted.key": content without id}``, for comparing what a reference holds."""
    return {str(k): without_id(v) for k, v in values.items()}


def conflict_summary(conflicts: Iterable[Conflict]) -> list[tuple[ConflictType, str | None, str]]:
    """(type, dotted key, message) of each conflict, in order."""
    return [(c.conflict_type, None if c.key is None else str(c.key), c.message) for c in conflicts]


@dataclass(frozen=True)
class StorageSnapshot:
    """Every object id and every named reference's head: equal snapshots mean nothing was written."""

    objects: frozenset[ObjId]
    references: frozenset[tuple[str, ObjId]]


def storage_snapshot(persist: Persist, vs: VersionStore) -> StorageSnapshot:
    return StorageSnapshot(
        frozenset(o.id for o in persist.scan_all_objects()),
        frozenset((r.named_ref.full_name, r.hash) for r in vs.list_references()),
    )


class VersionStoreSuite(ConformanceSuite):
    """Base of the version-store suites; not collected itself (``abstract``)."""

    abstract: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Concrete unless a subclass says otherwise: the collector reads ``abstract`` by getattr.
        if "abstract" not in cls.__dict__:
            cls.abstract = False

    #: Runs over REST too (``serve:BACKEND``, ``nessie``; see :mod:`conformance.suite_targets`).
    runs_over_rest: ClassVar[bool] = True

    @pytest.fixture
    def vs(self, lochkit_version_store: VersionStore) -> VersionStore:
        """A version store over an initialised repository: ``main`` points at the empty commit.
        Over REST this is lochkit's Nessie REST client, which takes and returns the same types."""
        return lochkit_version_store

    # --- helpers for tests -----------------------------------------------------------------------

    @staticmethod
    def commit(
        vs: VersionStore,
        target: NamedRef,
        *operations: Operation,
        expected: ObjId | None = None,
        message: str = "commit",
    ) -> ObjId:
        """Commit ``operations`` and return the new head."""
        return vs.commit(target, expected, CommitMeta(message), list(operations)).hash

    @staticmethod
    def values(vs: VersionStore, where: NamedRef | ObjId, keys: Sequence[str]) -> dict[str, Content | None]:
        """What ``where`` holds for ``keys`` (absent keys are left out), contents without ids."""
        return contents_without_ids(vs.get_values(where, [key(k) for k in keys]))

    @staticmethod
    def content_id(vs: VersionStore, where: NamedRef | ObjId, dotted: str) -> str:
        content = vs.get_value(where, key(dotted))
        assert content is not None, f"{dotted} is not on {where}"
        assert content.id is not None
        return content.id

    def first_commit(self, vs: VersionStore, target: NamedRef, message: str = "Initial Commit") -> ObjId:
        """The catalog's standard first commit: tables t1, t2 and t3."""
        return self.commit(
            vs,
            target,
            Put(key("t1"), table("v1_1")),
            Put(key("t2"), table("v2_1")),
            Put(key("t3"), table("v3_1")),
            message=message,
        )

    def second_and_third_commits(self, vs: VersionStore, target: NamedRef) -> tuple[ObjId, ObjId]:
        """The catalog's standard follow-up to a first commit of t1, t2, t3: "Second Commit" updates
        t1, deletes t2 and t3 and adds t4; "Third Commit" re-creates t2 and asserts t4 unchanged."""
        t1 = self.content_id(vs, target, "t1")
        second = self.commit(
            vs,
            target,
            Put(key("t1"), table("v1_2", t1)),
            Delete(key("t2")),
            Delete(key("t3")),
            Put(key("t4"), table("v4_1")),
            message="Second Commit",
        )
        third = self.commit(
            vs, target, Put(key("t2"), table("v2_2")), Unchanged(key("t4")), message="Third Commit"
        )
        return second, third

    @staticmethod
    def head(vs: VersionStore, ref: NamedRef) -> ObjId:
        return vs.reference(ref).hash

    @staticmethod
    def messages(vs: VersionStore, where: NamedRef | ObjId) -> list[str]:
        """Commit messages of the first-parent log, newest first."""
        return [e.meta.message for e in vs.get_commits(where)]


__all__ = [
    "MAIN",
    "UNKNOWN_HASH",
    "StorageSnapshot",
    "VersionStoreSuite",
    "conflict_summary",
    "contents_without_ids",
    "exactly",
    "key",
    "namespace",
    "storage_snapshot",
    "table",
    "without_id",
]
