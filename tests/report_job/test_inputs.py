"""Finding inputs and refusing what this version cannot read, with messages that say what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loadgen.runs.events import EVENT_SCHEMA
from loadgen.runs.synthetic import RunShape, write_run
from reports.inputs import HadoopFs, InputError, LocalFs, discover
from reports.inventory.format import INVENTORY_JSON, TABLES
from reports.loading import load_runs


def test_runs_inventories_and_reports_are_found_below_a_directory(spark: Any, tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "a", RunShape(events=10), seed=1)
    write_run(tmp_path / "runs" / "nested" / "b", RunShape(events=10), seed=2)
    (tmp_path / "inv").mkdir()
    (tmp_path / "inv" / INVENTORY_JSON).write_text('{"schema_version": 1}')
    for table in TABLES:
        (tmp_path / "inv" / f"{table}.parquet").touch()
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "ci.json").write_text('{"rocksdb": {"areas": {}}}')
    (tmp_path / "reports" / "asym.json").write_text("[]")
    # Found alike with plain Python (local inputs, before Spark starts) and through Hadoop (any URI).
    for fs in (LocalFs(), HadoopFs(spark)):
        found = discover(fs, [str(tmp_path)])
        assert sorted(f.name for f in found.runs) == ["a", "b"]
        assert [f.name for f in found.inventories] == ["inv"]
        assert [f.name for f in found.reports] == ["ci.json"]
        assert [f.name for f in found.ignored] == ["asym.json"]


def test_a_missing_input_is_named(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"does not exist; give run directories"):
        discover(HadoopFs(spark), [str(tmp_path / "nope")])


def test_the_run_json_file_itself_asks_for_its_directory(spark: Any, tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", RunShape(events=5), seed=1)
    with pytest.raises(InputError, match=r"give the directory that holds run\.json"):
        discover(LocalFs(), [str(run / "run.json")])


def test_an_unknown_run_format_version_is_refused(spark: Any, tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", RunShape(events=5), seed=1)
    doc = json.loads((run / "run.json").read_text())
    doc["schema_version"] = 2
    (run / "run.json").write_text(json.dumps(doc))
    for fs in (LocalFs(), HadoopFs(spark)):
        with pytest.raises(InputError, match=r"schema_version 2, this lochkit reads 1"):
            discover(fs, [str(run)])


def test_an_unknown_event_schema_version_is_refused(spark: Any, tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", RunShape(events=5), seed=1)
    table = pq.read_table(run / "events.parquet")
    newer = EVENT_SCHEMA.with_metadata({"lochkit.events.schema_version": "2"})
    pq.write_table(pa.Table.from_arrays(table.columns, schema=newer), run / "events.parquet")
    for fs in (LocalFs(), HadoopFs(spark)):
        with pytest.raises(InputError, match=r"event schema version '2'"):
            discover(fs, [str(run)])


def test_runs_in_paths_with_spaces_keep_their_events(spark: Any, tmp_path: Path) -> None:
    run = write_run(tmp_path / "my runs" / "run one", RunShape(events=25), seed=3)
    runs, events = load_runs(spark, HadoopFs(spark), discover(LocalFs(), [str(run)]).runs)
    assert events.count() == 25
    assert [r["run_id"] for r in runs.collect()] == ["run one"]
