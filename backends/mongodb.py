"""MongoDB backend through pymongo; also runs on FerretDB (see ``docs/backends/mongodb.md``).

Layout, in one database (default ``lochkit``), collection names prefixed (default ``lochkit_``):

* ``refs``: ``{_id, r: repo, p: pointer, d: deleted, c: created µs, e: extended info or null,
  h: previous pointers}``
* ``objs``: ``{_id, r: repo, y: type code, V: version token or null, z: referenced µs, v: data}``
* ``meta``: one ``{_id: "schema", version}`` document naming the layout version.

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
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Final

from backends.mongodb_config import DEFAULT_URL, MongoSettings, parse_settings
from backends.mongodb_errors import DUPLICATE_KEY, ErrorContext, mapped_errors
from persist_spi.adapter import BackendAdapter, Capabilities, ObjRow, RefRow
from persist_spi.errors import BackendSchemaMismatch, UnknownOperationResult
from persist_spi.registry import BackendFactory

if TYPE_CHECKING:
    from pymongo import MongoClient
    from pymongo.collection import Collection as MongoCollection
    from pymongo.errors import BulkWriteError

SCHEMA_VERSION: Final = 1
#: MongoDB's document limit (``maxBsonObjectSize``), also FerretDB's default.
MAX_BSON_SIZE: Final = 16 * 1024 * 1024
#: Room for the other fields of an object document: ids, type, token, field names (a 64 KiB
#: repository id or version token would still fit).
DOCUMENT_OVERHEAD: Final = 64 * 1024
#: ``$in`` lists per query: well below the 16 MiB command limit even for long repository ids.
FETCH_CHUNK: Final = 1000
SCAN_BATCH: Final = 500
UPSERT_ATTEMPTS: Final = 5
#: Update statements per command. FerretDB 1.x keeps each statement's read cursor, and so one of
#: its 100 pooled SQLite connections, until the whole command ends: 100 replacements of existing
#: documents in one command deadlock it (measured: 99 pass, 100 hang). mongod has no such limit.
UPDATE_BATCH: Final = 1000
FERRETDB_UPDATE_BATCH: Final = 20
_FERRETDB_CAS_REASON = (
    "FerretDB evaluates a conditional update's filter and its write in separate steps, so "
    "compare-and-swap is not atomic across processes (lost updates seen in 3 of 4 runs); lochkit "
    "serialises writes within one process instead. Real MongoDB declares this capability"
)

CAPABILITIES = Capabilities(
    hard_object_size_limit=MAX_BSON_SIZE - DOCUMENT_OVERHEAD,
    multi_process=True,
    durable=True,
    lists_repositories=True,
)
#: FerretDB evaluates a write's filter, then writes by ``_id`` in another transaction, so two
#: compare-and-swaps can both "succeed". This lock serialises the writes of one process (every
#: adapter in it); across processes nothing can, so FerretDB is declared single-process.
_FERRETDB_WRITE_LOCK = threading.RLock()


def _key(repo: str, name: str) -> str:
    return f"{len(repo)}:{repo}:{name}"


def _ref_doc(repo: str, row: RefRow) -> dict[str, Any]:
    from bson import Int64

    return {
        "_id": _key(repo, row.name),
        "r": repo,
        "p": row.pointer,
        "d": row.deleted,
        "c": Int64(row.created_at_micros),
        "e": row.extended_info,
        "h": row.previous_pointers,
    }


def _ref_condition(repo: str, row: RefRow) -> dict[str, Any]:
    """The whole compare-and-swap identity. ``e: None`` matches null and absent alike; lochkit
    always writes the field, so both mean "no extended info"."""
    doc = _ref_doc(repo, row)
    return {k: doc[k] for k in ("_id", "p", "d", "c", "e")}


def _ref_row(name: str, doc: Mapping[str, Any]) -> RefRow:
    ext = doc.get("e")
    return RefRow(
        name,
        bytes(doc["p"]),
        bool(doc["d"]),
        int(doc["c"]),
        None if ext is None else bytes(ext),
        bytes(doc.get("h") or b""),
    )


def _obj_doc(repo: str, row: ObjRow) -> dict[str, Any]:
    from bson import Int64

    return {
        "_id": _key(repo, row.obj_id.hex()),
        "r": repo,
        "y": row.obj_type,
        "V": row.version_token,
        "z": Int64(row.referenced),
        "v": row.data,
    }


def _obj_row(doc: Mapping[str, Any], prefix_len: int) -> ObjRow:
    obj_id = bytes.fromhex(doc["_id"][prefix_len:])
    return ObjRow(obj_id, doc["y"], doc.get("V"), bytes(doc["v"]), int(doc["z"]))


def _id_filter(ids: Sequence[str]) -> dict[str, Any]:
    # A lone id as plain equality: FerretDB only turns ``{_id: "..."}`` into an indexed lookup.
    return {"_id": ids[0]} if len(ids) == 1 else {"_id": {"$in": list(ids)}}


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
            self._refs: MongoCollection[dict[str, Any]] = db[f"{prefix}refs"]
            self._objs: MongoCollection[dict[str, Any]] = db[f"{prefix}objs"]
            self._meta: MongoCollection[dict[str, Any]] = db[f"{prefix}meta"]
            self._check_schema()
        except BaseException:
            self._client.close()
            raise
        self._is_ferretdb = "ferretdbVersion" in self._build_info
        self._write_lock: AbstractContextManager[Any] = (
            _FERRETDB_WRITE_LOCK if self._is_ferretdb else nullcontext()
        )
        self._update_batch = FERRETDB_UPDATE_BATCH if self._is_ferretdb else UPDATE_BATCH
        self._capabilities = self._server_capabilities()

    # --- description -----------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    @property
    def address(self) -> str:
        return self._settings.address

    @property
    def is_ferretdb(self) -> bool:
        return self._is_ferretdb

    def server_version(self) -> str | None:
        info = self._build_info
        if self._is_ferretdb:
            return f"FerretDB {info['ferretdbVersion']} (MongoDB {info.get('version')} wire protocol)"
        return f"MongoDB {info.get('version')}"

    def _server_capabilities(self) -> Capabilities:
        limit = CAPABILITIES.hard_object_size_limit
        if 0 < self._max_bson < MAX_BSON_SIZE:  # a server configured below the usual 16 MiB
            limit = self._max_bson - DOCUMENT_OVERHEAD
        # Not a deviation (a strict expected failure): FerretDB's lost updates between processes
        # are a race, observed in most runs but not all, so the honest declaration is the capability.
        reasons = {"multi_process": _FERRETDB_CAS_REASON} if self._is_ferretdb else {}
        return Capabilities(
            hard_object_size_limit=limit,
            multi_process=not self._is_ferretdb,
            durable=True,
            lists_repositories=True,
            capability_reasons=reasons,
        )

    def setup_schema(self) -> str:
        from pymongo import ASCENDING

        with mapped_errors(self._ctx, "create collections and indexes", write=True):
            self._check_schema()
            existing = set(self._refs.database.list_collection_names())
            for coll in (self._refs, self._objs, self._meta):
                if coll.name not in existing:
                    self._create_collection(coll.name)
            self._refs.create_index([("r", ASCENDING)], name="repo")
            self._objs.create_index([("r", ASCENDING), ("y", ASCENDING)], name="repo_type")
            self._record_schema_version()
        names = ", ".join(c.name for c in (self._refs, self._objs, self._meta))
        return f"mongodb at {self.address}: collections {names} (schema version {SCHEMA_VERSION})"

    def _create_collection(self, name: str) -> None:
        from pymongo.errors import CollectionInvalid, OperationFailure

        try:
            self._refs.database.create_collection(name)
        except (CollectionInvalid, OperationFailure) as e:
            # Another process created it between our listing and our create: that is fine.
            if isinstance(e, OperationFailure) and e.code != 48:  # NamespaceExists
                raise

    def _record_schema_version(self) -> None:
        from pymongo.errors import DuplicateKeyError

        try:
            self._meta.insert_one({"_id": "schema", "version": SCHEMA_VERSION, "layout": "lochkit"})
        except DuplicateKeyError:
            self._check_schema()  # created concurrently: make sure it is ours

    def _check_schema(self) -> None:
        with mapped_errors(self._ctx, "read the schema version", write=False):
            marker = self._meta.find_one({"_id": "schema"})
            if marker is None:
                # lochkit writes data only after setup_schema() has written the marker.
                holds_data = any(c.find_one({}, {"_id": 1}) for c in (self._refs, self._objs))
        if marker is not None and marker.get("version") == SCHEMA_VERSION:
            return
        if marker is None and not holds_data:
            return  # nothing there yet: setup_schema records the version
        if marker is None:
            found = "no schema version (not written by lochkit's setup_schema)"
        else:
            found = f"schema version {marker.get('version')}"
        raise BackendSchemaMismatch(
            self.name,
            self.address,
            f"collections {self._refs.name}/{self._objs.name} hold data with {found}; this lochkit "
            f"uses schema version {SCHEMA_VERSION}",
            "use the lochkit version that wrote the data, or another database or collection_prefix",
        )

    def close(self) -> None:
        self._client.close()

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        prefix_len = len(_key(repo, ""))
        found: dict[str, RefRow] = {}
        with mapped_errors(self._ctx, "read references", write=False):
            for start in range(0, len(names), FETCH_CHUNK):
                keys = [_key(repo, n) for n in names[start : start + FETCH_CHUNK]]
                for doc in self._refs.find(_id_filter(keys)):
                    name = doc["_id"][prefix_len:]
                    found[name] = _ref_row(name, doc)
        return [found.get(n) for n in names]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        from pymongo.errors import DuplicateKeyError

        with self._write_lock, mapped_errors(self._ctx, "create a reference", write=True):
            try:
                self._refs.insert_one(_ref_doc(repo, row))
            except DuplicateKeyError:
                return False
        return True

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        # matched (not modified) decides: rewriting identical values is still a successful swap.
        with self._write_lock, mapped_errors(self._ctx, "update a reference", write=True):
            result = self._refs.replace_one(_ref_condition(repo, expected), _ref_doc(repo, new))
        return result.matched_count == 1

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        with self._write_lock, mapped_errors(self._ctx, "delete a reference", write=True):
            result = self._refs.delete_one(_ref_condition(repo, expected))
        return result.deleted_count == 1

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        prefix_len = len(_key(repo, ""))
        found: dict[bytes, ObjRow] = {}
        with mapped_errors(self._ctx, "read objects", write=False):
            for start in range(0, len(ids), FETCH_CHUNK):
                keys = [_key(repo, i.hex()) for i in ids[start : start + FETCH_CHUNK]]
                for doc in self._objs.find(_id_filter(keys)):
                    row = _obj_row(doc, prefix_len)
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
            self._objs.insert_many([_obj_doc(repo, r) for r in rows], ordered=False)
        except BulkWriteError as e:
            return _duplicates(e, self._ctx, "store objects")
        return set()

    def _bump_referenced(self, repo: str, rows: Sequence[ObjRow]) -> None:
        """An existing object keeps its bytes but takes the new ``referenced`` (one update per
        distinct value; a Persist call uses one timestamp for all rows)."""
        from bson import Int64

        by_value: dict[int, list[str]] = defaultdict(list)
        for row in rows:
            by_value[row.referenced].append(_key(repo, row.obj_id.hex()))
        for referenced, keys in by_value.items():
            for start in range(0, len(keys), FETCH_CHUNK):
                chunk = keys[start : start + FETCH_CHUNK]
                self._objs.update_many(_id_filter(chunk), {"$set": {"z": Int64(referenced)}})

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        docs = [_obj_doc(repo, r) for r in rows]
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
                pending = [pending[i] for i in sorted(_duplicates(e, self._ctx, "upsert objects"))]
        raise UnknownOperationResult(
            f"mongodb at {self.address}: upsert objects kept colliding with concurrent inserts; retry it"
        )

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        with self._write_lock, mapped_errors(self._ctx, "delete objects", write=True):
            for start in range(0, len(ids), FETCH_CHUNK):
                keys = [_key(repo, i.hex()) for i in ids[start : start + FETCH_CHUNK]]
                self._objs.delete_many(_id_filter(keys))

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        from bson import Int64

        condition = {"_id": _key(repo, obj_id.hex()), "z": Int64(referenced)}
        with self._write_lock, mapped_errors(self._ctx, "delete an object", write=True):
            return self._objs.delete_one(condition).deleted_count == 1

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        condition = {"_id": _key(repo, row.obj_id.hex()), "y": expected_type, "V": expected_token}
        with self._write_lock, mapped_errors(self._ctx, "update an object", write=True):
            return self._objs.replace_one(condition, _obj_doc(repo, row)).matched_count == 1

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        condition = {"_id": _key(repo, obj_id.hex()), "y": expected_type, "V": expected_token}
        with self._write_lock, mapped_errors(self._ctx, "delete an object", write=True):
            return self._objs.delete_one(condition).deleted_count == 1

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        query: dict[str, Any] = {"r": repo}
        if types is not None:
            query["y"] = {"$in": sorted(types)}
        prefix_len = len(_key(repo, ""))
        with mapped_errors(self._ctx, "scan objects", write=False):
            cursor = self._objs.find(query, batch_size=SCAN_BATCH)
            try:
                for doc in cursor:
                    yield _obj_row(doc, prefix_len)
            finally:
                cursor.close()  # also when the caller abandons the scan (GeneratorExit)

    def list_repositories(self) -> Iterator[str]:
        with mapped_errors(self._ctx, "list repositories", write=False):
            repos = [str(r) for r in self._refs.distinct("r")]
        yield from repos

    def erase_repositories(self, repos: Collection[str]) -> None:
        wanted = {"r": {"$in": sorted(repos)}}
        with self._write_lock, mapped_errors(self._ctx, "erase repositories", write=True):
            self._refs.delete_many(wanted)
            self._objs.delete_many(wanted)


def _duplicates(error: BulkWriteError, ctx: ErrorContext, operation: str) -> set[int]:
    """Positions that failed only because the id exists; any other failure is raised."""
    details = error.details
    if details.get("writeConcernErrors"):
        # Written on the primary, but not confirmed by a majority: may still be rolled back.
        raise UnknownOperationResult(
            f"mongodb at {ctx.address}: {operation}: the write concern was not satisfied "
            f"({details['writeConcernErrors'][0].get('errmsg')}); it may or may not persist, retry it"
        ) from error
    duplicates = set()
    for write_error in details.get("writeErrors", []):
        if write_error.get("code") != DUPLICATE_KEY:
            raise error  # not ours to interpret: the caller's error mapping decides
        duplicates.add(int(write_error["index"]))
    return duplicates


class MongoBackendFactory(BackendFactory):
    """``mongodb://[user:password@]host:port/[database]?driver-options``; lochkit's options
    ``database`` and ``collection_prefix`` may also be given in the URL query."""

    name = "mongodb"
    description = "MongoDB (pymongo); also FerretDB 1.x, as a single-process store"
    required_modules = ("pymongo",)
    extra = "mongodb"
    default_url = DEFAULT_URL

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> MongoAdapter:
        return MongoAdapter(parse_settings(url, options))
