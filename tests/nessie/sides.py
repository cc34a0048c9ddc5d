"""The two sides of a comparison with Nessie: lochkit's version store in-process (in-memory backend)
and a real Nessie server over REST, each with a fresh branch, and small builders for scenarios."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backends.inmemory import InMemoryBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.versionstore import CommitMeta, Content, ContentKey, IcebergTable, Namespace, Operation
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.errors import ReferenceConflictError
from persist_spi.versionstore.refs import NamedRef, branch
from persist_spi.versionstore.store import VersionStore

SIDES = ("lochkit", "nessie")


def key(dotted: str) -> ContentKey:
    return ContentKey.parse(dotted)


def table(location: str, content_id: str | None = None) -> IcebergTable:
    return IcebergTable(id=content_id, metadata_location=location, snapshot_id=1)


def namespace(dotted: str) -> Namespace:
    return Namespace(elements=tuple(dotted.split(".")))


@dataclass
class Side:
    """One version store under test, with a fresh branch ``main`` (uniquely named on a shared
    server) at the empty commit."""

    name: str
    api: VersionStoreApi
    main: NamedRef
    raw_url: str | None = None  # the Nessie server's REST URL, for requests the contract cannot make

    def new_branch(self, at: NamedRef | None = None) -> NamedRef:
        """A new branch at the head of ``at`` (default: main); names never look like a hash."""
        created = branch(f"x{uuid.uuid4().hex[:12]}")
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


def lochkit_side() -> Side:
    adapter = InMemoryBackendFactory().create()
    adapter.setup_schema()
    persist = AdapterPersist(adapter, StoreConfig())
    RepositoryLogic(persist).initialize("main")
    store = VersionStore(persist)
    main = branch(f"x{uuid.uuid4().hex[:12]}")
    store.create_reference(main)
    return Side("lochkit", store, main)
