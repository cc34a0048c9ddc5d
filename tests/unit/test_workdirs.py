"""No run leaves a temporary directory behind: not a failed start, not an adapter's scratch store,
not a run stopped by SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conformance.examples.toy_sqlite import ToySqliteFactory

LOCHKIT = str(Path(sys.executable).with_name("lochkit"))


def _run(argv: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)


def test_a_server_that_cannot_start_leaves_no_directory(tmp_path: Path) -> None:
    done = _run([LOCHKIT, "servers", "start", "scylladb"], tmp_path)
    assert done.returncode == 1
    assert "ScyllaDB cannot be installed" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_command_whose_server_cannot_be_provisioned_leaves_no_directory(tmp_path: Path) -> None:
    done = _run([LOCHKIT, "generate", "--backend", "cockroachdb", "-n", "1"], tmp_path)
    assert done.returncode != 0
    assert list(tmp_path.iterdir()) == []


def test_a_work_directory_left_by_an_error_is_removed_at_exit(tmp_path: Path) -> None:
    script = "from provisioning.workdir import make_workdir\nmake_workdir('x')\nraise SystemExit(3)\n"
    done = _run([sys.executable, "-c", script], tmp_path)
    assert done.returncode == 3
    assert list(tmp_path.iterdir()) == []


def test_the_toy_adapters_scratch_store_goes_with_it() -> None:
    adapter = ToySqliteFactory().create()
    scratch = adapter._scratch_dir
    assert scratch is not None
    assert scratch.exists()
    adapter.close()
    assert not scratch.exists()


SLOW_TEST = """
import time
from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    area = "probe.area"

    def test_runs_long(self, persist):
        print("started", flush=True)
        time.sleep(60)
"""


def test_a_run_stopped_by_sigterm_tears_down_its_backends(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_slow.py").write_text(SLOW_TEST)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-s", "-p", "no:cacheprovider", "--backend", "rocksdb", str(tests)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if "started" in line:
            break
    assert list(scratch.glob("lochkit-rocksdb-*"))  # the pool's work directory, while it runs
    process.send_signal(signal.SIGTERM)
    out = process.communicate(timeout=60)[0]
    assert "KeyboardInterrupt" in out
    deadline = time.monotonic() + 30
    while list(scratch.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert list(scratch.iterdir()) == []
