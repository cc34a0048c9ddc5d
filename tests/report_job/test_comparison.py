"""Comparing runs like with like: a run is measured only against runs of its own group (same
backend, target, command or scenario, policy, writers and puts per commit), against that group's
baseline; a group of one run has no comparison. Checked through ``lochkit report`` on run
directories of known shape, and on hand-made summaries."""

from __future__ import annotations

import contextlib
import datetime
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from loadgen.runs.synthetic import RunShape, write_run
from lochkit.cli import main as lochkit
from reports import comparison as cmp

T0 = datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)


def _at(hours: int) -> datetime.datetime:
    return T0 + datetime.timedelta(hours=hours)


@pytest.fixture(scope="module")
def unlike_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One single-writer run first (as `lochkit generate` leaves), then two-writer runs of another
    scenario: two like ones (the later one at a third of the throughput) and one of another policy."""
    root = tmp_path_factory.mktemp("unlike") / "runs"
    write_run(
        root / "a-generate", RunShape(2000, writers=1, duration_s=10, scenario="generate", start=_at(0)), 1
    )
    write_run(root / "b-asym", RunShape(2000, writers=2, duration_s=10, start=_at(1)), 2)
    write_run(root / "c-asym-slower", RunShape(2000, writers=2, duration_s=30, start=_at(2)), 3)
    write_run(
        root / "d-asym-coordinated",
        RunShape(2000, writers=2, duration_s=10, policy="coordinated", start=_at(3)),
        4,
    )
    return root


@dataclass
class Report:
    runs: dict[str, dict[str, Any]]
    printed: str
    page: str


def _report(runs: Path, out: Path, *extra: str) -> Report:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert lochkit(["report", str(runs), "--out", str(out), *extra]) == 0
    rows = pq.read_table(out / "tables" / "runs_vs_baseline.parquet").to_pylist()
    return Report({r["run_id"]: r for r in rows}, printed.getvalue(), (out / "report.html").read_text())


@pytest.fixture(scope="module")
def default_report(spark: Any, unlike_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Report:
    return _report(unlike_runs, tmp_path_factory.mktemp("unlike-report") / "report")


def test_only_runs_of_the_same_group_are_compared(default_report: Report) -> None:
    runs = default_report.runs
    flagged = sorted(run for run, r in runs.items() if r["regression"])
    assert flagged == ["c-asym-slower"]
    assert runs["c-asym-slower"]["baseline_run"] == "b-asym"
    b, c = runs["b-asym"]["commits_per_s"], runs["c-asym-slower"]["commits_per_s"]
    assert runs["c-asym-slower"]["commits_per_s_change_pct"] == pytest.approx((c / b - 1) * 100)
    assert runs["c-asym-slower"]["commits_per_s_change_pct"] < -50
    assert runs["b-asym"]["baseline_run"] == "b-asym"
    # Groups of one run: nothing to compare with.
    for alone in ("a-generate", "d-asym-coordinated"):
        assert runs[alone]["baseline_run"] is None
        assert runs[alone]["commits_per_s_change_pct"] is None
    assert (runs["a-generate"]["writers"], runs["a-generate"]["puts_per_commit"]) == (1, "1")
    assert (runs["b-asym"]["writers"], runs["b-asym"]["puts_per_commit"]) == (2, "1,10")
    # Numbered in the order of each group's first run.
    assert [runs[r]["group"] for r in ("a-generate", "b-asym", "c-asym-slower", "d-asym-coordinated")] == [
        1,
        2,
        2,
        3,
    ]


def test_a_chosen_baseline_applies_to_its_own_group_only(
    spark: Any, unlike_runs: Path, tmp_path: Path
) -> None:
    runs = _report(unlike_runs, tmp_path / "report", "--baseline", "c-asym-slower").runs
    assert runs["b-asym"]["baseline_run"] == "c-asym-slower"
    b, c = runs["b-asym"]["commits_per_s"], runs["c-asym-slower"]["commits_per_s"]
    assert runs["b-asym"]["commits_per_s_change_pct"] == pytest.approx((b / c - 1) * 100)
    assert runs["b-asym"]["commits_per_s_change_pct"] > 150  # three times as fast, give or take
    assert not any(r["regression"] for r in runs.values())
    assert runs["a-generate"]["baseline_run"] is None
    assert runs["d-asym-coordinated"]["baseline_run"] is None


RULE = "compared only with runs of the same backend, target, scenario, policy, writers and puts per commit"


def test_the_page_and_the_command_state_the_rule(default_report: Report) -> None:
    assert RULE in default_report.printed
    assert "4 run(s) in 3 group(s) of like runs; 1 regression(s): c-asym-slower" in default_report.printed
    assert RULE in default_report.page


def test_regressions_and_starved_writers_have_separate_marks_and_legends(default_report: Report) -> None:
    page = default_report.page
    assert page.count('<tr class="regression">') == 2  # c-asym-slower in the runs table, its group's row
    # The synthetic 10-put writers time out now and then: starved, marked in their writers' tables.
    assert '<tr class="starved">' in page
    assert 'class="flagged"' not in page
    legend = page[page.index('<ul class="legend">') : page.index("</ul>", page.index('<ul class="legend">'))]
    assert '<span class="regression">regression</span>' in legend
    assert '<span class="starved">starved</span>' in legend


SUMMARY = (
    "run_id STRING, backend STRING, target STRING, scenario STRING, policy STRING, writers LONG, "
    "puts_per_commit STRING, lochkit_version STRING, started_at TIMESTAMP, commits_per_s DOUBLE, "
    "p99_ms DOUBLE"
)


def _summary(spark: Any, rows: list[tuple[Any, ...]]) -> Any:
    return spark.createDataFrame(rows, SUMMARY)


def test_each_group_has_its_own_earliest_run_as_baseline(spark: Any) -> None:
    rows = [
        ("g1", "rocksdb", "lochkit", "generate", "nessie", 1, "1", "1", _at(0), 600.0, 5.0),
        ("g2", "rocksdb", "lochkit", "generate", "nessie", 1, "1", "1", _at(5), 500.0, 5.0),
        ("p1", "postgres", "lochkit", "generate", "nessie", 1, "1", "1", _at(1), 100.0, 9.0),
        ("p2", "postgres", "lochkit", "generate", "nessie", 1, "1", "1", _at(2), 150.0, 9.0),
        ("n1", "rocksdb", "nessie", "generate", "nessie", 1, "1", "1", _at(3), 50.0, 50.0),
        ("w5", "rocksdb", "lochkit", "generate", "nessie", 1, "5", "1", _at(4), 60.0, 50.0),
    ]
    got = {
        r["run_id"]: r
        for r in cmp.against_baseline(cmp.with_groups(_summary(spark, rows)), None, 10.0).collect()
    }
    assert {k: v["baseline_run"] for k, v in got.items()} == {
        "g1": "g1",
        "g2": "g1",
        "p1": "p1",
        "p2": "p1",
        "n1": None,  # another target: a Nessie server, not lochkit in-process
        "w5": None,  # five puts per commit
    }
    assert got["g2"]["commits_per_s_change_pct"] == pytest.approx(-16.67, abs=0.01)
    assert got["g2"]["regression"] is True
    assert got["p2"]["regression"] is False
    assert got["n1"]["regression"] is False
    assert got["g1"]["group"] == got["g2"]["group"] != got["p1"]["group"]
