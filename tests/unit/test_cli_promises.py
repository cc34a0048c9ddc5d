"""What the ``lochkit`` command promises across all its subcommands: options a command cannot use
are usage errors, one duration syntax, one name (and metavar) per concept, a quiet end when its
output is cut off, and no run directory left behind by a usage error."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lochkit.cli import main

from .test_cli import _all_parsers  # every parser of lochkit's own (scenario's: see below)

LOCHKIT = str(Path(sys.executable).with_name("lochkit"))


def lochkit(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([LOCHKIT, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as e:  # e.g. a server that started instead of refusing
        pytest.fail(f"lochkit {' '.join(args)} ran for {timeout} s instead of refusing: {e.stderr!r}")


# --- options a command cannot use ------------------------------------------------------------------

NOT_HERE = "--url does not apply to --backend inmemory"
NESSIE_OPTIONS = "-o/--nessie-option sets Nessie client options"
NO_NESSIE = "http://127.0.0.1:1/api/v2"  # nothing answers there: a refusal must come first
#: A command line (split at spaces) and what its one-line refusal says.
REFUSED = {
    "conformance --backend inmemory --url foo": NOT_HERE,
    "conformance --backend serve:inmemory --url foo": NOT_HERE,
    "generate --backend inmemory --url foo -n 1": NOT_HERE,
    "experiment asymmetric --backend inmemory --url foo --duration 1s": NOT_HERE,
    "scenario commit-to-branch --backend inmemory --url foo -t 1s": NOT_HERE,
    "serve --backend inmemory --url foo --port 19999": NOT_HERE,
    "check --backend inmemory --url foo": NOT_HERE,
    "generate --backend inmemory -o a=b -n 1": NESSIE_OPTIONS,
    "generate --backend rocksdb --nessie-option a=b -n 1": NESSIE_OPTIONS,
    f"generate --uri {NO_NESSIE} -o novalue -n 1": "Nessie option 'novalue' is not of the form key=value",
    "generate --url somewhere -n 1": "--url is the address of --backend NAME's database",
    f"generate --uri {NO_NESSIE} --backend inmemory -n 1": "--uri names a Nessie server and --backend",
    f"generate --uri {NO_NESSIE} --no-object-cache -n 1": "--no-object-cache applies to lochkit backends",
    f"generate --uri {NO_NESSIE} --repository r -n 1": "--repository names a repository of a lochkit backend",
    f"experiment asymmetric --uri {NO_NESSIE} --allow-existing-data --duration 1s": (
        "--allow-existing-data applies to lochkit backends"
    ),
    "generate --backend inmemory --token-file token -n 1": "--token-file is a Nessie server's token",
    "serve --backend inmemory --host 0.0.0.0 --port 19999": "without authentication anyone there could read",
}


@pytest.mark.parametrize(("command", "message"), REFUSED.items(), ids=list(REFUSED))
def test_options_a_command_cannot_use_are_usage_errors(command: str, message: str, tmp_path: Path) -> None:
    done = lochkit(*command.split(), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert not (tmp_path / ".lochkit").exists()  # nothing was started or written


# --- a database that cannot be reached ----------------------------------------------------------------

UNREACHABLE = "postgresql://lochkit:secret@127.0.0.1:1/lochkit?connect_timeout=2"


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "-n", "1"],
        ["experiment", "asymmetric", "--duration", "1s"],
        ["scenario", "commit-to-branch", "-t", "1s"],
        ["serve", "--port", "19998"],
        ["check"],
        ["inventory"],
        ["bench", "--commits", "1"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_database_that_cannot_be_reached_exits_5_from_every_command(
    argv: list[str], tmp_path: Path
) -> None:
    done = lochkit(*argv, "--backend", "postgres", "--url", UNREACHABLE, cwd=tmp_path)
    assert done.returncode == 5, (
        done.stdout[-2000:] + done.stderr[-2000:]
    )  # persist_spi.exit_codes.UNAVAILABLE
    assert "cannot reach the server" in done.stderr
    assert "secret" not in done.stdout + done.stderr


# --- a token the server rejects ------------------------------------------------------------------

TOKEN = "nessie-s3cret-token"


@pytest.fixture(scope="module")
def wants_another_token() -> Iterator[str]:
    """A REST server (its v2 URI) that accepts one token, not :data:`TOKEN`."""
    from backends.inmemory import InMemoryBackendFactory
    from loadgen.targets.in_process import in_process_target
    from rest_server import BackgroundServer, create_app
    from rest_server.authentication import Authentication, parse_tokens

    with in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    ) as target:
        api = target.api
        authentication = Authentication(tokens=parse_tokens("another-token someone", "test"))
        with BackgroundServer(create_app(lambda: api, authentication=authentication)) as server:
            yield server.uri


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "-n", "1"],
        ["scenario", "commit-to-branch", "-t", "1s"],
        ["compare-nessie", "--examples", "1"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_rejected_token_is_never_shown_and_the_fix_is(
    argv: list[str], wants_another_token: str, tmp_path: Path
) -> None:
    env = {**os.environ, "NESSIE_AUTHENTICATION_TOKEN": TOKEN}
    done = subprocess.run(
        [LOCHKIT, *argv, "--uri", wants_another_token],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "rejected the bearer token" in out
    assert "NESSIE_AUTHENTICATION_TOKEN environment variable or with --token-file FILE" in out
    assert "Traceback" not in out
    assert TOKEN not in out
    written = [p for p in tmp_path.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert not written


# --- one duration syntax ---------------------------------------------------------------------------

DURATION_OPTIONS = [("generate", "--duration"), ("experiment asymmetric", "--duration")]


def _option_help(prog: str, option: str) -> str:
    parser = dict(_all_parsers())[f"lochkit {prog}"]
    action = next(a for a in parser._actions if option in a.option_strings)
    return " ".join(parser._get_formatter()._expand_help(action).split())


@pytest.mark.parametrize(("prog", "option"), DURATION_OPTIONS)
def test_every_duration_option_advertises_the_forms_its_errors_list(prog: str, option: str) -> None:
    from loadgen.durations import FORMS

    assert FORMS in _option_help(prog, option)
    extra = ["--backend", "inmemory"]
    done = lochkit(*prog.split(), *extra, option, "soon")
    assert done.returncode == 2
    assert done.stderr.strip().endswith(f"{option} 'soon' is not a duration: use {FORMS}")


@pytest.mark.parametrize("duration", ["10ms", "PT0.01S", "0.01", "1ms"])
def test_generate_takes_every_duration_form(duration: str, tmp_path: Path) -> None:
    done = lochkit(
        "generate", "--backend", "inmemory", "-n", "2", "-d", duration, "--out", str(tmp_path / "r")
    )
    assert done.returncode == 0, done.stderr


def test_scenario_run_time_takes_the_same_forms_and_hands_locust_seconds() -> None:
    from lochkit.commands.scenario import locust_argv

    argv = locust_argv("commit-to-branch", ["-t", "PT1M30S"])
    assert argv[argv.index("-t") + 1] == "90s"
    assert "--run-time=3600s" in locust_argv("commit-to-branch", ["--run-time=PT1H"])
    assert "500ms" not in (argv := locust_argv("commit-to-branch", ["-t", "500ms"]))
    assert argv[argv.index("-t") + 1] == "1s"  # rounded up to locust's whole seconds
    argv = locust_argv("commit-to-branch", ["-t", "1h30m"])  # locust's own spelling goes through
    assert argv[argv.index("-t") + 1] == "1h30m"
    with pytest.raises(ValueError, match="-t 'soon' is not a duration: use 10s"):
        locust_argv("commit-to-branch", ["-t", "soon"])


# --- one name per concept --------------------------------------------------------------------------


def _metavars(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option of ``parser`` with the metavar its --help shows."""
    formatter = parser._get_formatter()
    return {
        option: formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
        for action in parser._actions
        if action.option_strings and action.nargs != 0 and action.help != argparse.SUPPRESS
        for option in action.option_strings
    }


