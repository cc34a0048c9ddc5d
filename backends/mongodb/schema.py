"""The collections and indexes of the MongoDB backend, created on first use, and the schema-version
document that makes a lochkit refuse collections of another layout (lochkit's layout only: Nessie's
has no such document)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from backends.mongodb.errors import BACKEND, ErrorContext, mapped_errors
from persist_spi.errors import BackendSchemaMismatch

if TYPE_CHECKING:
    from pymongo.collection import Collection
    from pymongo.database import Database

    Coll = Collection[dict[str, Any]]

SCHEMA_VERSION: Final = 1


def create(ctx: ErrorContext, refs: Coll, objs: Coll, meta: Coll) -> None:
    """Create what is missing (collections, indexes, the version document); idempotent, and safe
    when other processes do the same at the same time."""
    from pymongo import ASCENDING

    with mapped_errors(ctx, "create collections and indexes", write=True):
        check(ctx, refs, objs, meta)
        existing = set(refs.database.list_collection_names())
        for coll in (refs, objs, meta):
            if coll.name not in existing:
                _create_collection(refs.database, coll.name)
        refs.create_index([("r", ASCENDING)], name="repo")
        objs.create_index([("r", ASCENDING), ("y", ASCENDING)], name="repo_type")
        _record_schema_version(ctx, refs, objs, meta)


def create_nessie(ctx: ErrorContext, refs: Coll, objs: Coll) -> None:
    """Nessie's collections, and two indexes Nessie does not create: Nessie ignores them (it never
    names an index), and they spare scans, repository listing and erasure (all by ``_id.r``) a
    collection scan on MongoDB."""
    from pymongo import ASCENDING

    with mapped_errors(ctx, "create collections and indexes", write=True):
        existing = set(refs.database.list_collection_names())
        for coll in (refs, objs):
            if coll.name not in existing:
                _create_collection(refs.database, coll.name)
        refs.create_index([("_id.r", ASCENDING)], name="repo")
        objs.create_index([("_id.r", ASCENDING), ("y", ASCENDING)], name="repo_type")


def _create_collection(database: Database[dict[str, Any]], name: str) -> None:
    from pymongo.errors import CollectionInvalid, OperationFailure

    try:
        database.create_collection(name)
    except (CollectionInvalid, OperationFailure) as e:
        # Another process created it between our listing and our create: that is fine.
        if isinstance(e, OperationFailure) and e.code != 48:  # NamespaceExists
            raise


def _record_schema_version(ctx: ErrorContext, refs: Coll, objs: Coll, meta: Coll) -> None:
    from pymongo.errors import DuplicateKeyError

    try:
        meta.insert_one({"_id": "schema", "version": SCHEMA_VERSION, "layout": "lochkit"})
    except DuplicateKeyError:
        check(ctx, refs, objs, meta)  # created concurrently: make sure it is ours


def check(ctx: ErrorContext, refs: Coll, objs: Coll, meta: Coll) -> None:
    """Refuse collections that hold data of another layout (or of no recorded layout)."""
    with mapped_errors(ctx, "read the schema version", write=False):
        marker = meta.find_one({"_id": "schema"})
        if marker is None:
            # lochkit writes data only after setup_schema() has written the marker.
            holds_data = any(c.find_one({}, {"_id": 1}) for c in (refs, objs))
    if marker is not None and marker.get("version") == SCHEMA_VERSION:
        return
    if marker is None and not holds_data:
        return  # nothing there yet: setup_schema records the version
    if marker is None:
        found = "no schema version (not written by lochkit's setup_schema)"
    else:
        found = f"schema version {marker.get('version')}"
    raise BackendSchemaMismatch(
        BACKEND,
        ctx.address,
        f"collections {refs.name}/{objs.name} hold data with {found}; this lochkit "
        f"uses schema version {SCHEMA_VERSION}",
        "use the lochkit version that wrote the data, or another database or collection_prefix",
    )
