"""``lochkit check``: is a live repository consistent? (persist_spi.check.consistency does the work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from persist_spi.adapter import BackendAdapter

NAME = "check"
HELP = "check a repository's consistency (chains, indexes, values, half-done reference changes)"
DESCRIPTION = (
    "Reads a repository through the Persist contract and checks every reference's commit chain, "
    "indexes, stripes, segments and values, and int/refs against the reference rows. It opens the "
    "database read-only and creates nothing (--repair alone writes, to finish half-done reference "
    "changes); on a terminal a progress line shows the objects read. Exit codes: 0 consistent, "
    "1 errors found, 2 usage error, 3 only half-done reference changes (run again with --repair), "
    "4 no repository with that id at that address (or no lochkit store there), 5 the database "
    "cannot be reached or opened (down, or locked by another process: --repair needs the lock)."
)
#: Findings printed before "... and N more" (all of them go to --parquet).
SHOWN = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend", metavar="NAME", required=True, help="backend name (see: lochkit backends)"
    )
    parser.add_argument(
        "--url",
        metavar="URL",
        help="address of the database (rocksdb: rocksdb:///path/to/dir; default .lochkit/data/rocksdb, "
        "where the load commands keep it)",
    )
    parser.add_argument(
        "--repository", metavar="ID", default="", help="repository id (default: the empty id)"
    )
    parser.add_argument(
        "--repair", action="store_true", help="finish half-done reference creates and deletes"
    )
    parser.add_argument("--max-commits", type=int, help="stop each reference's walk after N commits")
    parser.add_argument("--parquet", metavar="DIR", help="also write the results as Parquet tables")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from persist_spi.check.findings import ExitCode
    from persist_spi.errors import BackendSchemaMismatch, BackendStoreMissing, LochkitError, Unreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from persist_spi.registry import UnknownBackend, backend_factory, url_problem

    problem = url_problem(args.backend, args.url)
    if args.max_commits is not None and args.max_commits < 1:
        problem = "--max-commits must be at least 1"
    if problem:
        print(f"lochkit check: {problem}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        adapter = backend_factory(args.backend).open_existing(
            _url(args.backend, args.url), read_only=not args.repair
        )
        try:
            return _check(args, adapter)
        finally:
            adapter.close()
    except (BackendStoreMissing, BackendSchemaMismatch) as e:
        print(f"lochkit check: {e}", file=sys.stderr)
        print("lochkit check: no repository to check: no lochkit store there, or one of another version")
        return ExitCode.NO_REPOSITORY
    except Unreachable as e:
        print(f"lochkit check: {e}", file=sys.stderr)
        return UNAVAILABLE
    except (UnknownBackend, LochkitError) as e:
        print(f"lochkit check: {e}", file=sys.stderr)
        return ExitCode.USAGE


def _check(args: argparse.Namespace, adapter: BackendAdapter) -> int:
    import datetime
    import uuid
    from pathlib import Path

    from lochkit.read_progress import read_progress
    from persist_spi.adapter_persist import AdapterPersist
    from persist_spi.check.consistency import RepositoryChecker
    from persist_spi.check.findings import ExitCode
    from persist_spi.config import StoreConfig
    from persist_spi.errors import LochkitError
    from reports.check_parquet import write_parquet

    checked_at = datetime.datetime.now(datetime.UTC)
    with read_progress(
        AdapterPersist(adapter, StoreConfig(repository_id=args.repository)), "lochkit check:"
    ) as persist:
        checker = RepositoryChecker(
            persist,
            backend=args.backend,
            address=adapter.address,
            repair=args.repair,
            max_commits=args.max_commits,
        )
        report = checker.run()
    print(f"lochkit check of repository '{report.repository_id}' on {args.backend} at {report.address}")
    for finding in report.findings[:SHOWN]:
        where = f" [{finding.reference}]" if finding.reference else ""
        print(f"  {finding.severity.value:<9} {finding.check}{where}: {finding.message}")
    if len(report.findings) > SHOWN:
        print(f"  ... and {len(report.findings) - SHOWN} more")
    print(f"{report.summary_line()} in {report.duration_seconds:.1f} s")
    verdicts = {
        ExitCode.CONSISTENT: "consistent",
        ExitCode.ERRORS: "NOT consistent: data is missing or corrupt",
        ExitCode.HALF_DONE: "half-done reference changes remain: run again with --repair",
        ExitCode.NO_REPOSITORY: "no repository to check",
    }
    print(verdicts[report.exit_code])
    if args.parquet:
        try:
            for path in write_parquet(report, Path(args.parquet), uuid.uuid4().hex, checked_at):
                print(f"wrote {path}")
        except LochkitError as e:
            print(f"lochkit check: {e}", file=sys.stderr)
            return ExitCode.USAGE
    return int(report.exit_code)


def _url(backend: str, url: str | None) -> str | None:
    """Without ``--url``, RocksDB is read where the load commands keep it."""
    if url or backend != "rocksdb":
        return url
    from loadgen.targets.opening import DATA_ROOT

    return str(DATA_ROOT / backend)
