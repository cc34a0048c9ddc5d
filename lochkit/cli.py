"""``lochkit``: one command, one subcommand per job (each in :mod:`lochkit.commands`)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from lochkit.commands import COMMANDS


def _command(name: str) -> ModuleType:
    return importlib.import_module(f"lochkit.commands.{name.replace('-', '_')}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lochkit",
        description="Prove a Nessie-style versioned-catalog storage layer on real databases.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        module = _command(name)
        if getattr(module, "OWN_PARSER", False):
            sub.add_parser(module.NAME, help=module.HELP, add_help=False)
            continue
        command = sub.add_parser(
            module.NAME,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", None) or module.HELP,
        )
        module.add_arguments(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, passthrough = argv[:at], argv[at + 1 :]
    if argv and argv[0] in COMMANDS:
        module = _command(argv[0])
        if getattr(module, "OWN_PARSER", False):
            return int(module.run_raw(argv[1:] + passthrough))
    args = build_parser().parse_args(argv)
    return int(_command(args.command).run(args, passthrough))
