"""``events.parquet``: one row per operation, written in row groups while the run goes on, so a long
run never holds its events in memory and a crashed run keeps every finished row group."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
import pyarrow.parquet as pq

#: Rows buffered before a row group is written.
ROW_GROUP_ROWS: Final = 10_000

# The fields as a tuple: pyarrow's type stubs read a list of fields of different Arrow types as a
# list of plain objects.
EVENT_SCHEMA: Final = pa.schema(
    (
        pa.field("start", pa.timestamp("ns", tz="UTC"), nullable=False),
        pa.field("duration_ns", pa.int64(), nullable=False),
        pa.field("worker", pa.string(), nullable=False),
        pa.field("action", pa.string(), nullable=False),
        pa.field("puts", pa.int32(), nullable=False),
        pa.field("attempts", pa.int32(), nullable=False),
        pa.field("outcome", pa.string(), nullable=False),
        pa.field("error_kind", pa.string(), nullable=True),
        pa.field("ref", pa.string(), nullable=True),
        pa.field("commit_hash", pa.string(), nullable=True),
    ),
    metadata={"lochkit.events.schema_version": "1"},
)

#: Outcomes (``outcome`` column).
OK: Final = "ok"
CONFLICT: Final = "conflict"
ERROR: Final = "error"
RETRY_TIMEOUT: Final = "retry-timeout"
OUTCOMES: Final = (OK, CONFLICT, ERROR, RETRY_TIMEOUT)


@dataclass(frozen=True)
class Event:
    """One measured operation. ``start_ns`` is wall-clock nanoseconds since the epoch (UTC);
    ``duration_ns`` is measured on a monotonic clock."""

    start_ns: int
    duration_ns: int
    worker: str
    action: str
    outcome: str = OK
    puts: int = 0
    attempts: int = 1
    error_kind: str | None = None
    ref: str | None = None
    commit_hash: str | None = None


class EventWriter:
    """Appends events to ``path``; thread-safe, so several workers can share one writer."""

    def __init__(self, path: Path, row_group_rows: int = ROW_GROUP_ROWS) -> None:
        self.path = path
        self.rows = 0
        self._row_group_rows = row_group_rows
        self._buffer: list[Event] = []
        self._lock = threading.Lock()
        self._writer: pq.ParquetWriter | None = pq.ParquetWriter(path, EVENT_SCHEMA, compression="zstd")

    def add(self, event: Event) -> None:
        with self._lock:
            self._buffer.append(event)
            if len(self._buffer) >= self._row_group_rows:
                self._flush()

    def _flush(self) -> None:
        if not self._buffer or self._writer is None:
            return
        events, self._buffer = self._buffer, []
        columns: dict[str, list[Any]] = {name: [] for name in EVENT_SCHEMA.names}
        for e in events:
            columns["start"].append(e.start_ns)
            columns["duration_ns"].append(e.duration_ns)
            columns["worker"].append(e.worker)
            columns["action"].append(e.action)
            columns["puts"].append(e.puts)
            columns["attempts"].append(e.attempts)
            columns["outcome"].append(e.outcome)
            columns["error_kind"].append(e.error_kind)
            columns["ref"].append(e.ref)
            columns["commit_hash"].append(e.commit_hash)
        self._writer.write_table(pa.table(columns, schema=EVENT_SCHEMA))
        self.rows += len(events)

    def append_file(self, path: Path) -> None:
        """Append every row of another events file (written by a worker process), row group by
        row group, so the merge never holds a whole file in memory."""
        source = pq.ParquetFile(path)
        if not source.schema_arrow.equals(EVENT_SCHEMA, check_metadata=False):
            raise ValueError(f"{path} does not have the events schema of this lochkit")
        with self._lock:
            self._flush()
            if self._writer is None:
                raise ValueError("the events file is already closed")
            for i in range(source.num_row_groups):
                table = source.read_row_group(i).cast(EVENT_SCHEMA)
                self._writer.write_table(table)
                self.rows += table.num_rows

    def close(self) -> None:
        with self._lock:
            self._flush()
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
