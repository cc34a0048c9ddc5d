"""Synthetic run directories of realistic shape, for the report benchmark and for tests: the same
``run.json`` and ``events.parquet`` a load command writes, generated vectorised (numpy), so a
hundred million events take minutes, not hours.

Shape of one run: writers on one branch for ``duration_s`` seconds, half of them committing 1 put
and half 10 (the asymmetric-commit experiment); every commit is preceded by a content read. Commit
latency is log-normal and grows with puts and attempts; the 10-put writers lose more races (more
attempts, conflicts and retry timeouts), as the storage design predicts.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from loadgen.runs.events import CONFLICT, EVENT_SCHEMA, OK, RETRY_TIMEOUT
from loadgen.runs.run_dir import EVENTS, RUN_JSON, SCHEMA_VERSION, lochkit_version, machine_facts

COMMIT: Final = "commitMultipleOperations"
READ: Final = "getContent"
BACKENDS: Final = ("rocksdb", "postgres", "cassandra", "dynamodb", "mongodb")
POLICIES: Final = ("nessie", "coordinated")
#: Rows per Parquet row group, as the real writer uses an order of magnitude like this.
ROW_GROUP: Final = 1_000_000


@dataclass(frozen=True)
class RunShape:
    events: int
    writers: int = 2
    duration_s: float = 60.0
    backend: str = "rocksdb"
    scenario: str = "asymmetric"
    policy: str = "nessie"
    version: str = ""
    start: datetime.datetime = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def _events(shape: RunShape, rng: np.random.Generator) -> pa.Table:
    n = shape.events
    # Events alternate read, commit per writer; start times are spread over the run, sorted.
    worker_ix = rng.integers(0, shape.writers, n)
    start0 = int(shape.start.timestamp() * 1e9)
    start = start0 + np.sort(rng.integers(0, int(shape.duration_s * 1e9), n))
    is_commit = rng.random(n) < 0.5
    heavy = (worker_ix % 2) == 1  # odd writers put 10 per commit
    puts = np.where(is_commit, np.where(heavy, 10, 1), 0).astype(np.int32)
    attempts = np.where(is_commit, 1 + rng.geometric(np.where(heavy, 0.55, 0.85), n) - 1, 1).astype(np.int32)
    roll = rng.random(n)
    conflict = is_commit & (roll < np.where(heavy, 0.03, 0.005))
    timeout = is_commit & heavy & ~conflict & (roll > 0.995)
    outcome = np.where(conflict, CONFLICT, np.where(timeout, RETRY_TIMEOUT, OK))
    base_ms = np.where(is_commit, np.where(heavy, 2.5, 0.8), 0.3)
    duration = (rng.lognormal(np.log(base_ms), 0.45, n) * attempts * 1e6).astype(np.int64)
    error_kind = pa.array(
        np.where(conflict, "KEY_EXISTS", np.where(timeout, "ReferenceRetryFailure", "")),
        pa.string(),
        mask=~(conflict | timeout),
    )
    workers = np.array([f"writer-{i}-{10 if i % 2 else 1}put" for i in range(shape.writers)])
    return pa.table(
        {
            "start": pa.array(start, pa.timestamp("ns", tz="UTC")),
            "duration_ns": pa.array(duration),
            "worker": pa.array(workers[worker_ix]).dictionary_encode().cast(pa.string()),
            "action": pa.array(np.where(is_commit, COMMIT, READ)),
            "puts": pa.array(puts),
            "attempts": pa.array(attempts),
            "outcome": pa.array(outcome),
            "error_kind": error_kind,
            "ref": pa.array(np.full(n, "main"), pa.string()),
            "commit_hash": pa.nulls(n, pa.string()),
        },
        schema=EVENT_SCHEMA,
    )


def write_run(path: Path, shape: RunShape, seed: int) -> Path:
    """One run directory at ``path`` (created) with ``shape.events`` events."""
    path.mkdir(parents=True, exist_ok=False)
    rng = np.random.default_rng(seed)
    with pq.ParquetWriter(path / EVENTS, EVENT_SCHEMA, compression="zstd") as writer:
        left = shape.events
        part = 0
        while left > 0:
            rows = min(left, ROW_GROUP)
            chunk_shape = RunShape(
                rows,
                shape.writers,
                shape.duration_s * rows / shape.events,
                start=shape.start
                + datetime.timedelta(seconds=shape.duration_s * (shape.events - left) / shape.events),
            )
            writer.write_table(_events(chunk_shape, rng))
            left -= rows
            part += 1
    end = shape.start + datetime.timedelta(seconds=shape.duration_s)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "lochkit_version": shape.version or lochkit_version(),
        "command": "synthetic",
        "command_line": ["synthetic"],
        "target": {
            "kind": "lochkit",
            "backend": shape.backend,
            "server_version": "",
            "provisioning": "synthetic",
        },
        "parameters": {"scenario": shape.scenario, "policy": shape.policy, "writers": shape.writers},
        "seed": seed,
        "machine": machine_facts(),
        "started_at": shape.start.isoformat().replace("+00:00", "Z"),
        "ended_at": end.isoformat().replace("+00:00", "Z"),
        "status": "finished",
        "totals": {"events": shape.events},
    }
    (path / RUN_JSON).write_text(json.dumps(doc, indent=2) + "\n")
    return path


def write_runs(root: Path, runs: int, total_events: int, seed: int = 0, writers: int = 2) -> list[Path]:
    """``runs`` run directories under ``root`` sharing ``total_events`` events, over a mix of
    backends and policies, one hour apart."""
    per_run = max(1, total_events // runs)
    paths = []
    for i in range(runs):
        shape = RunShape(
            events=per_run,
            writers=writers,
            duration_s=max(10.0, per_run / 2000),  # about 2,000 events a second, as a fast backend does
            backend=BACKENDS[i % len(BACKENDS)],
            policy=POLICIES[(i // len(BACKENDS)) % len(POLICIES)],
            start=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(hours=i),
        )
        paths.append(write_run(root / f"run-{i:04d}", shape, seed + i))
    return paths
