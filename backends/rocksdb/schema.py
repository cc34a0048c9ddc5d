"""What makes a directory a RocksDB store lochkit wrote, judged from its files alone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

#: What rocksdict records next to a database lochkit opened (raw keys and values, no prefix
#: extractor). rocksdict rewrites it on every open, also a read-only one: a store that holds
#: another one is not lochkit's, and opening it would change it.
_ROCKSDICT_CONFIG: Final = {"raw_mode": True, "prefix_extractors": {}}
_FAMILIES: Final = ("refs", "objs")


def store_problem(path: Path) -> str | None:
    """Why ``path`` is not a RocksDB database lochkit wrote, found by reading its files only (opening
    it would create one there), or None."""
    if not path.exists():
        return "the directory does not exist"
    if not path.is_dir():
        return "it is not a directory"
    if not (path / "CURRENT").is_file():
        return "it holds no RocksDB database (no CURRENT file)"
    try:
        config = json.loads((path / "rocksdict-config.json").read_text())
    except (OSError, ValueError):
        config = None
    if config != _ROCKSDICT_CONFIG:
        return "a RocksDB database lochkit did not write (its rocksdict-config.json is missing or differs)"
    families = _column_families(path)
    missing = [f for f in _FAMILIES if f not in families]
    if missing:
        return f"a RocksDB database without lochkit's column families ({', '.join(missing)} missing)"
    return None


def _column_families(path: Path) -> set[str]:
    """The column families the newest OPTIONS file of a RocksDB directory declares."""
    numbered = [(int(p.name.partition("-")[2]), p) for p in path.glob("OPTIONS-*") if p.name[8:].isdigit()]
    if not numbered:
        return set()
    text = max(numbered)[1].read_text(errors="replace")
    return set(re.findall(r'^\[CFOptions "(.*)"\]', text, re.MULTILINE))
