"""Reading a load command's run directory back in tests: its run.json and its commit events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

COMMIT = "commitMultipleOperations"


def run_json(path: Path) -> dict[str, Any]:
    doc = json.loads((path / "run.json").read_text())
    assert isinstance(doc, dict)
    return doc


def commit_events(path: Path) -> list[dict[str, Any]]:
    return [r for r in pq.read_table(path / "events.parquet").to_pylist() if r["action"] == COMMIT]
