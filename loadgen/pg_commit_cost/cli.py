"""The command line of ``python -m loadgen.pg_commit_cost`` and :func:`main`: a new run, or the
tables of saved ones."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import loadgen.pg_commit_cost as package  # its docstring is the text of --help
from conformance import snippets
from loadgen.pg_commit_cost.checks import check_machine, check_outputs, parse_configs
from loadgen.pg_commit_cost.measure import run
from loadgen.pg_commit_cost.options import (
    CONFIGS,
    DEFAULT_COMMITS,
    DEFAULT_FLOOR_OPS,
    DEFAULT_REPEATS,
    DEFAULT_WARMUP,
    NAME,
    PROGRAM,
    Options,
)
from loadgen.pg_commit_cost.saved import document, load_saved, shareable
from loadgen.pg_commit_cost.tables import tables
from persist_spi.errors import InputError, LochkitError
from persist_spi.exit_codes import FAILED, INTERRUPTED, USAGE


def positive(text: str) -> int:
    return _whole_number(text, 1)


def non_negative(text: str) -> int:
    return _whole_number(text, 0)


def _whole_number(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of at least {least}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=NAME, description=package.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--commits",
        type=positive,
        default=DEFAULT_COMMITS,
        help="measured commits per cell (default %(default)s)",
    )
    parser.add_argument(
        "--floor-ops",
        type=positive,
        default=DEFAULT_FLOOR_OPS,
        help="measured floor calls per cell (default %(default)s)",
    )
    parser.add_argument(
        "--warmup",
        type=non_negative,
        default=DEFAULT_WARMUP,
        help="calls made before each cell's measured ones (default %(default)s)",
    )
    parser.add_argument(
        "--repeats",
        type=positive,
        default=DEFAULT_REPEATS,
        help="rounds over every configuration (default %(default)s)",
    )
    parser.add_argument(
        "--configs",
        default=",".join(CONFIGS),
        metavar="NAME[,NAME...]",
        help=f"configurations to measure, in this order (default: all: {', '.join(CONFIGS)})",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every sample to FILE")
    snippets.add_option(parser, "the tables")
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="start nothing: print the tables of files --json wrote, their samples pooled",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from persist_spi.sigterm import sigterm_interrupts

    args = build_parser().parse_args(argv)
    command = snippets.invocation(PROGRAM, argv)
    try:
        # SIGTERM ends the run as Ctrl-C does, so the server it started is stopped all the same.
        with sigterm_interrupts():
            return _main(args, command)
    except KeyboardInterrupt:
        print(f"{NAME}: interrupted; the server it started is stopped and its data deleted", file=sys.stderr)
        return INTERRUPTED
    except LochkitError as e:
        print(f"{NAME}: {e}", file=sys.stderr)
        return USAGE if isinstance(e, InputError) else FAILED


def _main(args: argparse.Namespace, command: Sequence[str]) -> int:
    check_outputs(args)
    if args.report:
        samples = load_saved(args.report)
        configs: Sequence[str] = list(dict.fromkeys(s.config for s in samples))
        source = f"the samples of {len(args.report)} saved runs, pooled"
    else:
        options = Options(
            args.commits, args.floor_ops, args.warmup, args.repeats, parse_configs(args.configs)
        )
        check_machine()
        result = run(options)
        samples, configs = result.samples, options.configs
        source = f"PostgreSQL {result.server_version}, {options.describe()}"
        if args.json:
            args.json.write_text(json.dumps(document(result, options, command), indent=1) + "\n")
    text = tables(samples, configs)
    print(text, end="")
    if args.markdown_out:
        snippets.write(args.markdown_out, text, shareable(command), source=source)
    return 0
