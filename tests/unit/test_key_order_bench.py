"""The key-order micro-benchmark runs and prints a figure for every operation and key set; it is a
script that prints figures, so nothing here judges speed."""

from __future__ import annotations

import pytest

from loadgen.key_order_bench import main


def test_every_operation_is_measured_for_every_key_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--keys", "300", "--seconds", "0.01"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["operation", "ascii", "bmp-below-d800", "mixed-planes"]
    rows = lines[2:]
    assert len(rows) == 7
    for row in rows:
        figures = row.rsplit(maxsplit=3)[1:]
        assert all(float(f) > 0 for f in figures), row
