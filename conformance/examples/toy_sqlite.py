"""A toy third-party adapter on SQLite (the standard library's sqlite3), written the way someone
outside lochkit would: subclass BackendAdapter, move bytes, do compare-and-swap."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from persist_spi import BackendAdapter, BackendFactory, Capabilities, ObjRow, RefRow

CAPABILITIES = Capabilities(
    multi_process=False,
    durable=True,
    capability_reasons={
        "hard_object_size_limit": "SQLite's BLOB limit (1 GB by default) is beyond anything the core writes",
        "multi_process": "this toy keeps one connection and serialises its writes in-process",
        "lists_repositories": "listing repositories is optional; this toy leaves it out, as a "
        "minimal adapter may",
    },
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS refs (repo TEXT, name TEXT, pointer BLOB, deleted INTEGER, created INTEGER,
                                 ext BLOB, prev BLOB, PRIMARY KEY (repo, name));
CREATE TABLE IF NOT EXISTS objs (repo TEXT, id BLOB, type TEXT, token TEXT, data BLOB, referenced INTEGER,
                                 PRIMARY KEY (repo, id));
"""
REF_MATCH = "repo=? AND name=? AND pointer=? AND deleted=? AND created=? AND ext IS ?"


def ref_match_args(repo: str, expected: RefRow) -> tuple[object, ...]:
    """The values for REF_MATCH: the compare-and-swap condition of a reference row."""
    return (
        repo,
        expected.name,
        expected.pointer,
        int(expected.deleted),
        expected.created_at_micros,
        expected.extended_info,
    )


def ref_values(row: RefRow) -> tuple[object, ...]:
    """The values of a row's columns after its name, in table order."""
    return row.pointer, int(row.deleted), row.created_at_micros, row.extended_info, row.previous_pointers


class ToySqliteAdapter(BackendAdapter):
    name = "toy-sqlite"

    def __init__(self, path: Path, scratch_dir: Path | None = None) -> None:
        self._scratch_dir = scratch_dir  # a temporary directory of ours, removed on close
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()  # one connection, used by one thread at a time
        # WAL without a sync per statement: a test database, durable across clean closes.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def setup_schema(self) -> str:
        with self._lock:
            self._db.executescript(SCHEMA)
        return "toy-sqlite: tables refs, objs"

    def close(self) -> None:
        self._db.close()
        if self._scratch_dir is not None:
            shutil.rmtree(self._scratch_dir, ignore_errors=True)

    def _run(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, args)

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        rows = {}
        for name in names:
            row = self._run(
                "SELECT name, pointer, deleted, created, ext, prev FROM refs WHERE repo=? AND name=?",
                (repo, name),
            ).fetchone()
            if row:
                rows[name] = RefRow(row[0], row[1], bool(row[2]), row[3], row[4], row[5])
        return [rows.get(n) for n in names]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        cursor = self._run(
            "INSERT OR IGNORE INTO refs VALUES (?,?,?,?,?,?,?)", (repo, row.name, *ref_values(row))
        )
        return cursor.rowcount == 1

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        cursor = self._run(
            f"UPDATE refs SET pointer=?, deleted=?, created=?, ext=?, prev=? WHERE {REF_MATCH}",
            (*ref_values(new), *ref_match_args(repo, expected)),
        )
        return cursor.rowcount == 1

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        cursor = self._run(f"DELETE FROM refs WHERE {REF_MATCH}", ref_match_args(repo, expected))
        return cursor.rowcount == 1

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        found: dict[bytes, ObjRow] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for row in self._run(
                f"SELECT id, type, token, data, referenced FROM objs WHERE repo=? AND id IN ({marks})",
                (repo, *chunk),
            ):
                found[row[0]] = ObjRow(*row)
        return [found.get(i) for i in ids]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        result = []
        for row in rows:
            # Both statements under one lock: a delete slipping in between would remove an object
            # its writer was just told exists (and garbage collection relies on ``referenced``).
            with self._lock:
                cursor = self._db.execute("INSERT OR IGNORE INTO objs VALUES (?,?,?,?,?,?)", (repo, *row))
                if cursor.rowcount != 1:
                    self._db.execute(
                        "UPDATE objs SET referenced=? WHERE repo=? AND id=?",
                        (row.referenced, repo, row.obj_id),
                    )
            result.append(cursor.rowcount == 1)
        return result

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        for row in rows:
            self._run("INSERT OR REPLACE INTO objs VALUES (?,?,?,?,?,?)", (repo, *row))

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        for obj_id in ids:
            self._run("DELETE FROM objs WHERE repo=? AND id=?", (repo, obj_id))

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        return (
            self._run(
                "DELETE FROM objs WHERE repo=? AND id=? AND referenced=?", (repo, obj_id, referenced)
            ).rowcount
            == 1
        )

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        return (
            self._run(
                "UPDATE objs SET token=?, data=?, referenced=? WHERE repo=? AND id=? AND type=? AND token=?",
                (
                    row.version_token,
                    row.data,
                    row.referenced,
                    repo,
                    row.obj_id,
                    expected_type,
                    expected_token,
                ),
            ).rowcount
            == 1
        )

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        return (
            self._run(
                "DELETE FROM objs WHERE repo=? AND id=? AND type=? AND token=?",
                (repo, obj_id, expected_type, expected_token),
            ).rowcount
            == 1
        )

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        rows = self._run(
            "SELECT id, type, token, data, referenced FROM objs WHERE repo=?", (repo,)
        ).fetchall()
        for row in rows:
            if types is None or row[1] in types:
                yield ObjRow(*row)

    def erase_repositories(self, repos: Collection[str]) -> None:
        for repo in repos:
            self._run("DELETE FROM refs WHERE repo=?", (repo,))
            self._run("DELETE FROM objs WHERE repo=?", (repo,))


class ToySqliteFactory(BackendFactory):
    name = "toy-sqlite"
    description = "A toy SQLite adapter, as a third party would write one"

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> ToySqliteAdapter:
        if url:
            return ToySqliteAdapter(Path(url))
        scratch = Path(tempfile.mkdtemp(prefix="toy-sqlite-"))
        return ToySqliteAdapter(scratch / "db.sqlite", scratch)

    def store_url_in(self, directory: Path) -> str:
        # The conformance suites close and reopen a store here to check that it is durable.
        return str(directory / "db.sqlite")
