"""What ``lochkit report`` prints in a fresh process (its own JVM): nothing but its result on a
normal run (no JVM or Spark start-up warnings), while real errors from Spark stay visible."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from loadgen.runs.synthetic import RunShape, write_run


def _report(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run(
        [sys.executable, "-m", "lochkit", "report", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )


def test_a_normal_run_prints_no_start_up_warnings(tmp_path: Path) -> None:
    write_run(tmp_path / "runs" / "r", RunShape(events=200), seed=1)
    done = _report(str(tmp_path / "runs"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("report written to ")


def test_an_error_inside_spark_is_still_shown(tmp_path: Path) -> None:
    """events.parquet whose footer is intact (so it passes the checks before Spark starts) but whose
    data is damaged: Spark's error reaches the console."""
    run = write_run(tmp_path / "runs" / "r", RunShape(events=2000), seed=1)
    events = run / "events.parquet"
    footer_start = pq.ParquetFile(events).metadata.serialized_size + 8
    data = bytearray(events.read_bytes())
    for i in range(4, len(data) - footer_start):
        data[i] = 0xFF
    events.write_bytes(bytes(data))
    done = _report(str(tmp_path / "runs"), "--out", str(tmp_path / "out"))
    assert done.returncode != 0
    assert "ERROR" in done.stderr
    assert "Exception" in done.stderr
