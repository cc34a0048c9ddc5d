"""The ``lochkit`` command: what it prints and the exit codes scripts rely on."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lochkit.cli import main


def lochkit(*args: str) -> subprocess.CompletedProcess[str]:
    # A child process: `lochkit conformance` runs its own pytest session.
    return subprocess.run(
        [sys.executable, "-m", "lochkit", *args], capture_output=True, text=True, timeout=300
    )


def test_backends_lists_capabilities_and_why_one_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    assert "rocksdb" in out
    assert "postgres" in out
    assert "no multi_process: RocksDB holds an exclusive LOCK file" in out


def test_backends_json_is_machine_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["backends", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["inmemory"]["installed"] is True
    assert listed["dynamodb"]["capabilities"]["hard_object_size_limit"] < 400 * 1024


def test_conformance_prints_a_per_area_summary_and_exits_zero() -> None:
    done = lochkit("conformance", "--backend", "inmemory", "-k", "TestPersistReferences")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lochkit conformance summary" in done.stdout
    assert "persist.references" in done.stdout


def test_conformance_selecting_nothing_is_a_failure() -> None:
    done = lochkit("conformance", "--backend", "inmemory", "-k", "no_such_test_anywhere")
    assert done.returncode == 5
    assert "no conformance test was selected" in done.stderr


def test_conformance_with_an_unknown_backend_names_the_known_ones() -> None:
    done = lochkit("conformance", "--backend", "postgress")
    assert done.returncode == 4
    assert "No backend named 'postgress'" in done.stderr
    assert "postgres" in done.stderr


def test_conformance_against_an_unreachable_server_fails_and_hides_the_password() -> None:
    done = lochkit(
        "conformance",
        "--backend",
        "postgres",
        "--url",
        "postgresql://lochkit:s3cret-pw@127.0.0.1:1/db",
        "-k",
        "TestPersistReferences",
    )
    assert done.returncode == 1
    assert "postgresql://lochkit@127.0.0.1:1/db" in done.stdout
    assert "cannot reach the server" in done.stdout
    assert "s3cret-pw" not in done.stdout + done.stderr


def test_servers_start_with_an_unknown_name_is_refused() -> None:
    done = lochkit("servers", "start", "oracle")
    assert done.returncode == 2
    assert "no provisioner for 'oracle'" in done.stderr
