"""The ``lochkit`` command: what it prints and the exit codes scripts rely on."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lochkit.cli import main

#: The installed command, as the README runs it (``python -m lochkit`` inside the source tree would
#: also find the tree's egg-info, and pytest would warn that lochkit's modules are imported already).
LOCHKIT = str(Path(sys.executable).with_name("lochkit"))


def lochkit(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # A child process: `lochkit conformance` runs its own pytest session.
    return subprocess.run([LOCHKIT, *args], capture_output=True, text=True, timeout=timeout)


def last_lines(done: subprocess.CompletedProcess[str], count: int) -> str:
    return "\n".join(done.stdout.splitlines()[-count:])


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


def test_conformance_prints_a_per_area_summary_exits_zero_and_loads_no_unused_plugin(
    pytestconfig: pytest.Config,
) -> None:
    # -q (lochkit's) and -v (passed on to pytest) cancel out, so pytest prints its header.
    done = lochkit("conformance", "--backend", "inmemory", "-k", "TestPersistReferences", "--", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lochkit conformance summary" in done.stdout
    assert "persist.references" in done.stdout
    plugins = next(line for line in done.stdout.splitlines() if line.startswith("plugins:"))
    assert "lochkit" in plugins
    assert "locust" not in plugins  # locust's pytest plugin serves locust tests only
    assert not pytestconfig.pluginmanager.has_plugin("locust")  # nor in the project's own runs


def test_conformance_selecting_nothing_is_a_failure() -> None:
    done = lochkit("conformance", "--backend", "inmemory", "-k", "no_such_test_anywhere")
    assert done.returncode == 5
    assert "no conformance test was selected" in done.stderr


@pytest.mark.parametrize("command", ["conformance", "bench"])
def test_an_unknown_backend_is_a_usage_error_naming_the_known_ones(command: str) -> None:
    done = lochkit(command, "--backend", "postgress")
    assert done.returncode == 2, done.stderr
    assert f"lochkit {command}: error:" in done.stderr
    assert "No backend named 'postgress'" in done.stderr
    assert "postgres" in done.stderr


def test_conformance_against_an_unreachable_server_ends_with_cause_and_fix_and_hides_the_password() -> None:
    # Every test after the first fails at once, in one character of the progress row.
    url = "postgresql://lochkit:s3cret-pw@127.0.0.1:1/db"
    done = lochkit("conformance", "--backend", "postgres", "--url", url, "-k", "TestPersistReferences")
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert "s3cret-pw" not in out
    assert "Traceback" not in out
    assert "During handling" not in out
    assert len(done.stdout.splitlines()) < 60, done.stdout
    tail = last_lines(done, 4)
    assert re.search(r"postgres could not be set up, so its \d+ tests failed without running:", tail), tail
    assert "  postgres at postgresql://lochkit@127.0.0.1:1/db: cannot reach the server" in tail
    assert "fix: Check that it is running" in tail
    assert "pass --url postgresql://USER:PASSWORD@HOST:PORT/DATABASE (or set LOCHKIT_POSTGRES_URL)" in tail
    assert re.fullmatch(
        r"=* ?(\d+ deselected, )?1 error, \d+ blocked in [\d.]+s ?=*", done.stdout.splitlines()[-1]
    )


def test_conformance_against_an_unobtainable_backend_ends_in_seconds_with_the_fix_in_its_own_options() -> (
    None
):
    # Without Docker, CockroachDB cannot be had here; this used to take over 10 minutes.
    done = lochkit("conformance", "--backend", "cockroachdb", timeout=120)
    assert done.returncode == 1
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    assert "--backend-url" not in out  # a pytest option lochkit conformance does not take
    assert len(done.stdout.splitlines()) < 60, done.stdout
    tail = last_lines(done, 3)
    assert re.search(r"cockroachdb is not available here, so its \d+ tests failed without running:", tail)
    assert "pass --provision testcontainers" in tail
    assert "pass --url 'postgresql://root@HOST:26257/defaultdb?sslmode=disable'" in tail


def test_servers_start_with_an_unknown_name_is_refused() -> None:
    done = lochkit("servers", "start", "oracle")
    assert done.returncode == 2
    assert "no local server for 'oracle'; known: bigtable, cassandra, cockroachdb" in done.stderr


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    done = lochkit("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"lochkit {version('lochkit')}"


def _all_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser a user can reach with --help: lochkit's, each command's, and their subcommands'."""
    from lochkit.cli import build_parsers

    main_parser, commands = build_parsers(own_parsers=True)
    found = [("lochkit", main_parser)]
    for name, parser in commands.items():
        found.append((f"lochkit {name}", parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                found += [(f"lochkit {name} {sub}", p) for sub, p in action.choices.items()]
    return found


@pytest.mark.parametrize(("prog", "parser"), _all_parsers(), ids=lambda x: x if isinstance(x, str) else "")
def test_help_explains_every_option_with_its_default_and_no_markup(
    prog: str, parser: argparse.ArgumentParser
) -> None:
    text = parser.format_help()
    for marker in ("``", ":class:", ":func:", ":mod:", "**"):
        assert marker not in text, f"{prog} --help shows markup {marker!r}"
    assert not re.search(r"`[^`\s]+`", text), f"{prog} --help shows `quoted` markup"
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        assert action.help, f"{prog} {action.option_strings[0]} has no help text"
        shown = parser._get_formatter()._expand_help(action)
        # Said once: a help text that states its default gets no second "(default: ...)".
        assert shown.count("(default") <= 1, (prog, action.option_strings, shown)
        flag = isinstance(action, argparse._StoreConstAction)  # on or off: the flag says which
        meaningful = action.default not in (None, False, [], argparse.SUPPRESS) and not flag
        if meaningful and action.option_strings[0] not in ("-h", "--help", "--version"):
            assert "default" in shown.lower(), (prog, action.option_strings)


def test_servers_install_without_a_name_is_a_usage_error() -> None:
    done = lochkit("servers", "install")
    assert done.returncode == 2
    assert "'install' needs a server name: one of bigtable, cassandra, cockroachdb" in done.stderr


def test_servers_install_of_a_server_that_cannot_run_here_fails_with_the_reason() -> None:
    done = lochkit("servers", "install", "cockroachdb")
    assert done.returncode == 1
    assert "CockroachDB cannot be installed" in done.stderr
    assert "run: lochkit conformance --backend cockroachdb --provision testcontainers" in done.stderr


def test_servers_list_says_per_server_what_is_installed_and_what_it_needs() -> None:
    from provisioning.registry import provisioners

    done = lochkit("servers", "list")
    assert done.returncode == 0
    firsts = {line.split()[0]: line for line in done.stdout.splitlines() if not line.startswith(" ")}
    assert set(firsts) == set(provisioners())
    for name in ("postgres", "cassandra", "dynamodb", "mongodb", "toxiproxy"):
        assert re.match(rf"{name} +(installed: \S|not installed)", firsts[name]), firsts[name]
    assert "cannot run locally: CockroachDB cannot be installed" in firsts["cockroachdb"]
    assert re.search(r"^ +needs Java 17 or newer \(a JDK\) \((found: .+|MISSING: .+)\)$", done.stdout, re.M)
    # Toxiproxy is built like FerretDB: its version once built, else the Go it needs.
    assert re.search(
        r"^toxiproxy +(installed: Toxiproxy v\d+\.\d+\.\d+ at \S+"
        r"|not installed\n +needs Go 1\.23 or newer \(builds Toxiproxy from the Go module proxy\) "
        r"\((found: .+|MISSING: .+)\))$",
        done.stdout,
        re.M,
    ), done.stdout
