"""Broken adapters derived from the toy SQLite adapter: bugs of SQL statements.

Each class overrides one method of :class:`~conformance.examples.toy_sqlite.ToySqliteAdapter` (or,
for the size limits, its schema and declaration) with one mistake of the kind SQL code makes: a
missing column in a WHERE clause, ``=`` where ``IS`` is needed for NULL, ``OR REPLACE`` for
``OR IGNORE``, an off-by-one chunk, a page that is never continued.
"""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
from collections.abc import Collection, Iterator, Sequence

from conformance.examples import toy_sqlite
from conformance.mutants.base import BrokenToySqlite
from persist_spi.adapter import ObjRow, RefRow

_OBJ_COLUMNS = "id, type, token, data, referenced"
_SCAN_PAGE = 100
_DROP_TABLES = "DROP TABLE IF EXISTS refs; DROP TABLE IF EXISTS objs;"


class InsertOverwritesExisting(BrokenToySqlite):
    """insert_objs uses ``INSERT OR REPLACE``: an existing object is overwritten and reported new."""

    mutant = "insert-overwrites-existing"
    guarantee = "insert-if-absent"
    method = "insert_objs"

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        return [
            self._run("INSERT OR REPLACE INTO objs VALUES (?,?,?,?,?,?)", (repo, *row)).rowcount == 1
            for row in rows
        ]


class InsertCheckThenAct(BrokenToySqlite):
    """insert_objs as two statements: look for the id, then insert when it was absent. Two writers
    can both be told they created the same object."""

    mutant = "insert-check-then-act"
    guarantee = "insert-if-absent"
    method = "insert_objs"
    racy = True

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        result = []
        for row in rows:
            found = self._run("SELECT 1 FROM objs WHERE repo=? AND id=?", (repo, row.obj_id)).fetchone()
            if found:
                self._run(
                    "UPDATE objs SET referenced=? WHERE repo=? AND id=?", (row.referenced, repo, row.obj_id)
                )
                result.append(False)
            else:
                self._run("INSERT OR REPLACE INTO objs VALUES (?,?,?,?,?,?)", (repo, *row))
                result.append(True)
        return result


class InsertKeepsReferenced(BrokenToySqlite):
    """insert_objs ignores an existing row entirely, so its ``referenced`` never moves forward."""

    mutant = "insert-keeps-referenced"
    guarantee = "the referenced timestamp"
    method = "insert_objs"

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        return [
            self._run("INSERT OR IGNORE INTO objs VALUES (?,?,?,?,?,?)", (repo, *row)).rowcount == 1
            for row in rows
        ]


class BatchInsertAllOrNothing(BrokenToySqlite):
    """insert_objs writes a batch in one transaction; a duplicate id rolls it back and every row of
    the batch is reported as already present, the new ones included."""

    mutant = "batch-insert-all-or-nothing"
    guarantee = "insert-if-absent"
    method = "insert_objs"

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        with self._lock:
            try:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT INTO objs VALUES (?,?,?,?,?,?)", [(repo, *r) for r in rows])
                self._db.execute("COMMIT")
                return [True] * len(rows)
            except sqlite3.IntegrityError:
                self._db.execute("ROLLBACK")
            for row in rows:
                self._db.execute(
                    "UPDATE objs SET referenced=? WHERE repo=? AND id=?", (row.referenced, repo, row.obj_id)
                )
        return [False] * len(rows)


class UpsertKeepsExisting(BrokenToySqlite):
    """upsert_objs uses ``INSERT OR IGNORE``: an existing object is never replaced."""

    mutant = "upsert-keeps-existing"
    guarantee = "upserts"
    method = "upsert_objs"

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        for row in rows:
            self._run("INSERT OR IGNORE INTO objs VALUES (?,?,?,?,?,?)", (repo, *row))


class FetchObjsDatabaseOrder(BrokenToySqlite):
    """fetch_objs returns rows in the order the database yields them and drops missing ids,
    instead of one entry per requested id with None in place."""

    mutant = "fetch-objs-database-order"
    guarantee = "positional bulk calls"
    method = "fetch_objs"

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        found: list[ObjRow | None] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {_OBJ_COLUMNS} FROM objs WHERE repo=? AND id IN ({marks}) ORDER BY id"
            found.extend(ObjRow(*row) for row in self._run(sql, (repo, *chunk)))
        return found


