"""``lochkit servers start`` against the real local PostgreSQL: the URL it prints works when pasted,
so does the environment file, it says when it stops, and it leaves no directory behind."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("psycopg")

import psycopg

LOCHKIT = str(Path(sys.executable).with_name("lochkit"))


@dataclass
class Started:
    process: subprocess.Popen[str]
    printed: list[str]
    tmp: Path


@pytest.fixture
def own_tmpdir() -> Iterator[Path]:
    """A TMPDIR of its own that the 'postgres' account can traverse (the server runs as it under
    root), unlike pytest's private tmp_path."""
    path = Path(tempfile.mkdtemp(prefix="lochkit-test-servers-"))
    path.chmod(0o711)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def started(own_tmpdir: Path) -> Iterator[Started]:
    """``lochkit servers start postgres`` with its own TMPDIR, up to "Press Ctrl-C"."""
    env = {**os.environ, "TMPDIR": str(own_tmpdir)}
    process = subprocess.Popen(
        [LOCHKIT, "servers", "start", "postgres"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    printed: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        printed.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C"):
            break
    try:
        yield Started(process, printed, own_tmpdir)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(60)


def test_start_prints_a_url_that_works_as_pasted_and_stop_removes_everything(started: Started) -> None:
    # One server for the whole story: starting one costs seconds on a shared machine.
    url = next(line for line in started.printed if line.startswith("URL: ")).removeprefix("URL: ")
    assert "***" not in url
    assert re.fullmatch(r"postgresql://lochkit@127\.0\.0\.1:\d+/lochkit\?passfile=\S+", url), url
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("lochkit",)
    assert f"  lochkit conformance --backend postgres --url '{url}'" in started.printed

    # The environment file sets the variable lochkit reads (LOCHKIT_POSTGRES_URL) to a working URL.
    env_file = next(line for line in started.printed if line.startswith("  or: . ")).split()[2]
    done = subprocess.run(
        ["sh", "-c", f'. {env_file} && printf %s "$LOCHKIT_POSTGRES_URL"'], capture_output=True, text=True
    )
    with psycopg.connect(done.stdout) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == ("lochkit",)

    # Stopping says so and leaves nothing behind.
    assert list(started.tmp.glob("lochkit-postgres-*"))
    started.process.send_signal(signal.SIGTERM)
    out, err = started.process.communicate(timeout=60)
    assert started.process.returncode == 0
    assert re.fullmatch(r"postgres: stopped; removed \S+/lochkit-postgres-\w+", out.strip().splitlines()[-1])
    assert list(started.tmp.iterdir()) == []
    # Progress went to stderr: one line per step that took a while, nothing else.
    assert all(re.search(r": done in [\d.]+ s$", line) for line in err.splitlines()), err
