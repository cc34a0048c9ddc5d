"""``lochkit check``: is a live repository consistent? (reliability.consistency does the work)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

NAME = "check"
HELP = "check a repository's consistency (chains, indexes, values, half-done reference changes)"
DESCRIPTION = (
    "Reads a repository through the Persist contract and checks every reference's commit chain, "
    "indexes, stripes, segments and values, and int/refs against the reference rows. Exit codes: "
    "0 consistent, 1 errors found, 2 usage or connection error, 3 only half-done reference changes "
    "(run again with --repair), 4 no repository with that id at that address (or no lochkit tables)."
)
#: Findings printed before "... and N more" (all of them go to --parquet).
SHOWN = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", required=True, help="backend name (see `lochkit backends`)")
    parser.add_argument(
        "--url",
        help="address of the database (rocksdb: rocksdb:///path/to/dir; default .lochkit/data/rocksdb, "
        "where the load commands keep it)",
    )
    parser.add_argument("--repository", default="", help="repository id (default: the empty id)")
    parser.add_argument(
        "--repair", action="store_true", help="finish half-done reference creates and deletes"
    )
    parser.add_argument("--max-commits", type=int, help="stop each reference's walk after N commits")
    parser.add_argument("--parquet", metavar="DIR", help="also write the results as Parquet tables")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    import datetime
    import uuid
    from pathlib import Path

    from persist_spi.adapter_persist import AdapterPersist
    from persist_spi.config import StoreConfig
    from persist_spi.errors import BackendSchemaMismatch, LochkitError
    from persist_spi.registry import UnknownBackend, backend_factory
    from reliability.check_parquet import write_parquet
    from reliability.consistency import RepositoryChecker
    from reliability.findings import ExitCode

    if args.max_commits is not None and args.max_commits < 1:
        print("lochkit check: --max-commits must be at least 1", file=sys.stderr)
        return ExitCode.USAGE
    url, missing = _embedded_url(args.backend, args.url)
    if missing is not None:
        print(
            f"lochkit check: {missing} does not exist: no repository to check (give --url)", file=sys.stderr
        )
        return ExitCode.NO_REPOSITORY
    try:
        adapter = backend_factory(args.backend).create(url)
    except (UnknownBackend, LochkitError) as e:
        print(f"lochkit check: {e}", file=sys.stderr)
        return ExitCode.USAGE
    checked_at = datetime.datetime.now(datetime.UTC)
    try:
        persist = AdapterPersist(adapter, StoreConfig(repository_id=args.repository))
        checker = RepositoryChecker(
            persist,
            backend=args.backend,
            address=adapter.address,
            repair=args.repair,
            max_commits=args.max_commits,
        )
        report = checker.run()
    except BackendSchemaMismatch as e:
        print(f"lochkit check: {e}", file=sys.stderr)
        print("lochkit check: no repository to check: lochkit's tables are missing or of another version")
        return ExitCode.NO_REPOSITORY
    except LochkitError as e:
        print(f"lochkit check: {e}", file=sys.stderr)
        return ExitCode.USAGE
    finally:
        adapter.close()
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


def _embedded_url(backend: str, url: str | None) -> tuple[str | None, str | None]:
    """The URL to open, and the directory that is missing if an embedded store's is. Without
    ``--url``, RocksDB is read where the load commands keep it; a directory that does not exist is
    not created (opening it would make an empty database)."""
    if backend != "rocksdb":
        return url, None
    from pathlib import Path

    from backends.rocksdb import data_directory
    from lochkit.targets import DATA_ROOT

    directory = data_directory(url) if url else DATA_ROOT / backend
    return (url or str(directory)), (None if Path(directory).is_dir() else str(directory))
