"""The mongodb backend's nessie layout on a real FerretDB process that this module starts: what lands
on the server is Nessie's own documents (read back raw, with pymongo), Nessie's reference filter
matches them, and what FerretDB 1.x does with the one operation of Nessie's store lochkit does not
use, an update with an aggregation pipeline. Each test uses a database of its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import bson
import pytest
from bson import Int64
from bson.raw_bson import RawBSONDocument
from pymongo import MongoClient
from pymongo.errors import OperationFailure

from backends.mongodb import MongoBackendFactory
from backends.mongodb.adapter import MongoAdapter
from backends.mongodb.statements import NESSIE_DOCUMENTS
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.layouts import NESSIE_LAYOUT
from provisioning.servers.mongodb import FerretDB, start_ferretdb

FACTORY = MongoBackendFactory()
#: What FerretDB 1.24 answers to ``update_one(filter, [pipeline])``: it types the update's ``u`` as
#: a document, so Nessie's ``updateReferencePointer`` (a pipeline update) cannot run on it.
PIPELINE_REFUSAL = "BSON field 'update.updates.u' is the wrong type 'array', expected type 'object'"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FerretDB]:
    ferret = start_ferretdb(tmp_path_factory.mktemp("ferretdb"))
    try:
        yield ferret
    finally:
        ferret.stop()


@pytest.fixture
def database() -> str:
    return f"nessie_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def client(server: FerretDB) -> Iterator[MongoClient[dict[str, Any]]]:
    raw: MongoClient[dict[str, Any]] = MongoClient(server.url)
    try:
        yield raw
    finally:
        raw.close()


@pytest.fixture
def adapter(server: FerretDB, database: str) -> Iterator[MongoAdapter]:
    opened = FACTORY.create(server.url, {"layout": "nessie", "database": database})
    try:
        opened.setup_schema()
        yield opened
    finally:
        opened.close()


def test_writes_nessies_documents(
    server: FerretDB, adapter: MongoAdapter, client: MongoClient[dict[str, Any]], database: str
) -> None:
    assert adapter.layout is NESSIE_LAYOUT
    assert sorted(client[database].list_collection_names()) == ["objs2", "refs2"]  # no meta document
    ref_row = RefRow("main", b"\x01" * 32, False, 0, None, b"")
    obj_row = ObjRow(b"\x02" * 32, "c", None, b"\x0a\x00", 77)
    assert adapter.insert_ref("repo", ref_row)
    assert adapter.insert_objs("repo", [obj_row]) == [True]

    raw: MongoClient[RawBSONDocument] = MongoClient(server.url, document_class=RawBSONDocument)
    try:
        ref = raw[database]["refs2"].find_one()
        obj = raw[database]["objs2"].find_one()
    finally:
        raw.close()
    assert ref is not None
    assert obj is not None
    assert list(ref["_id"].items()) == [("r", "repo"), ("n", "main")]
    assert list(ref) == ["_id", "p", "d"]  # c, e, h absent when empty
    assert list(obj["_id"]) == ["r", "i"]
    # byte for byte what the unit-tested mapping encodes (Binary subtype 0, Int64, field order)
    assert ref.raw == bson.encode(NESSIE_DOCUMENTS.ref_doc("repo", ref_row))
    assert obj.raw == bson.encode(NESSIE_DOCUMENTS.obj_doc("repo", obj_row))
    assert list(obj) == ["_id", "y", "z", "v"]  # no V without a version token
    typed = client[database]["objs2"].find_one({"z": {"$type": "long"}})
    assert typed is not None  # Int64, as Nessie's getLong needs


def test_nessies_reference_filter_matches_what_lochkit_wrote(
    adapter: MongoAdapter, client: MongoClient[dict[str, Any]], database: str
) -> None:
    row = RefRow("main", b"\x01" * 32, False, 0, None, b"")
    assert adapter.insert_ref("repo", row)
    nessie_filter = {
        "_id": {"r": "repo", "n": "main"},
        "p": b"\x01" * 32,
        "d": False,
        "c": {"$exists": False},
        "e": {"$exists": False},
    }
    assert client[database]["refs2"].count_documents(nessie_filter) == 1
    # and a lochkit swap from Nessie's shape keeps it: pointer moves, history appears
    moved = row._replace(pointer=b"\x03" * 32, created_at_micros=5, previous_pointers=b"\x0a\x01x")
    assert adapter.update_ref("repo", row, moved)
    assert adapter.fetch_refs("repo", ["main"]) == [moved]
    stored = client[database]["refs2"].find_one()
    assert stored is not None
    assert stored["c"] == Int64(5)
    assert "e" not in stored


def test_reads_documents_nessie_wrote(
    adapter: MongoAdapter, client: MongoClient[dict[str, Any]], database: str
) -> None:
    """Nessie's driver writes ``_id`` as r then n; a lookup of one reference compares the whole
    ``_id``, so a reversed id is another document, as it is to Nessie."""
    client[database]["refs2"].insert_one({"_id": {"r": "repo", "n": "b"}, "p": b"\x01", "d": True})
    client[database]["refs2"].insert_one({"_id": {"n": "c", "r": "repo"}, "p": b"\x01", "d": False})
    assert adapter.fetch_refs("repo", ["b"]) == [RefRow("b", b"\x01", True, 0, None, b"")]
    assert adapter.fetch_refs("repo", ["c"]) == [None]
    both = adapter.fetch_refs("repo", ["b", "x"])
    assert both == [RefRow("b", b"\x01", True, 0, None, b""), None]


def test_ferretdb_refuses_nessies_pipeline_update(client: MongoClient[dict[str, Any]], database: str) -> None:
    """Documents the gap: Nessie's MongoDB2Persist.updateReferencePointer sends an update with an
    aggregation pipeline, and FerretDB 1.x refuses it, so a Nessie server cannot commit or assign a
    branch on FerretDB. Fails (and must be revisited) the day FerretDB accepts it."""
    refs = client[database]["refs2"]
    refs.insert_one({"_id": {"r": "repo", "n": "main"}, "p": b"\x01", "d": False})
    with pytest.raises(OperationFailure) as refused:
        refs.update_one({"_id": {"r": "repo", "n": "main"}}, [{"$set": {"p": b"\x02"}}])
    details = refused.value.details
    assert details is not None
    assert (refused.value.code, details.get("codeName")) == (14, "TypeMismatch")
    assert details.get("errmsg") == PIPELINE_REFUSAL
    stored = refs.find_one()
    assert stored is not None
    assert stored["p"] == b"\x01"
