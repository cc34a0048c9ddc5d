"""What makes a directory a RocksDB store of a layout, judged from its files alone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

from backends.rocksdb.statements import LOCHKIT_ROWS, NESSIE_ROWS, RowFormat
from persist_spi.errors import BackendSchemaMismatch

#: What rocksdict records next to a database lochkit opened (raw keys and values, no prefix
#: extractor). rocksdict rewrites it on every open, also a read-only one: a store that holds
#: another one is not lochkit's, and opening it would change it.
_ROCKSDICT_CONFIG: Final = {"raw_mode": True, "prefix_extractors": {}}
#: The layout whose column families a directory holds, by the option value that opens it.
_LAYOUT_ROWS: Final = {"lochkit": LOCHKIT_ROWS, "nessie": NESSIE_ROWS}
_DEFAULT_NOTE: Final = " (the default: leave the layout option out)"


def store_problem(path: Path, rows: RowFormat = LOCHKIT_ROWS) -> str | None:
    """Why ``path`` is not a RocksDB database of the layout ``rows`` belongs to, found by reading
    its files only (opening it would create one there), or None. A Nessie server writes no
    rocksdict-config.json: in Nessie's layout it may be missing."""
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
    if config != _ROCKSDICT_CONFIG and not (config is None and rows is NESSIE_ROWS):
        return "a RocksDB database lochkit did not write (its rocksdict-config.json is missing or differs)"
    families = _column_families(path)
    missing = [f for f in (rows.refs_family, rows.objs_family) if f not in families]
    if missing:
        owner = "lochkit's" if rows is LOCHKIT_ROWS else "Nessie's"
        return f"a RocksDB database without {owner} column families ({', '.join(missing)} missing)"
    return None


def refuse_foreign_families(path: Path, rows: RowFormat) -> None:
    """:class:`BackendSchemaMismatch` when the database in ``path`` holds column families other
    than ``default`` and the two of ``rows``: RocksDB opens a database only with all of them, and
    Nessie opens exactly its own, so such a directory is not opened (nor changed)."""
    problem = _families_problem(path, rows)
    if problem is not None:
        raise BackendSchemaMismatch("rocksdb", str(path), *problem)


def _families_problem(path: Path, rows: RowFormat) -> tuple[str, str] | None:
    families = _column_families(path) if (path / "CURRENT").is_file() else set()
    expected = {"default", rows.refs_family, rows.objs_family}
    foreign = families - expected
    if not foreign:
        return None
    found = ", ".join(sorted(families))
    for name, other in _LAYOUT_ROWS.items():
        if other is not rows and {other.refs_family, other.objs_family} <= families:
            problem = (
                f"the directory holds the column families of layout={name} ({found}), not those of "
                f"this layout ({', '.join(sorted(expected))})"
            )
            note = _DEFAULT_NOTE if name == "lochkit" else ""
            return problem, f"open it with layout={name}{note}, or give another directory"
    return (
        f"the directory holds column families this layout does not use ({found})",
        "give a directory of this layout, or a new one",
    )


def _column_families(path: Path) -> set[str]:
    """The column families the newest OPTIONS file of a RocksDB directory declares."""
    numbered = [(int(p.name.partition("-")[2]), p) for p in path.glob("OPTIONS-*") if p.name[8:].isdigit()]
    if not numbered:
        return set()
    text = max(numbered)[1].read_text(errors="replace")
    return set(re.findall(r'^\[CFOptions "(.*)"\]', text, re.MULTILINE))
