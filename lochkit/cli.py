"""``lochkit``: one command, one subcommand per job (each in :mod:`lochkit.commands`)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from lochkit.commands import COMMANDS
from lochkit.help_format import HelpFormatter
from persist_spi import hints


def _command(name: str) -> ModuleType:
    return importlib.import_module(f"lochkit.commands.{name.replace('-', '_')}")


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        return installed_version("lochkit")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    return build_parsers()[0]


def build_parsers(
    *, own_parsers: bool = False
) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The ``lochkit`` parser, and each subcommand's own parser by name. ``own_parsers``: also the
    parsers of commands that parse their own arguments (for docs and hints checks; running a
    command never needs them, and building one imports that command's whole module)."""
    parser = argparse.ArgumentParser(
        prog="lochkit",
        description="Prove a Nessie-style versioned-catalog storage layer on real databases.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"lochkit {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands: dict[str, argparse.ArgumentParser] = {}
    for name in COMMANDS:
        module = _command(name)
        if getattr(module, "OWN_PARSER", False):
            sub.add_parser(module.NAME, help=module.HELP, add_help=False)
            if own_parsers and hasattr(module, "own_parser"):  # the parser it parses its arguments with
                commands[module.NAME] = module.own_parser()
            continue
        command = commands[module.NAME] = sub.add_parser(
            module.NAME,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", None) or module.HELP,
            formatter_class=HelpFormatter,
        )
        module.add_arguments(command)
    return parser, commands


def command_syntax(name: str, parser: argparse.ArgumentParser | None) -> hints.CommandSyntax:
    """How hints given while ``lochkit NAME`` runs name its options."""
    actions = _actions(parser) if parser else []
    options = [option for action in actions for option in action.option_strings]
    # A --url that takes NAME=URL pairs serves several backends in one run (lochkit torture).
    pairs = any("--url" in a.option_strings and a.metavar == "NAME=URL" for a in actions)
    return hints.for_command(f"lochkit {name}", options, url_names_backend=pairs)


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's actions and those of its subcommands' parsers (``experiment asymmetric``,
    ``content-generator generate``), whose options a hint may name."""
    found: list[argparse.Action] = []
    for action in parser._actions:
        found.append(action)
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _actions(sub)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``lochkit ARGV``; its exit code. Output cut off by its reader (``lochkit ... | head``)
    ends the command quietly with :data:`~persist_spi.exit_codes.BROKEN_PIPE`, as a shell reports a process
    SIGPIPE ended, instead of a traceback."""
    from persist_spi.exit_codes import BROKEN_PIPE

    try:
        code = _main(argv)
        sys.stdout.flush()  # what is still buffered fails here, not at exit
        return code
    except BrokenPipeError:
        # Nothing more can be written; stdout goes nowhere, so the interpreter's own final flush
        # does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, passthrough = argv[:at], argv[at + 1 :]
    if argv and argv[0] in COMMANDS:
        module = _command(argv[0])
        if getattr(module, "OWN_PARSER", False):
            own = module.own_parser() if hasattr(module, "own_parser") else None
            with hints.running(command_syntax(argv[0], own)):
                return int(module.run_raw(argv[1:] + passthrough))
    parser, commands = build_parsers()
    args = parser.parse_args(argv)
    with hints.running(command_syntax(args.command, commands[args.command])):
        return int(_command(args.command).run(args, passthrough))
