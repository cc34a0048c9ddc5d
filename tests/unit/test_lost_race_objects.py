"""A commit that loses its compare-and-swap has stored its objects anyway (the Persist contract:
a lost swap leaves them stored); the attempt after it builds on them and does not send them again.

Sending them again was not free: every existing object takes a new ``referenced`` timestamp, an
update by id, which on FerretDB 1.x scans the whole objects collection. With two writers on one
branch, each retry held the adapter's write lock for that scan (hundreds of ms on a bench
repository), so the other writer waited and the retrying one kept losing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest

from backends.inmemory.adapter import InMemoryAdapter
from conformance.faults import Fault, FaultInjectingPersist
from persist_spi.adapter import ObjRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.references import Reference
from persist_spi.versionstore import CommitMeta, IcebergTable, Put, VersionStore
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.policies.optimistic import ImmediatePolicy
from persist_spi.versionstore.refs import branch

MAIN = branch("main")
MINE = ContentKey.of("mine")


class _RecordingAdapter(InMemoryAdapter):
    """Counts every object row sent to the database, by id."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: Counter[bytes] = Counter()

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        self.sent.update(r.obj_id for r in rows)
        return super().insert_objs(repo, rows)


@pytest.fixture
def adapter() -> _RecordingAdapter:
    adapter = _RecordingAdapter()
    RepositoryLogic(AdapterPersist(adapter, StoreConfig())).initialize("main")
    return adapter


def _racing(adapter: _RecordingAdapter) -> VersionStore:
    """A store whose first compare-and-swap loses: another store commits right before it."""
    other = VersionStore(AdapterPersist(adapter, StoreConfig()))
    raced = False

    def commit_first(_ref: Reference, _new: ObjId) -> None:
        nonlocal raced
        if not raced:
            raced = True
            other.commit(
                MAIN,
                None,
                CommitMeta("theirs"),
                [Put(ContentKey.of("theirs"), IcebergTable(metadata_location="t"))],
            )

    faulty = FaultInjectingPersist(AdapterPersist(adapter, StoreConfig()), before_pointer_update=commit_first)
    return VersionStore(faulty, policy=ImmediatePolicy())


def _commit_mine(store: VersionStore) -> int:
    result = store.commit(MAIN, None, CommitMeta("mine"), [Put(MINE, IcebergTable(metadata_location="m"))])
    return result.attempts


def test_the_retry_after_a_lost_swap_does_not_send_the_stored_content_value_again(
    adapter: _RecordingAdapter,
) -> None:
    store = _racing(adapter)
    assert _commit_mine(store) == 2
    # Each attempt sends its own commit (another parent, another id); the content value is the
    # same in both and went once.
    assert [n for n in adapter.sent.values() if n > 1] == []
    assert _value(store) == "m"


def test_a_stale_remembered_head_does_not_send_the_content_value_again(adapter: _RecordingAdapter) -> None:
    mine = VersionStore(AdapterPersist(adapter, StoreConfig()))
    mine.commit(
        MAIN, None, CommitMeta("one"), [Put(ContentKey.of("one"), IcebergTable(metadata_location="1"))]
    )
    theirs = VersionStore(AdapterPersist(adapter, StoreConfig()))
    theirs.commit(
        MAIN, None, CommitMeta("two"), [Put(ContentKey.of("two"), IcebergTable(metadata_location="2"))]
    )
    adapter.sent.clear()
    # Built first on the head ``mine`` remembers, which ``theirs`` moved: lost, then built again.
    assert _commit_mine(mine) == 1
    assert [n for n in adapter.sent.values() if n > 1] == [], "an object sent twice"
    assert _value(mine) == "m"


def test_after_an_unknown_outcome_the_content_value_is_sent_again(adapter: _RecordingAdapter) -> None:
    """An unknown outcome says nothing about the objects: the retry sends them again (here the
    store failed before writing, so without that the commit would point at a missing value)."""
    faulty = FaultInjectingPersist(AdapterPersist(adapter, StoreConfig()), faults=[Fault("store_objs")])
    store = VersionStore(faulty, policy=ImmediatePolicy())
    assert _commit_mine(store) == 2
    assert _value(store) == "m"


def _value(store: VersionStore) -> str | None:
    table = store.get_values(MAIN, [MINE])[MINE]
    assert isinstance(table, IcebergTable)
    return table.metadata_location
