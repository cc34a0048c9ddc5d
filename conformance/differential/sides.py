"""The two sides of a comparison with Nessie: lochkit's version store in-process (in-memory backend)
and a real Nessie server over REST. A side names its references with a prefix of its own, so many
comparisons share one Nessie server without seeing each other, and has small builders for
hand-written scenarios."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backends.inmemory import InMemoryBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.versionstore import CommitMeta, Content, ContentKey, IcebergTable, Namespace, Operation
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.errors import ReferenceConflictError
from persist_spi.versionstore.refs import NamedRef, RefKind, branch
from persist_spi.versionstore.store import VersionStore

SIDES = ("lochkit", "nessie")


def key(dotted: str) -> ContentKey:
    return ContentKey.parse(dotted)


def table(location: str, content_id: str | None = None) -> IcebergTable:
    return IcebergTable(id=content_id, metadata_location=location, snapshot_id=1)


def namespace(dotted: str) -> Namespace:
    return Namespace(elements=tuple(dotted.split(".")))


def unique_prefix() -> str:
    """A reference-name prefix no other comparison uses (never mistaken for a commit hash)."""
    return f"x{uuid.uuid4().hex[:10]}_"


@dataclass
class Side:
    """One version store under comparison, with a branch ``main`` (named ``<prefix>main``) at the
    empty commit."""

    name: str
    api: VersionStoreApi
    prefix: str
    #: The Nessie server's REST URL, for requests the contract cannot make (None in-process).
    raw_url: str | None = None
    main: NamedRef = field(init=False)

    def __post_init__(self) -> None:
        self.main = self.ref("main")
        self.api.create_reference(self.main)

    def ref(self, logical: str, kind: RefKind = RefKind.BRANCH) -> NamedRef:
        """The side's reference for a logical name (``main``, ``b1``...)."""
        return NamedRef(self.prefix + logical, kind)

    def logical(self, actual: str) -> str:
        return actual[len(self.prefix) :] if actual.startswith(self.prefix) else actual

    def new_branch(self, at: NamedRef | None = None) -> NamedRef:
        """A new branch at the head of ``at`` (default: main)."""
        created = branch(f"{self.prefix}{uuid.uuid4().hex[:8]}")
        self.api.create_reference(created, self.api.reference(at or self.main).hash)
        return created

    def commit(
        self, *operations: Operation, on: NamedRef | None = None, expected: ObjId | None = None
    ) -> ObjId:
        return self.api.commit(on or self.main, expected, CommitMeta("commit"), list(operations)).hash

    def head(self, ref: NamedRef | None = None) -> ObjId:
        return self.api.reference(ref or self.main).hash

    def keys(self, ref: NamedRef | None = None) -> dict[str, int]:
        """Live keys with their payloads."""
        return {str(e.key): e.payload for e in self.api.get_entries(ref or self.main)}

    def value(self, dotted: str, ref: NamedRef | None = None) -> Content | None:
        return self.api.get_value(ref or self.main, key(dotted))

    def content_id(self, dotted: str, ref: NamedRef | None = None) -> str:
        content = self.value(dotted, ref)
        assert content is not None, f"{dotted} is not on {ref or self.main}"
        assert content.id is not None
        return content.id


def lochkit_side(prefix: str | None = None) -> Side:
    """lochkit's version store in-process over a fresh in-memory repository."""
    adapter = InMemoryBackendFactory().create()
    adapter.setup_schema()
    persist = AdapterPersist(adapter, StoreConfig())
    RepositoryLogic(persist).initialize("main")
    return Side("lochkit", VersionStore(persist), prefix or unique_prefix())


def nessie_side(api: VersionStoreApi, url: str, prefix: str | None = None) -> Side:
    """A Nessie server (``api`` is a client of ``url``); the side's references are new names."""
    return Side("nessie", api, prefix or unique_prefix(), raw_url=url)


def conflicts_of(error: BaseException) -> list[tuple[str, str | None]]:
    """(type, dotted key) of each conflict, sorted (Nessie's order follows a Java hash set)."""
    assert isinstance(error, ReferenceConflictError), f"{type(error).__name__}: {error}"
    return sorted((c.conflict_type.name, None if c.key is None else str(c.key)) for c in error.conflicts)


def outcome(call: Callable[[], Any]) -> Any:
    """The call's result, or the exception it raised (for side-by-side expectations)."""
    try:
        return call()
    except Exception as e:
        return e
