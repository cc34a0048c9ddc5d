"""Checks of command-line arguments shared by several ``lochkit`` subcommands: a bad value is a
usage error (exit code 2, with the command's usage line) before anything starts."""

from __future__ import annotations

import argparse


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
