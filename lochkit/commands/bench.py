"""``lochkit bench``: the commit-cost benchmark (the benchmark itself is :mod:`loadgen.commit_bench`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

NAME = "bench"
HELP = "commit-cost benchmark: prints commit throughput and latency (not a test)"


def _description() -> str:
    from loadgen import commit_bench

    return commit_bench.__doc__ or HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from loadgen.commit_bench import add_arguments as bench_arguments

    parser.description = _description()
    bench_arguments(parser)
    parser.set_defaults(_usage_error=parser.error)


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from loadgen.commit_bench import run_from_args

    return run_from_args(args, args._usage_error)