class FetchObjsChunkOffByOne(BrokenToySqlite):
    """fetch_objs reads in chunks of 500 but slices 499 ids per chunk: every 500th id is never
    asked for and comes back as missing."""

    mutant = "fetch-objs-chunk-off-by-one"
    guarantee = "positional bulk calls"
    method = "fetch_objs"

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        found: dict[bytes, ObjRow] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 499])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {_OBJ_COLUMNS} FROM objs WHERE repo=? AND id IN ({marks})"
            for row in self._run(sql, (repo, *chunk)):
                found[row[0]] = ObjRow(*row)
        return [found.get(i) for i in ids]


class FetchObjsAnyRepository(BrokenToySqlite):
    """fetch_objs forgets ``repo=?`` in its WHERE clause: it finds objects of other repositories."""

    mutant = "fetch-objs-any-repository"
    guarantee = "repository isolation"
    method = "fetch_objs"

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        found: dict[bytes, ObjRow] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {_OBJ_COLUMNS} FROM objs WHERE id IN ({marks})"
            for row in self._run(sql, chunk):
                found[row[0]] = ObjRow(*row)
        return [found.get(i) for i in ids]


class InsertRefOverwrites(BrokenToySqlite):
    """insert_ref uses ``INSERT OR REPLACE``: creating an existing reference overwrites it."""

    mutant = "insert-ref-overwrites"
    guarantee = "insert-if-absent"
    method = "insert_ref"

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        cursor = self._run(
            "INSERT OR REPLACE INTO refs VALUES (?,?,?,?,?,?,?)",
            (repo, row.name, *toy_sqlite.ref_values(row)),
        )
        return cursor.rowcount == 1


class CasNullNeverMatches(BrokenToySqlite):
    """update_ref compares ``ext=?`` instead of ``ext IS ?``: in SQL, NULL = NULL is not true, so a
    reference without extended info can never be updated."""

    mutant = "cas-null-never-matches"
    guarantee = "atomic compare-and-swap"
    method = "update_ref"

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        cursor = self._run(
            "UPDATE refs SET pointer=?, deleted=?, created=?, ext=?, prev=? "
            "WHERE repo=? AND name=? AND pointer=? AND deleted=? AND created=? AND ext=?",
            (*toy_sqlite.ref_values(new), *toy_sqlite.ref_match_args(repo, expected)),
        )
        return cursor.rowcount == 1


class CasComparesPointerOnly(BrokenToySqlite):
    """update_ref compares only the pointer, not the deleted flag, creation time or extended info."""

    mutant = "cas-compares-pointer-only"
    guarantee = "atomic compare-and-swap"
    method = "update_ref"

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        cursor = self._run(
            "UPDATE refs SET pointer=?, deleted=?, created=?, ext=?, prev=? "
            "WHERE repo=? AND name=? AND pointer=?",
            (*toy_sqlite.ref_values(new), repo, expected.name, expected.pointer),
        )
        return cursor.rowcount == 1


class CasKeepsOldHistory(BrokenToySqlite):
    """update_ref writes the new pointer but forgets the ``prev`` column: history never grows."""

    mutant = "cas-keeps-old-history"
    guarantee = "history"
    method = "update_ref"

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        cursor = self._run(
            f"UPDATE refs SET pointer=?, deleted=?, created=?, ext=? WHERE {toy_sqlite.REF_MATCH}",
            (*toy_sqlite.ref_values(new)[:4], *toy_sqlite.ref_match_args(repo, expected)),
        )
        return cursor.rowcount == 1


class MarkDeletedNotStored(BrokenToySqlite):
    """update_ref forgets the ``deleted`` column: marking a reference deleted changes nothing."""

    mutant = "mark-deleted-not-stored"
    guarantee = "mark-deleted"
    method = "update_ref"

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        cursor = self._run(
            f"UPDATE refs SET pointer=?, created=?, ext=?, prev=? WHERE {toy_sqlite.REF_MATCH}",
            (
                new.pointer,
                new.created_at_micros,
                new.extended_info,
                new.previous_pointers,
                *toy_sqlite.ref_match_args(repo, expected),
            ),
        )
        return cursor.rowcount == 1


class PurgeUnconditional(BrokenToySqlite):
    """delete_ref deletes the name without comparing the row (not marked deleted, other pointer)."""

    mutant = "purge-unconditional"
    guarantee = "atomic compare-and-swap"
    method = "delete_ref"

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        return self._run("DELETE FROM refs WHERE repo=? AND name=?", (repo, expected.name)).rowcount == 1