def _scenario_metavars() -> dict[str, str]:
    """lochkit scenario's options, read in a process of their own: importing locust monkey-patches
    the standard library for gevent, which this test process must not be."""
    code = "\n".join(
        [
            "import argparse, json",
            inspect.getsource(_metavars),
            "from loadgen.scenarios.locustfile import add_arguments",
            "parser = argparse.ArgumentParser()",
            "add_arguments(parser)",
            "print(json.dumps(_metavars(parser)))",
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


#: Options whose name is shared by commands that mean different things by it.
DIFFERENT_CONCEPTS = {
    "--url": "torture takes NAME=URL pairs for several backends",
    "--writers": "report-bench counts writers; experiment lists their commit sizes",
}


def test_an_option_has_the_same_metavar_in_every_command() -> None:
    shown = [(prog, _metavars(parser)) for prog, parser in _all_parsers()]
    shown.append(("lochkit scenario NAME", _scenario_metavars()))
    seen: dict[str, dict[str, list[str]]] = {}
    for prog, metavars in shown:
        for option, metavar in metavars.items():
            if option.startswith("--") and option not in DIFFERENT_CONCEPTS:
                listed = re.sub(r"\[,.*\]$", "", metavar)  # NAME[,NAME...] is a list of NAME
                seen.setdefault(option, {}).setdefault(listed, []).append(prog)
    mixed = {option: spellings for option, spellings in seen.items() if len(spellings) > 1}
    assert mixed == {}


def test_a_repository_is_chosen_with_repository_everywhere() -> None:
    for prog, parser in _all_parsers():
        options = {o for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings}
        assert "--repository-id" not in options, prog


def test_the_old_repository_id_spelling_still_works_with_a_warning(tmp_path: Path) -> None:
    store = str(tmp_path / "db")
    assert (
        lochkit("generate", "--backend", "rocksdb", "--url", store, "-n", "1", cwd=tmp_path).returncode == 0
    )
    done = lochkit(
        "inventory",
        "--backend",
        "rocksdb",
        "--url",
        store,
        "--repository-id",
        "",
        "--out",
        str(tmp_path / "i"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "lochkit inventory: --repository-id is deprecated and will be removed; use --repository"
    )


def test_scenario_users_are_given_with_users_and_the_old_u_still_works() -> None:
    quiet = lochkit("scenario", "commit-to-branch", "--backend", "inmemory", "--dry-run")
    assert " --users 1" in quiet.stdout
    assert " -u " not in quiet.stdout
    old = lochkit("scenario", "commit-to-branch", "--backend", "inmemory", "-u", "3", "--dry-run")
    assert old.returncode == 0, old.stderr
    assert " --users 3" in old.stdout
    assert " -u " not in old.stdout
    assert old.stderr.strip() == (
        "lochkit scenario: -u is deprecated and will be removed; use --users (in lochkit, -u is --uri)"
    )


def test_scenario_is_named_once_by_its_positional_argument() -> None:
    help_text = lochkit("scenario", "commit-to-branch", "--help").stdout
    assert "--scenario" not in help_text
    done = lochkit("scenario", "commit-to-branch", "--scenario", "create-many-branches", "--dry-run")
    assert done.returncode == 2
    assert "the scenario is NAME, the first argument" in done.stderr


# --- the self-check's catalogue ---------------------------------------------------------------------


def test_self_check_lists_its_broken_adapters_with_the_guarantee_each_breaks() -> None:
    from conformance.mutants import MUTANTS

    done = lochkit("conformance", "--self-check", "--list")
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert header.split() == ["mutant", "from", "method", "guarantee", "racy"]
    assert len(rows) == len(MUTANTS)
    for mutant in MUTANTS:
        row = next(r for r in rows if r.split()[0] == mutant.name)
        assert mutant.guarantee in row
        assert mutant.method in row


# --- output cut off --------------------------------------------------------------------------------


def test_a_command_whose_output_is_cut_off_ends_quietly(tmp_path: Path) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # as `| head` does once it has its lines: every write fails
    with (tmp_path / "stderr").open("w") as stderr:
        process = subprocess.Popen([LOCHKIT, "backends", "--json"], stdout=writer, stderr=stderr)
        os.close(writer)
        assert (
            process.wait(timeout=120) == 141
        )  # persist_spi.exit_codes.BROKEN_PIPE, as a shell reports SIGPIPE
    err = (tmp_path / "stderr").read_text()
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err
    assert err == ""


# --- serve's address ---------------------------------------------------------------------------------


def test_serve_says_when_its_host_name_does_not_resolve() -> None:
    done = lochkit("serve", "--backend", "inmemory", "--host", "nosuchhost.invalid")
    assert done.returncode == 2
    assert "--host nosuchhost.invalid: no such host name" in done.stderr
    assert "--port" not in done.stderr


# --- the experiment's table --------------------------------------------------------------------------


def test_the_experiment_table_names_what_each_percentile_is_of() -> None:
    from loadgen.experiments.asymmetric import render_rows

    lines: list[str] = []
    render_rows([{"writer": "w1", "attempts_p99": 1, "p99_ms": 2.0}], "heading", lines.append)
    titles = re.split(r" {2,}", lines[1].strip())
    assert len(titles) == len(set(titles))
    assert "attempts p99" in titles
    assert "attempts max" in titles
    assert "latency p99 ms" in titles
    assert "latency max ms" in titles


# --- usage errors leave no run directory ---------------------------------------------------------------

USAGE_ERRORS = {
    "generate --key-pattern ''": ["generate", "--backend", "inmemory", "--key-pattern", "", "-n", "1"],
    "generate --key-pattern with an empty element": [
        "generate",
        "--backend",
        "inmemory",
        "--key-pattern",
        "a..b",
        "-n",
        "1",
    ],
    "experiment --json in a missing directory": [
        "experiment",
        "asymmetric",
        "--backend",
        "inmemory",
        "--duration",
        "1s",
        "--json",
        "no/such/dir/out.json",
    ],
}


INPUTS = {
    "CONTENT_INFO_JSON that is not JSON": ("CONTENT_INFO_JSON", b"[{not json"),
    "CONTENT_INFO_JSON without key elements": ("CONTENT_INFO_JSON", b'[{"reference": "main"}]'),
    "CSV_KEYS with an empty key element": ("CSV_KEYS", b"a.b\nc..d\n"),
    "CSV_KEYS that is not UTF-8": ("CSV_KEYS", b"a.b\n\xff\xfe\n"),
}


@pytest.mark.parametrize("command", ["delete", "content-refresh"])
@pytest.mark.parametrize(("form", "content"), INPUTS.values(), ids=list(INPUTS))
def test_an_input_file_that_does_not_parse_leaves_no_run_directory(
    command: str,
    form: str,
    content: bytes,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keys").write_bytes(content)
    argv = ["content-generator", command, "--backend", "inmemory", "--input", "keys", "--format", form]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lochkit content-generator {command}: --input keys")
    assert err.count("\n") == 1
    assert not (tmp_path / ".lochkit").exists()


@pytest.mark.parametrize("argv", USAGE_ERRORS.values(), ids=list(USAGE_ERRORS))
def test_a_usage_error_leaves_no_run_directory(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / ".lochkit").exists()
