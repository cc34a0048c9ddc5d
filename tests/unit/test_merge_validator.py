"""A merge's or transplant's validator runs inside the store, once the keys it would change are
known, on the head it was planned on and before anything is written; what it raises reaches the
caller and nothing changes."""

from __future__ import annotations

import pytest

from backends.inmemory.adapter import InMemoryAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.versionstore import CommitMeta, Namespace, Put, VersionStore
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.results import MergeResult

MAIN, DEV = branch("main"), branch("dev")


class Refused(Exception):
    pass


def _store_with_a_commit_on_dev() -> VersionStore:
    persist = AdapterPersist(InMemoryAdapter(), StoreConfig())
    RepositoryLogic(persist).initialize("main")
    store = VersionStore(persist)
    store.create_reference(DEV)
    key = ContentKey(("ns",))
    store.commit(DEV, None, CommitMeta("on dev"), [Put(key, Namespace(elements=("ns",)))])
    return store


@pytest.mark.parametrize("how", ["merge", "transplant"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_the_validator_sees_the_planned_keys_and_its_refusal_changes_nothing(how: str, dry_run: bool) -> None:
    store = _store_with_a_commit_on_dev()
    head = store.reference(MAIN).hash
    dev_head = store.reference(DEV).hash
    seen: list[MergeResult] = []

    def refuse(planned: MergeResult) -> None:
        seen.append(planned)
        raise Refused

    def run() -> object:
        if how == "merge":
            return store.merge(DEV, MAIN, head, dry_run=dry_run, validator=refuse)
        return store.transplant(MAIN, head, [dev_head], dry_run=dry_run, validator=refuse)

    with pytest.raises(Refused):
        run()
    (planned,) = seen
    assert list(planned.details) == [ContentKey(("ns",))]
    assert planned.effective_target_hash == head
    assert store.reference(MAIN).hash == head


@pytest.mark.parametrize("how", ["merge", "transplant"])
def test_a_validator_that_passes_lets_the_change_land(how: str) -> None:
    store = _store_with_a_commit_on_dev()
    head = store.reference(MAIN).hash
    calls: list[MergeResult] = []
    if how == "merge":
        result = store.merge(DEV, MAIN, head, validator=calls.append)
    else:
        result = store.transplant(MAIN, head, [store.reference(DEV).hash], validator=calls.append)
    assert len(calls) == 1
    assert result.applied
    assert store.reference(MAIN).hash == result.resultant_target_hash != head
