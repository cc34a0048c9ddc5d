"""A delete that stopped between committing its removal and purging the row stays recoverable
after int/refs moves on (regression: reads raised RuntimeError and the name could never be
created again, found by the reliability campaign's crash sweep)."""

from __future__ import annotations

from backends.inmemory import InMemoryBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.persist import Persist
from persist_spi.versionstore.store import VersionStore


def _stopped_before_purge() -> tuple[Persist, ReferenceLogic]:
    persist = AdapterPersist(InMemoryBackendFactory().create(), StoreConfig(repository_id="r"))
    VersionStore(persist).repository.initialize("main")
    refs = ReferenceLogic(persist)
    ref = refs.create_reference("refs/heads/x", EMPTY_OBJ_ID)
    persist.mark_reference_as_deleted(ref)
    refs.commit_delete_reference(ref, None)  # the process dies here, before the purge
    refs.create_reference("refs/heads/other", EMPTY_OBJ_ID)  # int/refs moves on: tombstone dropped
    return persist, refs


def test_reading_the_name_purges_the_leftover_row() -> None:
    persist, refs = _stopped_before_purge()
    assert refs.get_references(["refs/heads/x"]) == [None]
    assert persist.fetch_reference("refs/heads/x") is None


def test_listing_skips_the_name_and_creating_it_again_works() -> None:
    persist, refs = _stopped_before_purge()
    assert [r.name for r in refs.query_references("refs/heads/")] == ["refs/heads/main", "refs/heads/other"]
    refs.get_references(["refs/heads/x"])
    created = refs.create_reference("refs/heads/x", EMPTY_OBJ_ID)
    assert persist.fetch_reference("refs/heads/x") == created
