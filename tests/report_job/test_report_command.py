"""``lochkit report`` with a user's mistakes: one clear line and exit code 2, never a stack trace;
inputs that cannot be used are found before Spark starts (which takes seconds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loadgen.runs.synthetic import RunShape, write_run
from lochkit.cli import main as lochkit

ACCEPTED = "give run directories (holding run.json), inventory directories (holding inventory.json)"


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails the test if the command starts Spark."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("Spark was started for an input that could be refused before")

    monkeypatch.setattr("reports.session.spark_session", refuse)


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert lochkit(["report", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_malformed_projection_is_refused_before_spark_starts(
    no_spark: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(capsys, str(tmp_path), "--out", str(tmp_path / "o"), "--project", "lots")
    assert "RATE/UNIT:RETENTION, e.g. 10/s:30d" in err


def test_a_missing_input_is_named_before_spark_starts(
    no_spark: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(capsys, str(tmp_path / "nowhere"), "--out", str(tmp_path / "o"))
    assert "nowhere does not exist" in err
    assert ACCEPTED in err


def test_a_directory_without_inputs_says_what_an_input_is(
    no_spark: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    err = _refused(capsys, str(tmp_path / "empty"), "--out", str(tmp_path / "o"))
    assert "a run directory holds run.json" in err


def test_a_json_file_that_is_no_report_is_refused_with_what_and_why(
    no_spark: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What `lochkit experiment asymmetric --json` writes: one object per writer.
    asym = tmp_path / "asym.json"
    asym.write_text(json.dumps([{"backend": "rocksdb", "writer": "w0-1put", "commits": 912}]))
    err = _refused(capsys, str(asym), "--out", str(tmp_path / "o"))
    assert f"Input {asym} is not a conformance report: it holds a list" in err
    assert ACCEPTED in err
    assert not (tmp_path / "o").exists()


def test_a_file_that_is_not_json_is_refused(
    no_spark: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    err = _refused(capsys, str(broken), "--out", str(tmp_path / "o"))
    assert "broken.json is not a conformance report: not valid JSON" in err


def test_a_directory_with_only_other_json_names_what_it_left_out(
    no_spark: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "asym.json").write_text("[]")
    err = _refused(capsys, str(tmp_path / "results"), "--out", str(tmp_path / "o"))
    assert "No load run, inventory or conformance report" in err
    assert "1 JSON file(s) there are no conformance report: asym.json" in err


def test_a_run_of_an_unknown_format_version_is_refused_before_spark_starts(
    no_spark: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = write_run(tmp_path / "runs" / "r", RunShape(events=5), seed=1)
    doc = json.loads((run / "run.json").read_text())
    doc["schema_version"] = 2
    (run / "run.json").write_text(json.dumps(doc))
    err = _refused(capsys, str(tmp_path / "runs"), "--out", str(tmp_path / "o"))
    assert "schema_version 2, this lochkit reads 1" in err


def test_an_unknown_baseline_run_is_named(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path / "runs" / "only", RunShape(events=20), seed=1)
    err = _refused(capsys, str(tmp_path / "runs"), "--out", str(tmp_path / "o"), "--baseline", "other")
    assert "--baseline other is not among the runs" in err
