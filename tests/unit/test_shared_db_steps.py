"""The shared-database scenario's writing steps and its comparison, on lochkit's in-memory store:
each step leaves the references and keys the scenario expects, and Facts tells two views apart."""

from __future__ import annotations

from backends.inmemory import InMemoryBackendFactory
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.opening import open_persist
from persist_spi.versionstore import CommitMeta, Put
from persist_spi.versionstore.store import VersionStore
from reliability.shared_db.facts import gather
from reliability.shared_db.runner import table
from reliability.shared_db.scenario import FAILED, PASSED, Outcome
from reliability.shared_db.steps import DIFFS, MAIN, key, lochkit_writes, nessie_continues, nessie_writes
from reliability.shared_db.steps import table as iceberg_table


def _store() -> VersionStore:
    adapter = InMemoryBackendFactory().create(options={"layout": "nessie"})
    adapter.setup_schema()
    persist = open_persist(adapter, StoreConfig(), object_cache=False)
    RepositoryLogic(persist).initialize("main")
    return VersionStore(persist)


def test_the_steps_leave_the_references_and_keys_the_scenario_expects() -> None:
    store = _store()
    assert nessie_writes(store) == 6
    after_nessie = gather(store, DIFFS)
    assert set(after_nessie.references) == {"main", "dev", "v1"}
    assert after_nessie.references["v1"][1] == after_nessie.references["main"][1]
    assert {"db", "db.t0", "db.t1", "db.t2", "db.t2b", "db.delta", "db.v1", "db.f1"} == set(
        after_nessie.contents["main"]
    )
    assert after_nessie.diffs["main..dev"]  # dev lacks main's t0
    assert lochkit_writes(store) == 4
    after_lochkit = gather(store, DIFFS)
    assert set(after_lochkit.references) == {"main", "lk", "v1", "v2"}
    assert "db.delta" not in after_lochkit.contents["main"]
    assert nessie_continues(store) == 4
    final = gather(store, DIFFS)
    assert set(final.references) == {"main", "fresh", "v1", "v2"}
    assert {"db.t5", "db.t6", "db.t7"} <= set(final.contents["main"])


def test_facts_tell_two_views_apart() -> None:
    store = _store()
    nessie_writes(store)
    before = gather(store, DIFFS)
    assert before.differences(gather(store, DIFFS)) == []
    store.commit(MAIN, None, CommitMeta("one more"), [Put(key("db.extra"), iceberg_table(9))])
    differences = before.differences(gather(store, DIFFS))
    assert [d.split(":")[0] for d in differences] == ["references", "logs", "contents", "diffs"]


def test_the_table_has_a_row_per_direction_with_its_result_and_commits() -> None:
    text = table(
        [
            Outcome("postgres", "nessie first", "nessie -> lochkit", PASSED, 6, "read alike"),
            Outcome("rocksdb", "nessie first", "lochkit -> nessie", FAILED, 0, "differs"),
        ]
    )
    lines = text.splitlines()
    assert lines[0].split() == ["backend", "variant", "direction", "result", "commits", "detail"]
    assert lines[1].split()[:2] == ["postgres", "nessie"]
    assert "passed" in lines[1]
    assert " 6 " in lines[1]
    assert "FAILED" in lines[2]
