"""Checks of command-line arguments shared by several ``lochkit`` subcommands: a bad value is a
usage error (exit code 2, with the command's usage line) before anything starts.

Exit codes every command keeps to (``docs/cli.md``): 0 done, 1 the work failed (a failed commit,
a failing test, inconsistent data), 2 a usage error (nothing was started or written),
:data:`UNAVAILABLE` the database or server could not be reached or opened (down, unreachable, or a
store another process holds locked). Commands with more outcomes (``check``: 3 and 4;
``conformance``: pytest's) document theirs; a command whose stdout is closed early (``| head``)
exits :data:`BROKEN_PIPE`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, Final

USAGE: Final = 2
UNAVAILABLE: Final = 5
#: What a shell reports for a process SIGPIPE ended (128 + 13), as ``cat file | head`` gives.
BROKEN_PIPE: Final = 141


class UsageError(ValueError):
    """Options that cannot work together, or a value an option cannot take; found before anything
    is opened, started or written. Commands turn it into one line and exit code 2."""


def unavailable_errors() -> tuple[type[BaseException], ...]:
    """The errors that mean "the database or server cannot be reached or opened" (exit
    :data:`UNAVAILABLE`), for a command's ``except`` clause; imported only when asked for."""
    from nessie_client import NessieUnreachable
    from persist_spi.errors import BackendUnavailable

    return (BackendUnavailable, NessieUnreachable)


def backend_name(text: str) -> str:
    """An installed backend's name (argparse ``type=``): otherwise the error names the known ones."""
    from persist_spi.registry import UnknownBackend, backend_factory

    try:
        backend_factory(text)
    except UnknownBackend as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def suite_target(text: str) -> str:
    """What ``lochkit conformance`` can run the suites against (argparse ``type=``): an installed
    backend, ``serve:BACKEND`` or ``nessie``."""
    from conformance.suite_targets import parse_target

    try:
        target = parse_target(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if target.backend is not None:
        backend_name(target.backend)
    return text


def url_problem(backend: str | None, url: str | None) -> str | None:
    """Why ``--url`` cannot apply to ``--backend backend`` (its data lives in the memory of the
    command's own process, which nothing else can address), or None."""
    if not url or not backend:
        return None
    from persist_spi.registry import UnknownBackend, backend_factory

    try:
        factory = backend_factory(backend)
    except UnknownBackend:  # the command reports the unknown name itself
        return None
    if not factory.lives_in_process:
        return None
    return (
        f"--url does not apply to --backend {backend}: its data lives in this command's own memory "
        "and has no address; leave --url out"
    )


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
