"""Checks of command-line arguments shared by several ``lochkit`` subcommands: a bad value is a
usage error (exit code 2, with the command's usage line) before anything starts. The exit codes
themselves are :mod:`persist_spi.exit_codes`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any


def backend_name(text: str) -> str:
    """An installed backend's name (argparse ``type=``): otherwise the error names the known ones."""
    from persist_spi.registry import UnknownBackend, backend_factory

    try:
        backend_factory(text)
    except UnknownBackend as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def positive_int(text: str) -> int:
    """A whole number of at least 1 (argparse ``type=``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def suite_target(text: str) -> str:
    """What ``lochkit conformance`` can run the suites against (argparse ``type=``): an installed
    backend, ``serve:BACKEND`` or ``nessie``."""
    from conformance.suite_targets import parse_target
    from persist_spi.errors import InputError

    try:
        target = parse_target(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if target.backend is not None:
        backend_name(target.backend)
    return text


class DeprecatedAlias(argparse.Action):
    """An old spelling of an option, kept so users' scripts go on working: it does what the new
    spelling does and prints one line saying which to use. Hidden from ``--help``, which shows only
    the new one. ``replacement`` is the new spelling; ``action`` what the new option does (store,
    append, store_true)."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        replacement: str,
        *,
        nargs: Any = None,
        const: Any = None,
        **kwargs: Any,
    ) -> None:
        self.replacement = replacement
        super().__init__(option_strings, dest, nargs=nargs, const=const, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(
            f"{parser.prog}: {option_string} is deprecated and will be removed; use {self.replacement}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_deprecated_alias(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, old: str, new: str, dest: str
) -> None:
    """``old`` as a hidden, warning alias of the value-taking option ``new`` (same ``dest``)."""
    parser.add_argument(
        old,
        dest=dest,
        action=DeprecatedAlias,
        replacement=new,
        default=argparse.SUPPRESS,  # the new option's default stands
        help=argparse.SUPPRESS,
    )