class DeleteObjsAcrossRepositories(BrokenToySqlite):
    """delete_objs forgets ``repo=?``: deleting an id deletes it in every repository."""

    mutant = "delete-objs-across-repositories"
    guarantee = "repository isolation"
    method = "delete_objs"

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        for obj_id in ids:
            self._run("DELETE FROM objs WHERE id=?", (obj_id,))


class ConditionalUpdateIgnoresType(BrokenToySqlite):
    """update_obj_if_version compares the version token but not the stored type."""

    mutant = "conditional-update-ignores-type"
    guarantee = "conditional updates"
    method = "update_obj_if_version"

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        cursor = self._run(
            "UPDATE objs SET type=?, token=?, data=?, referenced=? WHERE repo=? AND id=? AND token=?",
            (row.obj_type, row.version_token, row.data, row.referenced, repo, row.obj_id, expected_token),
        )
        return cursor.rowcount == 1


class ConditionalUpdateKeepsReferenced(BrokenToySqlite):
    """update_obj_if_version writes token and data but not ``referenced``."""

    mutant = "conditional-update-keeps-referenced"
    guarantee = "the referenced timestamp"
    method = "update_obj_if_version"

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        cursor = self._run(
            "UPDATE objs SET token=?, data=? WHERE repo=? AND id=? AND type=? AND token=?",
            (row.version_token, row.data, repo, row.obj_id, expected_type, expected_token),
        )
        return cursor.rowcount == 1


class ConditionalDeleteIgnoresToken(BrokenToySqlite):
    """delete_obj_if_version compares the type but not the version token."""

    mutant = "conditional-delete-ignores-token"
    guarantee = "conditional updates"
    method = "delete_obj_if_version"

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        cursor = self._run("DELETE FROM objs WHERE repo=? AND id=? AND type=?", (repo, obj_id, expected_type))
        return cursor.rowcount == 1


class ConditionalDeleteReadThenDelete(BrokenToySqlite):
    """delete_obj_if_version as two statements: read type and token, compare them, then delete the
    id. Several deletes of one version all succeed, and a delete that read before a conditional
    update removes the new version."""

    mutant = "conditional-delete-read-then-delete"
    guarantee = "conditional updates"
    method = "delete_obj_if_version"
    racy = True

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        found = self._run("SELECT type, token FROM objs WHERE repo=? AND id=?", (repo, obj_id)).fetchone()
        if found is None or tuple(found) != (expected_type, expected_token):
            return False
        self._run("DELETE FROM objs WHERE repo=? AND id=?", (repo, obj_id))
        return True


class CasSelectThenUpdate(BrokenToySqlite):
    """update_ref as two statements: select the row and compare it, then update it by name. Two
    writers that read the same row both replace it, and both are told they won."""

    mutant = "cas-select-then-update"
    guarantee = "atomic compare-and-swap"
    method = "update_ref"
    racy = True

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        (current,) = self.fetch_refs(repo, [expected.name])
        if current is None or not current.same_condition(expected):
            return False
        self._run(
            "UPDATE refs SET pointer=?, deleted=?, created=?, ext=?, prev=? WHERE repo=? AND name=?",
            (*toy_sqlite.ref_values(new), repo, expected.name),
        )
        return True


class ScanIgnoresTypeFilter(BrokenToySqlite):
    """scan_objs returns objects of every type, whatever types were asked for."""

    mutant = "scan-ignores-type-filter"
    guarantee = "scans"
    method = "scan_objs"

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        return super().scan_objs(repo, None)


class ScanFirstPageOnly(BrokenToySqlite):
    """scan_objs reads one page of 100 rows and never asks for the next one."""

    mutant = "scan-first-page-only"
    guarantee = "scans"
    method = "scan_objs"

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        rows = self._run(f"SELECT {_OBJ_COLUMNS} FROM objs WHERE repo=? LIMIT 100", (repo,)).fetchall()
        for row in rows:
            if types is None or row[1] in types:
                yield ObjRow(*row)


class ScanNotCloseable(BrokenToySqlite):
    """scan_objs returns ``map()`` over the live cursor, with the type filter in SQL: it iterates
    like a generator but has no ``close()``, so a caller cannot end a half-read scan and its
    cursor stays open until garbage collection."""

    mutant = "scan-not-closeable"
    guarantee = "scans"
    method = "scan_objs"

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        sql, args = f"SELECT {_OBJ_COLUMNS} FROM objs WHERE repo=?", [repo]
        if types is not None:
            sql += f" AND type IN ({','.join('?' * len(types))})"
            args += sorted(types)
        return map(ObjRow._make, self._run(sql, args))


