"""The differential state machine against a real Nessie server: a short fixed-seed run (CI runs it;
``lochkit compare-nessie`` runs long ones). Any disagreement that no registered difference explains
fails, with the shrunk sequence of steps that shows it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.differential.runner import format_report, run_differential
from conformance.differential.sides import lochkit_side, nessie_side
from nessie_client import NessieRestClient

#: Step kinds the run must reach, or it proves little.
CORE_STEPS = {"commit", "merge", "transplant", "create-reference", "assign", "entries", "diff", "log"}


def test_lochkit_and_nessie_agree_on_random_operations(
    nessie_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with NessieRestClient(nessie_server) as client:
        report = run_differential(
            lochkit_side,
            lambda: nessie_side(client, nessie_server),
            examples=12,
            steps=30,
            seed_value=13,
            shrink=False,  # shrinking against a server can take minutes: CI shows the sequence as found
        )
    with capsys.disabled():
        print("\n" + format_report(report))
    assert {kind for kind, _ in report.outcomes} >= CORE_STEPS
    assert report.steps > 250


def test_compare_nessie_command(nessie_server: str, tmp_path: Path) -> None:
    """``lochkit compare-nessie`` against a running server: a short run agrees, prints its report
    and writes it as JSON."""
    report_file = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lochkit",
            "compare-nessie",
            "--uri",
            nessie_server,
            "--examples",
            "2",
            "--steps",
            "8",
            "--seed",
            "3",
            "--json",
            str(report_file),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "steps compared" in done.stdout
    report = json.loads(report_file.read_text())
    assert (report["agreed"], report["seed"], report["examples"]) == (True, 3, 2)
    assert report["steps"] > 0
