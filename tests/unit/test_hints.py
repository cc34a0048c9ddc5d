"""Every fix a message suggests is an option of the command the user is running: rendered for that
command, it parses with that command's own parser."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from lochkit.cli import build_parsers, command_syntax
from lochkit.commands import COMMANDS
from persist_spi import hints
from persist_spi.registry import backend_factory
from provisioning.base import ProvisioningFailed
from provisioning.registry import provision
from provisioning.servers.postgres import cockroach_local

pytest_plugins = ["pytester"]

URL = "postgresql://root@HOST:26257/defaultdb?sslmode=disable&x=1"


def _suggested_arguments(hint: str) -> list[str]:
    """The command-line part of a hint: after "pass" (options of this command) or a whole command."""
    if hint.startswith("pass "):
        return shlex.split(hint.removeprefix("pass ").split(" (or set ")[0])
    assert hint.startswith("run: lochkit conformance "), hint
    return shlex.split(hint.removeprefix("run: lochkit "))


@pytest.mark.parametrize("command", list(COMMANDS))
def test_hints_given_while_a_command_runs_parse_with_that_commands_parser(command: str) -> None:
    parser, commands = build_parsers(own_parsers=True)
    with hints.running(command_syntax(command, commands.get(command))):
        suggestions = [hints.pass_url("cockroachdb", URL), hints.use_method("cockroachdb", "testcontainers")]
    for hint in suggestions:
        argv = _suggested_arguments(hint)
        if argv[0] == "conformance":  # a whole command
            args = parser.parse_args(argv)
        else:  # options of the running command itself, parsed by its own parser
            args = commands[command].parse_args([*_required_arguments(command), *argv])
        if "--url" in argv:
            given = args.url[-1].split("=", 1)[1] if isinstance(args.url, list) else args.url
            assert given == URL  # the quoting survives a shell


def _required_arguments(command: str) -> list[str]:
    return {
        "conformance": ["--backend", "cockroachdb"],
        "inventory": ["--backend", "cockroachdb"],
        "check": ["--backend", "cockroachdb"],
        "servers": ["list"],
        # Options of a subcommand's own parser (``experiment asymmetric --url ...``).
        "experiment": ["asymmetric"],
        "content-generator": ["generate"],
    }.get(command, [])


def test_the_lochkit_cli_chooses_the_syntax_from_the_commands_options() -> None:
    _, commands = build_parsers(own_parsers=True)
    assert command_syntax("conformance", commands["conformance"]).url_text("x", "u") == "--url u"
    assert command_syntax("bench", commands["bench"]).provision_option == "--provision"
    assert command_syntax("report", commands["report"]).provision_option is None
    assert command_syntax("servers", commands["servers"]).url_option is None


def test_hints_for_pytest_parse_with_the_plugins_options(pytester: pytest.Pytester) -> None:
    with hints.running(hints.PYTEST):
        suggestions = [hints.pass_url("cockroachdb", URL), hints.use_method("cockroachdb", "testcontainers")]
    argv = [arg for hint in suggestions for arg in _suggested_arguments(hint)]
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest("--co", "-q", "-p", "no:cacheprovider", *argv)
    assert result.ret == pytest.ExitCode.OK  # a usage error would be 4


def test_provisioning_messages_follow_the_running_command(tmp_path: Path) -> None:
    _, commands = build_parsers(own_parsers=True)
    with hints.running(command_syntax("conformance", commands["conformance"])):
        message = cockroach_local()
        with pytest.raises(ProvisioningFailed) as external:
            provision("postgres", backend_factory("postgres"), urls={}, method="external", workdir=tmp_path)
    assert "--backend-url" not in message + str(external.value)
    assert f"pass --url {shlex.quote(URL.split('&')[0])}" in message
    assert "pass --provision testcontainers" in message
    assert "pass --url URL (or set LOCHKIT_POSTGRES_URL)" in str(external.value)