class ScanLeavesTransactionOpen(BrokenToySqlite):
    """scan_objs reads its pages inside one transaction, so that they form one snapshot, and
    commits after the last page: a scan closed half-way never gets there, its transaction stays
    open, and the next scan cannot begin one."""

    mutant = "scan-leaves-transaction-open"
    guarantee = "scans"
    method = "scan_objs"

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        self._run("BEGIN")
        for offset in itertools.count(0, _SCAN_PAGE):
            page = self._run(
                f"SELECT {_OBJ_COLUMNS} FROM objs WHERE repo=? ORDER BY id LIMIT ? OFFSET ?",
                (repo, _SCAN_PAGE, offset),
            ).fetchall()
            for row in page:
                if types is None or row[1] in types:
                    yield ObjRow(*row)
            if len(page) < _SCAN_PAGE:
                break
        self._run("COMMIT")


class EraseKeepsObjects(BrokenToySqlite):
    """erase_repositories deletes the references but forgets the objects table."""

    mutant = "erase-keeps-objects"
    guarantee = "erase"
    method = "erase_repositories"

    def erase_repositories(self, repos: Collection[str]) -> None:
        for repo in repos:
            self._run("DELETE FROM refs WHERE repo=?", (repo,))


class EraseByPrefix(BrokenToySqlite):
    """erase_repositories matches ``repo LIKE 'name%'``: erasing ``a`` also erases ``ab``."""

    mutant = "erase-by-prefix"
    guarantee = "repository isolation"
    method = "erase_repositories"

    def erase_repositories(self, repos: Collection[str]) -> None:
        for repo in repos:
            self._run("DELETE FROM refs WHERE repo LIKE ? || '%'", (repo,))
            self._run("DELETE FROM objs WHERE repo LIKE ? || '%'", (repo,))


class TruncatesAt64KiB(BrokenToySqlite):
    """Objects are cut at 64 KiB on write, as a ``BLOB`` column of MySQL would: larger objects come
    back shorter, silently."""

    mutant = "truncates-at-64kib"
    guarantee = "size limits"
    method = "insert_objs"

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        return super().insert_objs(repo, [row._replace(data=row.data[:65535]) for row in rows])

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        super().upsert_objs(repo, [row._replace(data=row.data[:65535]) for row in rows])


#: The limit the two size-limit mutants declare, like DynamoDB's item limit (in serialised bytes).
DECLARED_LIMIT = 256 * 1024


class _DatabaseLimit(BrokenToySqlite):
    """The schema enforces a size limit with a CHECK constraint; ``INSERT OR IGNORE`` then skips a
    row that breaks it without an error, and the adapter reports that row as already present."""

    CAPABILITIES = dataclasses.replace(toy_sqlite.CAPABILITIES, hard_object_size_limit=DECLARED_LIMIT)
    check: str

    def setup_schema(self) -> str:
        schema = toy_sqlite.SCHEMA.replace(
            "referenced INTEGER,", f"referenced INTEGER, CHECK (length(data) {self.check}),"
        )
        with self._lock:
            self._db.executescript(schema)
        return f"{self.mutant}: tables refs, objs"


class RefusedAtTheDeclaredLimit(_DatabaseLimit):
    """Declares a 256 KiB limit, but the database refuses an object of exactly 256 KiB (``<``
    where ``<=`` was meant); insert-if-absent reports it as already present and never stores it."""

    mutant = "refused-at-the-declared-limit"
    guarantee = "size limits"
    method = "capabilities"
    check = f"< {DECLARED_LIMIT}"


class RealLimitBelowDeclared(_DatabaseLimit):
    """Declares a 256 KiB limit while the database takes at most 200 KiB: objects in between are
    silently not stored."""

    mutant = "real-limit-below-declared"
    guarantee = "size limits"
    method = "capabilities"
    check = f"<= {200 * 1024}"


class SchemaSetupDropsTheTables(BrokenToySqlite):
    """setup_schema drops the tables before creating them (a script written for a fresh test
    database): a store opened again has lost everything written before, although the adapter
    declares it durable."""

    mutant = "schema-setup-drops-the-tables"
    guarantee = "durability"
    method = "setup_schema"

    def setup_schema(self) -> str:
        with self._lock:
            self._db.executescript(_DROP_TABLES + toy_sqlite.SCHEMA)
        return f"{self.mutant}: tables refs, objs"
