"""``--markdown-out FILE`` on the commands that measure: a run writes its figures as a documentation
snippet, and a destination that cannot be written is a usage error before anything is measured."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import snippets


def test_a_conformance_run_writes_its_row_of_the_matrix(tmp_path: Path) -> None:
    out = tmp_path / "row.md"
    suites = ["conformance", "--backend", "inmemory", "-k", "TestPersistReferences"]
    run = [sys.executable, "-m", "lochkit", *suites]
    done = subprocess.run([*run, "--markdown-out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    body = snippets.body(out.read_text())
    assert re.search(r"^\| `inmemory` \| — \| embedded \| \d+ \|", body, re.M), body
    assert "A cell shows passed tests" in body
    assert "backend inmemory, -k 'TestPersistReferences'" in out.read_text()


@pytest.mark.parametrize(
    "command",
    [
        ["conformance", "--backend", "inmemory"],
        ["conformance", "--self-check"],
        ["torture", "--profile", "ci", "--backend", "inmemory"],
        ["bench", "--backend", "inmemory"],
        ["bench", "--compare-nessie", "--backend", "inmemory"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_a_destination_that_cannot_be_written_is_a_usage_error_before_anything_runs(
    tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "no-such-directory" / "figures.md"
    done = subprocess.run(
        [sys.executable, "-m", "lochkit", *command, "--markdown-out", str(missing)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert "--markdown-out" in done.stderr
    assert "its directory does not exist" in done.stderr
    assert "Traceback" not in done.stderr
