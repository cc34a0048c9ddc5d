"""Unit tests of the mongodb backend's nessie layout: the URL option, and documents shaped exactly
as Nessie's MONGODB2 store writes and filters them (``_id`` field order, absent fields, Int64,
Binary subtype 0), checked on their BSON encoding where the difference matters. Behaviour against
a real server is in the conformance suites (``--lochkit-layout nessie``)."""

from __future__ import annotations

from typing import Any

import bson
import pytest
from bson import Int64

from backends.mongodb.config import parse_settings
from backends.mongodb.statements import NESSIE_DOCUMENTS as DOCS
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT

FULL_REF = RefRow("refs/heads/main", b"\x01" * 32, False, 2**62, b"\x02" * 32, b"\x0a\x03abc")
EMPTY_REF = RefRow("main", b"\x03" * 32, True, 0, None, b"")
OBJ = ObjRow(b"\x00\xff" * 16, "c", None, b"\x0a\x01x", 1234567890123)


def binary_element(name: str, value: bytes) -> bytes:
    """A BSON element of type binary (0x05) with subtype 0, as Nessie's ``new Binary(bytes)``."""
    return b"\x05" + name.encode() + b"\x00" + len(value).to_bytes(4, "little") + b"\x00" + value


def _through_bson(doc: dict[str, Any]) -> dict[str, Any]:
    """What a server stores and gives back (Binary subtype 0 comes back as bytes)."""
    return bson.decode(bson.encode(doc))


# --- settings ------------------------------------------------------------------------------------


def test_layout_option_selects_nessies_database_by_default() -> None:
    assert parse_settings("mongodb://h:1/").layout is LOCHKIT_LAYOUT
    settings = parse_settings("mongodb://h:1/?layout=nessie")
    assert settings.layout is NESSIE_LAYOUT
    assert (settings.database, settings.address) == ("nessie", "mongodb://h:1/nessie")
    assert parse_settings("mongodb://h:1/mine", {"layout": "nessie"}).database == "mine"
    assert parse_settings("mongodb://h:1/", {"layout": "nessie", "database": "d"}).database == "d"


def test_layout_option_errors_say_what_to_do() -> None:
    with pytest.raises(BackendConfigError, match="unknown or unsupported layout 'nesie'") as info:
        parse_settings("mongodb://u:secret@h:1/?layout=nesie")
    assert "layout=nessie" in info.value.fix
    assert "secret" not in str(info.value)
    with pytest.raises(BackendConfigError, match="collection_prefix cannot be combined") as info:
        parse_settings("mongodb://h:1/?layout=nessie&collection_prefix=x_")
    assert "another database" in info.value.fix


# --- references ----------------------------------------------------------------------------------


def test_reference_id_is_repo_then_name() -> None:
    doc = DOCS.ref_doc("repo", FULL_REF)
    assert list(doc["_id"].items()) == [("r", "repo"), ("n", "refs/heads/main")]
    # the order reaches the wire: BSON of {r, n} differs from {n, r}
    assert bson.encode({"_id": doc["_id"]}) == bson.encode({"_id": {"r": "repo", "n": "refs/heads/main"}})


def test_reference_document_has_nessies_fields_and_types() -> None:
    doc = DOCS.ref_doc("repo", FULL_REF)
    assert sorted(doc) == ["_id", "c", "d", "e", "h", "p"]
    assert type(doc["c"]) is Int64
    assert doc["c"] == 2**62
    assert doc["d"] is False
    encoded = bson.encode(doc)
    assert binary_element("p", FULL_REF.pointer) in encoded
    assert binary_element("e", b"\x02" * 32) in encoded
    assert DOCS.ref_row("repo", _through_bson(doc)) == FULL_REF


def test_empty_reference_fields_are_absent_and_read_back_as_empty() -> None:
    doc = DOCS.ref_doc("repo", EMPTY_REF)
    assert sorted(doc) == ["_id", "d", "p"]  # no c (0), no e (None), no h (empty history)
    assert DOCS.ref_row("repo", _through_bson(doc)) == EMPTY_REF


def test_reference_condition_is_nessies_filter() -> None:
    full = DOCS.ref_condition("repo", FULL_REF)
    assert full == {
        "_id": {"r": "repo", "n": "refs/heads/main"},
        "p": b"\x01" * 32,
        "d": False,
        "c": Int64(2**62),
        "e": b"\x02" * 32,
    }
    empty = DOCS.ref_condition("repo", EMPTY_REF)
    assert (empty["c"], empty["e"]) == ({"$exists": False}, {"$exists": False})
    assert list(empty["_id"]) == ["r", "n"]


# --- objects -------------------------------------------------------------------------------------


def test_object_document_has_nessies_fields_and_types() -> None:
    doc = DOCS.obj_doc("re:po", OBJ)
    assert list(doc["_id"].items()) == [("r", "re:po"), ("i", OBJ.obj_id)]
    assert sorted(doc) == ["_id", "v", "y", "z"]  # no V without a version token
    assert type(doc["z"]) is Int64
    encoded = bson.encode(doc)
    assert binary_element("i", OBJ.obj_id) in encoded
    assert binary_element("v", OBJ.data) in encoded
    assert DOCS.obj_row("re:po", _through_bson(doc)) == OBJ


def test_updateable_object_keeps_its_token() -> None:
    row = OBJ._replace(obj_type="r", version_token="tok")
    doc = DOCS.obj_doc("repo", row)
    assert doc["V"] == "tok"
    assert DOCS.obj_row("repo", _through_bson(doc)) == row


def test_scans_and_erasure_use_the_repository_inside_the_id() -> None:
    assert DOCS.repo_field == "_id.r"
