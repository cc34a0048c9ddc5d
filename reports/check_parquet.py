"""``lochkit check --parquet DIR``: the check's results as Parquet tables for the reports pipeline.

Three files, one row per finding, per reference and per run; every row carries the run's id, time,
backend, address (never a password) and repository, so any number of runs can be read as one
dataset. The schema is documented in docs/check.md and fixed here, once.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from persist_spi.check.findings import CheckReport, Severity
from persist_spi.errors import LochkitError

FINDINGS_FILE = "check_findings.parquet"
REFERENCES_FILE = "check_references.parquet"
RUNS_FILE = "check_runs.parquet"


class ParquetUnavailable(LochkitError):
    pass


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ParquetUnavailable(
            "writing Parquet needs pyarrow: pip install 'lochkit[reliability]' (or pip install pyarrow)"
        ) from None
    return pa, pq


def schemas() -> dict[str, Any]:
    """The three tables' schemas, by file name."""
    pa, _ = _pyarrow()
    run = [
        ("run_id", pa.string()),
        ("checked_at", pa.timestamp("us", tz="UTC")),
        ("backend", pa.string()),
        ("address", pa.string()),
        ("repository_id", pa.string()),
    ]
    return {
        FINDINGS_FILE: pa.schema(
            [
                *run,
                ("severity", pa.string()),
                ("check", pa.string()),
                ("reference", pa.string()),
                ("subject", pa.string()),
                ("message", pa.string()),
            ]
        ),
        REFERENCES_FILE: pa.schema(
            [
                *run,
                ("reference", pa.string()),
                ("kind", pa.string()),
                ("head", pa.string()),
                ("commits_checked", pa.int64()),
                ("complete", pa.bool_()),
                ("errors", pa.int64()),
            ]
        ),
        RUNS_FILE: pa.schema(
            [
                *run,
                ("initialised", pa.bool_()),
                ("references", pa.int64()),
                ("commits_checked", pa.int64()),
                ("index_segments_checked", pa.int64()),
                ("values_checked", pa.int64()),
                ("registrations_checked", pa.int64()),
                ("errors", pa.int64()),
                ("half_done", pa.int64()),
                ("repaired", pa.int64()),
                ("exit_code", pa.int32()),
                ("duration_seconds", pa.float64()),
            ]
        ),
    }


def write_parquet(
    report: CheckReport, directory: Path, run_id: str, checked_at: datetime.datetime
) -> list[Path]:
    pa, pq = _pyarrow()
    directory.mkdir(parents=True, exist_ok=True)
    run = {
        "run_id": run_id,
        "checked_at": checked_at,
        "backend": report.backend,
        "address": report.address,
        "repository_id": report.repository_id,
    }
    c = report.counters
    rows: dict[str, list[dict[str, Any]]] = {
        FINDINGS_FILE: [
            {
                **run,
                "severity": f.severity.value,
                "check": f.check,
                "reference": f.reference,
                "subject": f.subject,
                "message": f.message,
            }
            for f in report.findings
        ],
        REFERENCES_FILE: [
            {
                **run,
                "reference": r.name,
                "kind": r.kind,
                "head": r.head,
                "commits_checked": r.commits_checked,
                "complete": r.complete,
                "errors": r.errors,
            }
            for r in report.references
        ],
        RUNS_FILE: [
            {
                **run,
                "initialised": report.initialised,
                "references": len(report.references),
                "commits_checked": c.commits,
                "index_segments_checked": c.index_segments,
                "values_checked": c.values,
                "registrations_checked": c.registrations,
                "errors": report.count(Severity.ERROR),
                "half_done": report.count(Severity.HALF_DONE),
                "repaired": report.count(Severity.REPAIRED),
                "exit_code": int(report.exit_code),
                "duration_seconds": report.duration_seconds,
            }
        ],
    }
    written = []
    for name, schema in schemas().items():
        path = directory / name
        pq.write_table(pa.Table.from_pylist(rows[name], schema=schema), path)
        written.append(path)
    return written
