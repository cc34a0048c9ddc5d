"""``lochkit``: one command, one subcommand per job (each in :mod:`lochkit.commands`)."""

from __future__ import annotations

import argparse
import importlib
import logging
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
    SIGPIPE ended, instead of a traceback. A declared error no command handled ends it with one line
    and its code (:func:`declared_error_code`); any other exception is a bug: logged with its
    traceback and a line asking for a report, exit :data:`~persist_spi.exit_codes.FAILED`."""
    from persist_spi.errors import LochkitError, unexpected_error_message
    from persist_spi.exit_codes import BROKEN_PIPE, FAILED
    from persist_spi.sigterm import sigterm_interrupts

    args = list(sys.argv[1:] if argv is None else argv)
    command = f"lochkit {args[0]}" if args and not args[0].startswith("-") else "lochkit"
    try:
        # SIGTERM ends every command as Ctrl-C does, so the servers, proxies and work directories
        # it started are stopped by their context managers instead of outliving it.
        with sigterm_interrupts():
            code = _main(args)
        sys.stdout.flush()  # what is still buffered fails here, not at exit
        return code
    except BrokenPipeError:
        # Nothing more can be written; stdout goes nowhere, so the interpreter's own final flush
        # does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE
    except LochkitError as e:
        print(f"{command}: {e}", file=sys.stderr)
        return declared_error_code(e)
    except Exception as e:
        logging.getLogger("lochkit").error(
            "%s: unexpected error: %s; this is a bug, please report it with this traceback",
            command,
            unexpected_error_message(e),
            exc_info=e,
        )
        return FAILED


def declared_error_code(error: BaseException) -> int:
    """The exit code of a declared error: input the user can fix is a usage error, a database or
    server that cannot be reached has its own code, anything else failed."""
    from persist_spi.errors import InputError, Unreachable
    from persist_spi.exit_codes import FAILED, UNAVAILABLE, USAGE

    if isinstance(error, InputError):
        return USAGE
    if isinstance(error, Unreachable):
        return UNAVAILABLE
    return FAILED


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
