"""An unknown outcome of a reference move is resolved from the history, not from the head alone.

Regression tests for two cases the reliability campaign found: a commit whose compare-and-swap
landed, although its answer was lost, while another writer committed on top of it before the
re-read (reported as a failure, or applied twice); and a reference create whose ``int/refs``
commit landed with its answer lost (reported as "already exists" for the caller's own create).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from backends.inmemory import InMemoryBackendFactory
from conformance.faults import Fault, FaultInjectingPersist
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.errors import UnknownOperationResult
from persist_spi.forwarding import ForwardingPersist
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.logic.outcomes import commit_in_history
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.objs import Obj, TagObj
from persist_spi.persist import Persist, StoredAndMoved
from persist_spi.references import Reference
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore

MAIN = branch("main")


def _persist() -> Persist:
    persist = AdapterPersist(InMemoryBackendFactory().create(), StoreConfig(repository_id="r"))
    VersionStore(persist).repository.initialize("main")
    return persist


def _put(persist: Persist, name: str) -> None:
    VersionStore(persist).commit(MAIN, None, CommitMeta(name), [Put(ContentKey.of(name), IcebergTable())])


def _messages(persist: Persist) -> list[str]:
    vs = VersionStore(persist)
    return [c.message for c in vs.commits.commit_log(vs.reference(MAIN).hash)]


@dataclass
class LandsThenOthersCommit(FaultInjectingPersist):
    """The first pointer move is applied, another writer commits on top, then the answer is lost."""

    fired: bool = False

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        moved = self.delegate.update_reference_pointer(ref, new_pointer)
        if self.fired:
            return moved
        self.fired = True
        _put(self.delegate, "other")
        raise UnknownOperationResult("injected: the answer of a landed move is lost")


def test_landed_commit_under_a_newer_head_is_reported_as_committed_once() -> None:
    persist = _persist()
    result = VersionStore(LandsThenOthersCommit(persist)).commit(
        MAIN, None, CommitMeta("mine"), [Put(ContentKey.of("mine"), IcebergTable())]
    )
    assert _messages(persist) == ["other", "mine"]
    vs = VersionStore(persist)
    assert result.hash in vs.commits.commit_id_log(vs.reference(MAIN).hash)


def test_lost_commit_is_retried_when_it_is_not_in_the_history() -> None:
    persist = _persist()
    faulty = FaultInjectingPersist(persist, [Fault("update_reference_pointer", after_write=False)])
    VersionStore(faulty).commit(MAIN, None, CommitMeta("mine"), [Put(ContentKey.of("mine"), IcebergTable())])
    assert _messages(persist) == ["mine"]
    assert faulty.calls["update_reference_pointer"] == 2


def test_commit_in_history_walks_only_down_to_the_commits_sequence_number() -> None:
    persist = _persist()
    for name in ("a", "b", "c"):
        _put(persist, name)
    vs = VersionStore(persist)
    head = vs.reference(MAIN).hash
    ids = list(vs.commits.commit_id_log(head))
    assert all(commit_in_history(vs.commits, head, i) for i in ids)
    assert not commit_in_history(vs.commits, ids[1], ids[0])  # a child is not in its parent's history
    assert not commit_in_history(vs.commits, EMPTY_OBJ_ID, ids[0])
    assert not commit_in_history(vs.commits, head, ObjId(b"\x01" * 32))  # unknown commit


def test_create_whose_registration_landed_with_its_answer_lost_returns_the_reference() -> None:
    persist = _persist()
    faulty = FaultInjectingPersist(persist, [Fault("update_reference_pointer", after_write=True)])
    created = ReferenceLogic(faulty).create_reference("refs/heads/new", EMPTY_OBJ_ID)
    assert persist.fetch_reference("refs/heads/new") == created
    assert [r.name for r in ReferenceLogic(persist).query_references("refs/heads/")] == [
        "refs/heads/main",
        "refs/heads/new",
    ]


class StoreAndSwapTrouble(ForwardingPersist):
    """Injects trouble into the commit path's one call (store the objects, move the branch)."""

    def __init__(self, delegate: Persist, trouble: str) -> None:
        super().__init__(delegate)
        self.trouble = trouble
        self.calls = 0

    def store_objs_and_update_reference(
        self, objs: Sequence[Obj], ref: Reference, new_pointer: ObjId
    ) -> StoredAndMoved:
        self.calls += 1
        if self.calls > 1 or self.trouble == "none":
            return self.delegate.store_objs_and_update_reference(objs, ref, new_pointer)
        if self.trouble == "lands, then another commit, answer lost":
            self.delegate.store_objs_and_update_reference(objs, ref, new_pointer)
            _put(self.delegate, "other")
        elif self.trouble == "objects stored, answer lost":
            self.delegate.store_objs(objs)
        elif self.trouble == "another object holds the commit's id":
            self.delegate.store_obj(TagObj(id=new_pointer, message="not a commit"))
            return self.delegate.store_objs_and_update_reference(objs, ref, new_pointer)
        raise UnknownOperationResult(f"injected: {self.trouble}")


def _commit_mine(persist: Persist) -> ObjId:
    put = [Put(ContentKey.of("mine"), IcebergTable())]
    return VersionStore(persist).commit(MAIN, None, CommitMeta("mine"), put).hash


def test_a_landed_store_and_swap_under_a_newer_head_is_reported_as_committed_once() -> None:
    persist = _persist()
    troubled = StoreAndSwapTrouble(persist, "lands, then another commit, answer lost")
    mine = _commit_mine(troubled)
    assert _messages(persist) == ["other", "mine"]
    vs = VersionStore(persist)
    assert mine in vs.commits.commit_id_log(vs.reference(MAIN).hash)
    assert troubled.calls == 1


def test_a_store_and_swap_lost_before_writing_is_retried() -> None:
    persist = _persist()
    troubled = StoreAndSwapTrouble(persist, "lost before writing")
    _commit_mine(troubled)
    assert _messages(persist) == ["mine"]
    assert troubled.calls == 2


def test_a_retry_that_finds_its_commit_stored_moves_the_branch_onto_it_once() -> None:
    """The first attempt stored the commit but moved nothing; the retry builds the same commit id,
    the combined call then moves nothing (the commit existed), and the branch is moved after the
    stored commit is read and found to be this one."""
    persist = _persist()
    troubled = StoreAndSwapTrouble(persist, "objects stored, answer lost")
    mine = _commit_mine(troubled)
    assert _messages(persist) == ["mine"]
    assert VersionStore(persist).reference(MAIN).hash == mine
    assert troubled.calls == 2


def test_a_commit_id_held_by_another_object_never_becomes_the_head() -> None:
    persist = _persist()
    head = VersionStore(persist).reference(MAIN).hash
    with pytest.raises(RuntimeError, match="Hash collision"):
        _commit_mine(StoreAndSwapTrouble(persist, "another object holds the commit's id"))
    assert VersionStore(persist).reference(MAIN).hash == head
