"""Conformance reports as ``--lochkit-report`` writes them (through ConformanceReport itself), read
the way the job reads them: the matrix, new failures, fixed areas and fixed deviations."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conformance.report import ConformanceReport
from reports import conformance_metrics as conf
from reports.inputs import HadoopFs, LocalFs, discover
from reports.loading import load_conformance


def write_report(path: Path, results: list[tuple[str, str, str, str, str | None]], mtime: int) -> None:
    report = ConformanceReport()
    for backend, area, outcome, test_id, reason in results:
        report.record(backend, area, outcome, test_id, reason)
    report.write(path)
    os.utime(path, (mtime, mtime))


@pytest.fixture(scope="module")
def loaded(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, list[str]]:
    root = tmp_path_factory.mktemp("conformance")
    passing = [("rocksdb", "persist.objects", "passed", f"t{i}", None) for i in range(3)]
    write_report(
        root / "monday.json",
        [
            *passing,
            ("postgres", "persist.objects", "passed", "t1", None),
            ("postgres", "persist.references", "failed", "t_cas", None),
            ("mongodb", "persist.concurrency", "xfailed", "test_multi_process", "FerretDB CAS is not atomic"),
            ("mongodb", "persist.concurrency", "passed", "t2", None),
        ],
        1_700_000_000,
    )
    write_report(
        root / "tuesday.json",
        [
            *passing[:2],
            ("rocksdb", "persist.objects", "failed", "t2", None),
            ("postgres", "persist.objects", "passed", "t1", None),
            ("postgres", "persist.references", "passed", "t_cas", None),
            ("mongodb", "persist.concurrency", "passed", "test_multi_process", None),
            ("mongodb", "persist.concurrency", "skipped", "t2", "no second process"),
        ],
        1_700_086_400,
    )
    (root / "settings.json").write_text(json.dumps({"not": "a report"}))
    inputs = discover(LocalFs(), [str(root)])
    assert sorted(f.name for f in inputs.reports) == ["monday.json", "tuesday.json"]
    counts, not_passed = load_conformance(spark, HadoopFs(spark), inputs.reports)
    return counts, not_passed, [f.name for f in inputs.ignored]


def test_a_json_file_that_is_no_report_is_left_out_and_named(loaded: tuple[Any, Any, list[str]]) -> None:
    assert loaded[2] == ["settings.json"]


def test_the_matrix_shows_the_latest_report_per_backend(loaded: tuple[Any, Any, list[str]]) -> None:
    counts, _, _ = loaded
    cells = {(r["backend"], r["area"]): r for r in conf.latest_matrix(counts).collect()}
    assert cells[("rocksdb", "persist.objects")]["report_id"] == "tuesday"
    assert cells[("rocksdb", "persist.objects")]["cell"] == "2, 1 failed"
    assert cells[("mongodb", "persist.concurrency")]["cell"] == "1 + 1s"
    assert cells[("postgres", "persist.references")]["cell"] == "1"


def test_history_calls_out_new_failures_and_fixed_areas(loaded: tuple[Any, Any, list[str]]) -> None:
    counts, _, _ = loaded
    changes = {
        (r["report_id"], r["backend"], r["area"]): r["change"]
        for r in conf.history(counts).collect()
        if r["change"]
    }
    assert changes == {
        ("monday", "postgres", "persist.references"): "new failure",
        ("tuesday", "rocksdb", "persist.objects"): "new failure",
        ("tuesday", "postgres", "persist.references"): "fixed",
    }


def test_a_deviation_that_passes_in_the_next_report_is_listed_as_fixed(
    loaded: tuple[Any, Any, list[str]],
) -> None:
    counts, not_passed, _ = loaded
    (row,) = conf.fixed_deviations(counts, not_passed).collect()
    assert (row["backend"], row["test_id"], row["deviation_in"], row["fixed_in"]) == (
        "mongodb",
        "test_multi_process",
        "monday",
        "tuesday",
    )
    assert row["reason"] == "FerretDB CAS is not atomic"


def test_cell_text_names_skips_deviations_and_failures(spark: Any) -> None:
    df = spark.createDataFrame(
        [(475, 3, 1, 2, 0, 1)],
        "passed LONG, skipped LONG, xfailed LONG, failed LONG, error LONG, xpassed LONG",
    )
    (row,) = df.select(conf.cell_text().alias("c")).collect()
    assert row["c"] == "475 + 3s + 1x, 2 failed, 1 fixed deviations (xpassed)"
