"""``lochkit report`` with a user's mistakes: one clear line and exit code 2, never a stack trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loadgen.runs.synthetic import RunShape, write_run
from lochkit.cli import main as lochkit


def test_a_malformed_projection_is_refused_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert lochkit(["report", str(tmp_path), "--out", str(tmp_path / "o"), "--project", "lots"]) == 2
    assert "RATE/UNIT:RETENTION, e.g. 10/s:30d" in capsys.readouterr().err


def test_a_missing_input_is_named(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert lochkit(["report", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "nowhere does not exist" in err
    assert "Traceback" not in err


def test_a_directory_without_inputs_says_what_an_input_is(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert lochkit(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2
    assert "a run directory holds run.json" in capsys.readouterr().err


def test_an_unknown_baseline_run_is_named(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_run(tmp_path / "runs" / "only", RunShape(events=20), seed=1)
    code = lochkit(["report", str(tmp_path / "runs"), "--out", str(tmp_path / "o"), "--baseline", "other"])
    assert code == 2
    assert "--baseline other is not among the runs" in capsys.readouterr().err
