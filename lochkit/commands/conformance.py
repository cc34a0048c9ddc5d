"""``lochkit conformance``: every conformance suite against one backend, with a per-area summary."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

NAME = "conformance"
HELP = "run the conformance suites against one backend"
DESCRIPTION = (
    "Runs every conformance suite against BACKEND, prints a per-area summary and exits non-zero on "
    "any failure. Arguments after '--' go to pytest."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        required=True,
        help="backend name (see `lochkit backends`), serve:NAME (the version-store suites through "
        "`lochkit serve` over NAME) or nessie (a real Nessie server)",
    )
    parser.add_argument("--url", help="address of an already running server (otherwise provisioned)")
    parser.add_argument(
        "--provision", default="auto", choices=["auto", "external", "testcontainers", "local"]
    )
    parser.add_argument("--report", help="write per-area results as JSON to this file")
    parser.add_argument("-k", "--keyword", help="only tests matching this pytest -k expression")
    parser.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    import pytest

    pytest_args = [
        "--pyargs",
        "conformance.all",
        "-p",
        "no:cacheprovider",
        "-q",
        "--backend",
        args.backend,
        "--provision",
        args.provision,
    ]
    if args.url:
        from conformance.suite_targets import parse_target

        try:
            target = parse_target(args.backend)
        except ValueError as e:
            print(f"lochkit: {e}", file=sys.stderr)
            return 2
        # serve:NAME drives NAME's server: the address is NAME's.
        pytest_args += ["--backend-url", f"{target.backend or args.backend}={args.url}"]
    if args.report:
        pytest_args += ["--lochkit-report", args.report]
    if args.keyword:
        pytest_args += ["-k", args.keyword]
    if args.exitfirst:
        pytest_args.append("-x")
    code = int(pytest.main([*pytest_args, *passthrough]))
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("lochkit: no conformance test was selected; check --keyword", file=sys.stderr)
    return code
