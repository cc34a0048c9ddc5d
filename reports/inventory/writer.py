"""Writing an inventory directory: one Parquet file per table, written in row groups so a large
repository never sits in memory, then ``inventory.json`` last, so a directory without it is an
unfinished inventory the report job ignores."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
import pyarrow.parquet as pq

from persist_spi.codec import DEFAULT_CODEC, ObjCodec
from persist_spi.persist import Persist
from reports.inventory.format import INVENTORY_JSON, INVENTORY_SCHEMA_VERSION, TABLES
from reports.inventory.scan import Row, scan_objects, scan_references

ROW_GROUP_ROWS: Final = 50_000


class _TableWriter:
    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.rows = 0
        self._schema = schema
        self._buffer: list[Row] = []
        self._writer = pq.ParquetWriter(path, schema, compression="zstd")

    def add(self, row: Row) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self._writer.write_table(pa.Table.from_pylist(self._buffer, schema=self._schema))
            self.rows += len(self._buffer)
            self._buffer = []

    def close(self) -> None:
        self._flush()
        self._writer.close()


@dataclass
class InventorySummary:
    path: Path
    rows: dict[str, int] = field(default_factory=dict)
    bytes_by_type: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        counts = ", ".join(f"{n} {table}" for table, n in self.rows.items())
        return f"inventory written to {self.path}: {counts}"


def write_inventory(
    persist: Persist, out: Path, *, source: dict[str, Any], codec: ObjCodec = DEFAULT_CODEC
) -> InventorySummary:
    """Scan ``persist``'s repository into ``out`` (created; must be empty or absent). ``source``
    describes where the repository lives (backend, redacted url...) and goes into inventory.json;
    ``codec`` is the one the store's layout writes, for the objects' sizes."""
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"Inventory directory {out} exists and is not empty; give a new --out")
    out.mkdir(parents=True, exist_ok=True)
    taken_at = datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")
    writers = {name: _TableWriter(out / f"{name}.parquet", schema) for name, schema in TABLES.items()}
    summary = InventorySummary(out)
    try:
        for ref in scan_references(persist):
            writers["references"].add(ref)
        for rows in scan_objects(persist, codec):
            writers["objects"].add(rows.objects)
            obj_type = rows.objects["obj_type"]
            summary.bytes_by_type[obj_type] = (
                summary.bytes_by_type.get(obj_type, 0) + rows.objects["encoded_size"]
            )
            if rows.commit is not None:
                writers["commits"].add(rows.commit)
            for link in rows.links:
                writers["links"].add(link)
    finally:
        for writer in writers.values():
            writer.close()
    try:
        lochkit_version = version("lochkit")
    except PackageNotFoundError:
        lochkit_version = "unknown"
    summary.rows = {name: writer.rows for name, writer in writers.items()}
    doc = {
        "schema_version": INVENTORY_SCHEMA_VERSION,
        "kind": "lochkit-inventory",
        "taken_at": taken_at,
        "lochkit_version": lochkit_version,
        "repository_id": persist.repository_id,
        "source": source,
        "rows": summary.rows,
        "bytes_by_type": summary.bytes_by_type,
    }
    (out / INVENTORY_JSON).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return summary
