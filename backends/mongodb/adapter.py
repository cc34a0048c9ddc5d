"""MongoDB backend through pymongo; also runs on FerretDB (see ``docs/backends/mongodb.md``).

Layout, in one database (default ``lochkit``), collection names prefixed (default ``lochkit_``):

* ``refs``: ``{_id, r: repo, p: pointer, d: deleted, c: created µs, e: extended info or null,
  h: previous pointers}``
* ``objs``: ``{_id, r: repo, y: type code, V: version token or null, z: referenced µs, v: data}``
* ``meta``: one ``{_id: "schema", version}`` document naming the layout version.

With ``layout=nessie`` the collections and documents are Nessie's own instead (``refs2``/``objs2``,
see :class:`backends.mongodb.statements.NessieDocuments`); everything below applies to both.

``_id`` is a string, ``<len(repo)>:<repo>:<name or hex id>``: the length prefix keeps repository
ids that prefix each other apart, and a plain string (unlike a ``{r, n}`` sub-document) cannot
mismatch on field order. The separate ``r`` field is indexed (``objs``: with ``y``), so scans and
erasure by repository use an index instead of reading the whole collection.

Compare-and-swap is one filtered ``replace_one``/``delete_one`` on the full expected state,
evaluated atomically by mongod. FerretDB evaluates such a filter and then writes by ``_id`` in a
separate step, so writers can interleave: on FerretDB this adapter serialises its writes within the
process and declares ``multi_process=False``.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Final

from backends.mongodb.capabilities import for_server
from backends.mongodb.config import MongoSettings
from backends.mongodb.errors import ErrorContext, duplicates, mapped_errors
from backends.mongodb.schema import SCHEMA_VERSION, check, create, create_nessie
from backends.mongodb.statements import (
    LOCHKIT_DOCUMENTS,
    NESSIE_DOCUMENTS,
    OBJS_COLLECTION,
    REFS_COLLECTION,
    Documents,
    id_filter,
)
from persist_spi.adapter import BackendAdapter, Capabilities, ObjRow, RefRow
from persist_spi.errors import UnknownOperationResult
from persist_spi.layouts import NESSIE_LAYOUT, StorageLayout

if TYPE_CHECKING:
    from pymongo import MongoClient
    from pymongo.collection import Collection as MongoCollection

#: ``$in`` lists per query: well below the 16 MiB command limit even for long repository ids.
FETCH_CHUNK: Final = 1000
SCAN_BATCH: Final = 500
#: Objects deleted per command when erasing repositories (see ``erase_repositories``).
ERASE_BATCH: Final = 10_000
UPSERT_ATTEMPTS: Final = 5
#: Update statements per command. FerretDB 1.x keeps each statement's read cursor, and so one of
#: its 100 pooled SQLite connections, until the whole command ends: 100 replacements of existing
#: documents in one command deadlock it (measured: 99 pass, 100 hang). mongod has no such limit.
UPDATE_BATCH: Final = 1000
FERRETDB_UPDATE_BATCH: Final = 20
#: FerretDB evaluates a write's filter, then writes by ``_id`` in another transaction, so two
#: compare-and-swaps can both "succeed". This lock serialises the writes of one process (every
#: adapter in it); across processes nothing can, so FerretDB is declared single-process.
_FERRETDB_WRITE_LOCK = threading.RLock()


class MongoAdapter(BackendAdapter):
    name = "mongodb"

    def __init__(self, settings: MongoSettings) -> None:
        from pymongo import MongoClient

        self._settings = settings
        self._ctx = ErrorContext(settings.address, settings.database, settings.has_credentials)
        with mapped_errors(self._ctx, "connect", write=False):
            self._client: MongoClient[dict[str, Any]] = MongoClient(settings.uri, **settings.client_options)
        try:
            with mapped_errors(self._ctx, "read the server's build info", write=False):
                self._build_info: dict[str, Any] = self._client.admin.command("buildInfo")
                self._max_bson = int(self._client.admin.command("hello").get("maxBsonObjectSize", 0))
            db = self._client[settings.database]
            prefix = settings.collection_prefix
            self._nessie = settings.layout is NESSIE_LAYOUT
            self._docs: Documents = NESSIE_DOCUMENTS if self._nessie else LOCHKIT_DOCUMENTS
            refs, objs = (REFS_COLLECTION, OBJS_COLLECTION) if self._nessie else ("refs", "objs")
            self._refs: MongoCollection[dict[str, Any]] = db[f"{prefix}{refs}"]
            self._objs: MongoCollection[dict[str, Any]] = db[f"{prefix}{objs}"]
            self._meta: MongoCollection[dict[str, Any]] = db[f"{prefix}meta"]
            if not self._nessie:  # Nessie's layout has no version document to check
                check(self._ctx, self._refs, self._objs, self._meta)
        except BaseException:
            self._client.close()
            raise
        self._is_ferretdb = "ferretdbVersion" in self._build_info
        self._write_lock: AbstractContextManager[Any] = (
            _FERRETDB_WRITE_LOCK if self._is_ferretdb else nullcontext()
        )
        self._update_batch = FERRETDB_UPDATE_BATCH if self._is_ferretdb else UPDATE_BATCH
        self._capabilities = for_server(max_bson_size=self._max_bson, is_ferretdb=self._is_ferretdb)

    # --- description -----------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def address(self) -> str:
        return self._settings.address

    @property
    def layout(self) -> StorageLayout:
        return self._settings.layout

    @property
    def is_ferretdb(self) -> bool:
        return self._is_ferretdb

    def server_version(self) -> str | None:
        info = self._build_info
        if self._is_ferretdb:
            return f"FerretDB {info['ferretdbVersion']} (MongoDB {info.get('version')} wire protocol)"
        return f"MongoDB {info.get('version')}"

    def setup_schema(self) -> str:
        if self._nessie:
            create_nessie(self._ctx, self._refs, self._objs)
            return f"mongodb at {self.address}: Nessie's collections {self._refs.name}, {self._objs.name}"
        create(self._ctx, self._refs, self._objs, self._meta)
        names = ", ".join(c.name for c in (self._refs, self._objs, self._meta))
        return f"mongodb at {self.address}: collections {names} (schema version {SCHEMA_VERSION})"

    def close(self) -> None:
        self._client.close()

    def _ids_filter(self, ids: Sequence[Any]) -> dict[str, Any]:
        """Documents with these ids. FerretDB indexes no sub-document ``_id`` and compares each
        stored one against every listed id, field by field: for Nessie's ids it gets the repository
        and the names or object ids as dotted fields instead (a 500-id read measured 1.5 s instead
        of 8.3 s on 5000 documents). mongod answers the whole ``_id`` list from its ``_id`` index."""
        if not (self._nessie and self._is_ferretdb and len(ids) > 1):
            return id_filter(ids)
        repo = ids[0]["r"]
        field = "n" if "n" in ids[0] else "i"
        return {"_id.r": repo, f"_id.{field}": {"$in": [i[field] for i in ids]}}

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        found: dict[str, RefRow] = {}
        with mapped_errors(self._ctx, "read references", write=False):
            for start in range(0, len(names), FETCH_CHUNK):
                keys = [self._docs.ref_id(repo, n) for n in names[start : start + FETCH_CHUNK]]
                for doc in self._refs.find(self._ids_filter(keys)):
                    row = self._docs.ref_row(repo, doc)
                    found[row.name] = row
        return [found.get(n) for n in names]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        from pymongo.errors import DuplicateKeyError

        with self._write_lock, mapped_errors(self._ctx, "create a reference", write=True):
            try:
                self._refs.insert_one(self._docs.ref_doc(repo, row))
            except DuplicateKeyError:
                return False
        return True

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        # matched (not modified) decides: rewriting identical values is still a successful swap.
        with self._write_lock, mapped_errors(self._ctx, "update a reference", write=True):
            result = self._refs.replace_one(
                self._docs.ref_condition(repo, expected), self._docs.ref_doc(repo, new)
            )
        return result.matched_count == 1

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        with self._write_lock, mapped_errors(self._ctx, "delete a reference", write=True):
            result = self._refs.delete_one(self._docs.ref_condition(repo, expected))
        return result.deleted_count == 1

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        found: dict[bytes, ObjRow] = {}
        with mapped_errors(self._ctx, "read objects", write=False):
            for start in range(0, len(ids), FETCH_CHUNK):
                keys = [self._docs.obj_id(repo, i) for i in ids[start : start + FETCH_CHUNK]]
                for doc in self._objs.find(self._ids_filter(keys)):
                    row = self._docs.obj_row(repo, doc)
                    found[row.obj_id] = row
        return [found.get(i) for i in ids]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        if not rows:
            return []  # insert_many refuses an empty list
        with self._write_lock, mapped_errors(self._ctx, "store objects", write=True):
            existing = self._insert_absent(repo, rows)
            self._bump_referenced(repo, [rows[i] for i in sorted(existing)])
        return [i not in existing for i in range(len(rows))]

    def _insert_absent(self, repo: str, rows: Sequence[ObjRow]) -> set[int]:
        """Insert every row; returns the positions that already existed. Unordered, so one
        duplicate does not stop the others."""
        from pymongo.errors import BulkWriteError

        try:
            self._objs.insert_many([self._docs.obj_doc(repo, r) for r in rows], ordered=False)
        except BulkWriteError as e:
            return duplicates(e, self._ctx, "store objects")
        return set()

    def _bump_referenced(self, repo: str, rows: Sequence[ObjRow]) -> None:
        """An existing object keeps its bytes but takes the new ``referenced`` (one update per
        distinct value; a Persist call uses one timestamp for all rows)."""
        from bson import Int64

        by_value: dict[int, list[Any]] = defaultdict(list)
        for row in rows:
            by_value[row.referenced].append(self._docs.obj_id(repo, row.obj_id))
        for referenced, keys in by_value.items():
            for start in range(0, len(keys), FETCH_CHUNK):
                chunk = keys[start : start + FETCH_CHUNK]
                self._objs.update_many(self._ids_filter(chunk), {"$set": {"z": Int64(referenced)}})

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        docs = [self._docs.obj_doc(repo, r) for r in rows]
        with self._write_lock, mapped_errors(self._ctx, "upsert objects", write=True):
            for start in range(0, len(docs), self._update_batch):
                self._replace_upsert(docs[start : start + self._update_batch])

    def _replace_upsert(self, docs: list[dict[str, Any]]) -> None:
        from pymongo import ReplaceOne
        from pymongo.errors import BulkWriteError

        pending = docs
        for _ in range(UPSERT_ATTEMPTS):
            try:
                self._objs.bulk_write(
                    [ReplaceOne({"_id": d["_id"]}, d, upsert=True) for d in pending], ordered=False
                )
                return
            except BulkWriteError as e:
                # Two upserts of a new id can both try the insert; the loser sees a duplicate key
                # and must simply replace the document that now exists.
                pending = [pending[i] for i in sorted(duplicates(e, self._ctx, "upsert objects"))]
        raise UnknownOperationResult(
            f"mongodb at {self.address}: upsert objects kept colliding with concurrent inserts; retry it"
        )

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        with self._write_lock, mapped_errors(self._ctx, "delete objects", write=True):
            for start in range(0, len(ids), FETCH_CHUNK):
                keys = [self._docs.obj_id(repo, i) for i in ids[start : start + FETCH_CHUNK]]
                self._objs.delete_many(self._ids_filter(keys))

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        from bson import Int64

        condition = {"_id": self._docs.obj_id(repo, obj_id), "z": Int64(referenced)}
        with self._write_lock, mapped_errors(self._ctx, "delete an object", write=True):
            return self._objs.delete_one(condition).deleted_count == 1

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        condition = {"_id": self._docs.obj_id(repo, row.obj_id), "y": expected_type, "V": expected_token}
        with self._write_lock, mapped_errors(self._ctx, "update an object", write=True):
            return self._objs.replace_one(condition, self._docs.obj_doc(repo, row)).matched_count == 1

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        condition = {"_id": self._docs.obj_id(repo, obj_id), "y": expected_type, "V": expected_token}
        with self._write_lock, mapped_errors(self._ctx, "delete an object", write=True):
            return self._objs.delete_one(condition).deleted_count == 1

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        query: dict[str, Any] = {self._docs.repo_field: repo}
        if types is not None:
            query["y"] = {"$in": sorted(types)}
        with mapped_errors(self._ctx, "scan objects", write=False):
            cursor = self._objs.find(query, batch_size=SCAN_BATCH)
            try:
                for doc in cursor:
                    yield self._docs.obj_row(repo, doc)
            finally:
                cursor.close()  # also when the caller abandons the scan (GeneratorExit)

    def list_repositories(self) -> Iterator[str]:
        with mapped_errors(self._ctx, "list repositories", write=False):
            repos = [str(r) for r in self._refs.distinct(self._docs.repo_field)]
        yield from repos

    def erase_repositories(self, repos: Collection[str]) -> None:
        """Objects go in batches of :data:`ERASE_BATCH` ids: FerretDB deletes every document a
        filter matches with one SQLite statement of one variable per document, and SQLite refuses
        more than 32,766 (a bench repository of 50,000 objects was left behind that way)."""
        wanted = {self._docs.repo_field: {"$in": sorted(repos)}}
        with self._write_lock, mapped_errors(self._ctx, "erase repositories", write=True):
            self._refs.delete_many(wanted)
            while ids := [doc["_id"] for doc in self._objs.find(wanted, {"_id": 1}).limit(ERASE_BATCH)]:
                self._objs.delete_many({"_id": {"$in": ids}})
