"""The database floor of ``lochkit bench``: which adapter calls it makes, in which repository, and
that it leaves nothing behind. Speed is printed by the benchmark, never judged here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

import pytest

from backends.inmemory.adapter import InMemoryAdapter
from loadgen.commit_bench import Figures, Results, floor_table, markdown
from loadgen.db_floor import OPERATIONS, Floor, FloorMeasurementError, OperationFigures, measure_floor, share
from loadgen.nessie_compare import Comparison, Row, floor_ratios
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.live_objects import LiveObjRow
from persist_spi.logic.ownership import is_scratch

OTHER = "someone-elses-repository"


class Recording(InMemoryAdapter):
    """Remembers every contract call and the repository it named."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        self.erased: list[list[str]] = []

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        self.calls.append(("insert_ref", repo))
        return super().insert_ref(repo, row)

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        self.calls.append(("update_ref", repo))
        return super().update_ref(repo, expected, new)

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        self.calls.append(("fetch_refs", repo))
        return super().fetch_refs(repo, names)

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        self.calls.append(("fetch_objs", repo))
        return super().fetch_objs(repo, ids)

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        self.calls.append(("insert_objs", repo))
        return super().insert_objs(repo, rows)

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        self.calls.append(("upsert_objs", repo))
        super().upsert_objs(repo, rows)

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        self.calls.append(("delete_objs", repo))
        super().delete_objs(repo, ids)

    def erase_repositories(self, repos: Collection[str]) -> None:
        self.erased.append(list(repos))
        super().erase_repositories(repos)


def _with_other_repository(
    adapter: InMemoryAdapter,
) -> tuple[dict[tuple[str, str], RefRow], dict[tuple[str, bytes], ObjRow | LiveObjRow]]:
    """Another repository's rows, stored before the floor runs; returns a copy of the store."""
    adapter.insert_ref(OTHER, RefRow("refs/heads/main", b"\1" * 32, False, 1, None, b""))
    adapter.insert_objs(OTHER, [ObjRow(b"\2" * 32, "c", None, b"data", 1)])
    return dict(adapter._refs), dict(adapter._objs)


def test_the_floor_makes_each_call_as_often_as_asked_in_its_own_scratch_repository() -> None:
    adapter = Recording()
    refs_before, objs_before = _with_other_repository(adapter)
    adapter.calls.clear()

    floor = measure_floor(adapter, operations=7, warmup=3)

    assert {name: f.count for name, f in floor.figures.items()} == {"put": 7, "read": 7, "cas": 7}
    assert all(f.per_second > 0 and 0 < f.percentile(50) <= f.percentile(99) for f in floor.figures.values())
    # Warm-up calls are made but not measured; the reference is created once.
    assert Counter(name for name, _ in adapter.calls) == {
        "insert_objs": 10,
        "fetch_objs": 10,
        "insert_ref": 1,
        "update_ref": 10,
    }
    repositories = {repo for _, repo in adapter.calls}
    assert len(repositories) == 1
    (scratch,) = repositories
    assert is_scratch(scratch)
    assert "bench-floor" in scratch
    # Erased afterwards, that repository alone; the other one's rows are as they were.
    assert adapter.erased == [[scratch]]
    assert adapter._refs == refs_before
    assert adapter._objs == objs_before


def test_a_failed_measurement_still_erases_what_it_wrote() -> None:
    class LosesEverySwap(Recording):
        def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
            return False

    adapter = LosesEverySwap()
    refs_before, objs_before = _with_other_repository(adapter)
    with pytest.raises(FloorMeasurementError, match="update_ref failed on a reference no one else writes"):
        measure_floor(adapter, operations=5, warmup=0)
    assert len(adapter.erased) == 1
    assert adapter._refs == refs_before
    assert adapter._objs == objs_before


def test_a_floor_bounded_by_seconds_measures_until_the_call_time_is_spent() -> None:
    floor = measure_floor(InMemoryAdapter(), seconds=0.01, warmup=0)
    for figures in floor.figures.values():
        assert sum(figures.latencies_ms) >= 10
        assert figures.count > 1


def _floor(cas_ms: float) -> Floor:
    return Floor({name: OperationFigures(name, OPERATIONS[name], [cas_ms] * 4) for name in OPERATIONS})


def test_the_benchmark_table_gives_each_scenario_its_share_of_the_cas_floor() -> None:
    # 200 commits/s beside 1,000 compare-and-swaps/s (1 ms each): 0.2 of the floor.
    results = Results(
        scenarios=[Figures("1-put commits", 200, 1.0, [5.0] * 200, cache=True)], floor=_floor(1.0)
    )
    text = markdown("inmemory", results)
    assert text.splitlines()[0] == (
        "| scenario | inmemory, cache: commits/s (p50 / p99 ms) | cache: % of CAS floor |"
    )
    assert "| 1-put commits | 200 (5.00 / 5.0) | 20 % |" in text
    assert floor_table({"inmemory": results.floor}) in text  # type: ignore[dict-item]
    assert "| inmemory: compare-and-swap a reference | 1,000 | 1.000 | 1.000 |" in text
    document = results.document("inmemory")
    assert document["results"] == [results.scenarios[0].as_dict() | {"cas_floor_ratio": 0.2}]
    assert document["floor"]["cas"]["ops_per_s"] == 1000.0  # type: ignore[index]


def test_the_side_by_side_comparison_gives_both_sides_share_of_the_cas_floor() -> None:
    comparison = Comparison(floors={"postgres": _floor(0.125)})
    comparison.rows = [
        Row("postgres", 1, True, nessie=[400.0], lochkit=[600.0, 800.0, 700.0], cas_floor=8000.0),
        Row("cassandra", 1, True, lochkit=[100.0], nessie_missing="not published"),
    ]
    text = floor_ratios(comparison)
    assert "| postgres | 1-put | on | 8,000 | 5.0 % | 8.8 % |" in text
    assert "| cassandra | 1-put | on | n/a | n/a | n/a |" in text
    assert "| postgres: compare-and-swap a reference | 8,000 | 0.125 | 0.125 |" in text
    assert comparison.rows[0].as_dict()["lochkit_to_cas_floor"] == 700 / 8000


@pytest.mark.parametrize(
    ("ratio", "shown"),
    [(None, "n/a"), (0.00047, "0.047 %"), (0.0123, "1.2 %"), (0.4, "40 %"), (1.05, "105 %")],
)
def test_a_share_of_the_floor_keeps_two_significant_digits_when_small(
    ratio: float | None, shown: str
) -> None:
    assert share(ratio) == shown
