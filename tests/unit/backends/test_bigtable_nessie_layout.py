"""Unit tests of the Bigtable backend's Nessie layout (``layout=nessie``): table names with Nessie's
table prefix, row keys ``repo:`` + name or raw id, the reference as one ``ReferenceProto`` cell
compared whole, object cells ``o``/``t``/``V``/``z`` and Nessie's fixed cell timestamp. Whether a
Nessie server and lochkit agree on them is shown against the emulator (conformance, shared-db)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.cloud.bigtable_v2")

from backends.bigtable.adapter import BigtableAdapter
from backends.bigtable.config import parse_url
from backends.bigtable.statements import (
    LOCHKIT_CELLS,
    NESSIE_CELL_TIMESTAMP_MICROS,
    NESSIE_CELLS,
    cell_format,
    nessie_type_name,
    prefix_end,
)
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import BackendConfigError, CorruptData
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT
from persist_spi.protowire import ProtoWriter

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[2] / "vectors" / "nessie-objproto.json").read_text(encoding="utf-8")
)
OBJ_ID = bytes(range(32))
POINTER = b"\x11" * 32


# --- tables and keys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "tables"),
    [
        ("layout=nessie", ("refs", "objs")),
        ("layout=nessie&table_prefix=", ("refs", "objs")),
        ("layout=nessie&table_prefix=prod", ("prod_refs", "prod_objs")),
        ("layout=NESSIE&table_prefix=x.y-z", ("x.y-z_refs", "x.y-z_objs")),
        # lochkit's own layout is unchanged: the prefix is prepended as it is.
        ("", ("lochkit_refs", "lochkit_objs")),
        ("table_prefix=prod", ("prodrefs", "prodobjs")),
    ],
)
def test_table_names_follow_nessies_table_prefix(query: str, tables: tuple[str, str]) -> None:
    settings = parse_url(f"bigtable://127.0.0.1:8086?{query}")
    assert (settings.refs_table, settings.objs_table) == tables


def test_the_layout_is_in_the_address_which_opens_the_same_tables_again() -> None:
    settings = parse_url("bigtable://127.0.0.1:8086?layout=nessie&table_prefix=p&project=p1&instance=i1")
    assert settings.layout is NESSIE_LAYOUT
    assert settings.address == "bigtable://127.0.0.1:8086?project=p1&instance=i1&layout=nessie&table_prefix=p"
    again = parse_url(settings.address)
    assert (again.layout, again.refs_table, again.project) == (NESSIE_LAYOUT, "p_refs", "p1")
    assert parse_url("bigtable://127.0.0.1:8086").layout is LOCHKIT_LAYOUT


def test_a_prefix_too_long_for_nessies_table_names_is_refused() -> None:
    parse_url(f"bigtable://127.0.0.1:8086?layout=nessie&table_prefix={'a' * 45}")
    with pytest.raises(BackendConfigError, match="invalid table_prefix"):
        parse_url(f"bigtable://127.0.0.1:8086?layout=nessie&table_prefix={'a' * 46}")
    with pytest.raises(BackendConfigError, match="invalid table_prefix"):
        parse_url("bigtable://127.0.0.1:8086?table_prefix=")  # lochkit's own tables need one


def test_row_keys_are_the_repository_id_and_a_colon() -> None:
    assert NESSIE_CELLS.repo_prefix("repo") == b"repo:"
    assert NESSIE_CELLS.repo_prefix("") == b":"
    assert NESSIE_CELLS.repo_prefix("\u00e4") == b"\xc3\xa4:"
    assert NESSIE_CELLS.repo_of_key(b"repo:refs/heads/a:b") == "repo"
    assert NESSIE_CELLS.repo_of_key(b":main") == ""
    assert NESSIE_CELLS.repo_of_key(b"no-colon") is None
    assert prefix_end(NESSIE_CELLS.repo_prefix("a")) == b"a;"
    assert NESSIE_CELLS.repository_id_problem("a:b") is not None
    assert NESSIE_CELLS.repository_id_problem("a_b") is None
    assert LOCHKIT_CELLS.repository_id_problem("a:b") is None
    assert cell_format(NESSIE_LAYOUT) is NESSIE_CELLS
    assert cell_format(LOCHKIT_LAYOUT) is LOCHKIT_CELLS


# --- references ----------------------------------------------------------------------------------


def _vector_row(vector: dict[str, Any]) -> RefRow:
    history = vector["previous_pointers_hex"]
    return RefRow(
        vector["ref_name"],
        bytes.fromhex(vector["pointer"]),
        vector["deleted"],
        vector["created_at_micros"],
        None if vector["extended_info_obj"] is None else bytes.fromhex(vector["extended_info_obj"]),
        b"" if history is None else bytes.fromhex(history),
    )


@pytest.mark.parametrize("vector", VECTORS["references"], ids=lambda v: v["name"])
def test_a_reference_is_one_cell_holding_nessies_reference_proto(vector: dict[str, Any]) -> None:
    """The cell holds the bytes Nessie's serializeReference wrote for the same reference, and the
    compare-and-swap compares exactly those bytes (history included), as Nessie's does."""
    row = _vector_row(vector)
    nessie_bytes = bytes.fromhex(vector["reference_hex"])
    assert NESSIE_CELLS.ref_cells(row) == {b"r": nessie_bytes}
    assert NESSIE_CELLS.ref_condition(row) == (b"r", nessie_bytes)
    assert NESSIE_CELLS.ref_row(row.name, {b"r": nessie_bytes}) == row


def test_references_written_otherwise_are_read_and_a_bad_history_compares_nothing() -> None:
    """A value another writer encoded otherwise (fields in another order, a field lochkit does not
    know) reads as the reference it holds; its compare-and-swap is then repeated on the stored bytes
    (the adapter, shown against the emulator). An expected row whose history cannot be decoded
    gives no value to compare, rather than an error."""
    row = RefRow("refs/heads/main", POINTER, False, 7, None, b"")
    canonical = NESSIE_CELLS.ref_cells(row)[b"r"]
    reordered = ProtoWriter().bytes_field(2, POINTER).string_field(1, row.name).varint_field(4, 7).to_bytes()
    unknown_field = canonical + ProtoWriter().varint_field(99, 1).to_bytes()
    for stored in (reordered, unknown_field):
        assert NESSIE_CELLS.ref_row(row.name, {b"r": stored}) == row
        assert NESSIE_CELLS.ref_condition(row) == (b"r", canonical) != (b"r", stored)
    assert NESSIE_CELLS.ref_condition(row._replace(previous_pointers=b"ignored")) == (b"r", None)
    with pytest.raises(CorruptData, match="bigtable: reference main"):
        NESSIE_CELLS.ref_row("main", {b"r": b"\x0a\x05ab"})


# --- objects -------------------------------------------------------------------------------------


def _column_form(vector: dict[str, Any]) -> bytes:
    """The bytes Nessie's column stores (Bigtable among them) write: no token inside, referenced 0."""
    return bytes.fromhex(
        next(
            s["hex"] for s in vector["serialized"] if s["referenced"] == 0 and not s["include_version_token"]
        )
    )


def _vector_obj(name: str) -> tuple[bytes, str]:
    vector = next(v for v in VECTORS["objects"] if v["name"] == name)
    return _column_form(vector), vector["type"]


@pytest.mark.parametrize(
    "vector", [v for v in VECTORS["objects"] if v["type"] != "CUSTOM"][::7], ids=lambda v: v["name"]
)
def test_an_object_is_its_obj_proto_type_name_and_decimal_referenced(vector: dict[str, Any]) -> None:
    data = _column_form(vector)
    short = NESSIE_CELLS.obj_type(OBJ_ID, {b"o": data})
    row = ObjRow(OBJ_ID, short, None, data, 1_700_000_000_123_456)
    cells = NESSIE_CELLS.obj_cells(row)
    assert cells == {b"o": data, b"t": vector["type"].encode(), b"z": b"1700000000123456"}
    assert NESSIE_CELLS.obj_row(OBJ_ID, cells) == row


def test_a_version_token_is_its_own_cell_and_part_of_the_condition() -> None:
    data, _ = _vector_obj(next(v["name"] for v in VECTORS["objects"] if v["type"] == "CUSTOM"))
    short = NESSIE_CELLS.obj_type(OBJ_ID, {b"o": data})
    row = ObjRow(OBJ_ID, short, "token-1", data, 5)
    cells = NESSIE_CELLS.obj_cells(row)
    assert cells[b"V"] == b"token-1"
    assert NESSIE_CELLS.obj_row(OBJ_ID, cells) == row
    assert NESSIE_CELLS.version_condition(short, "token-1") == [
        (b"t", nessie_type_name(short).encode()),
        (b"V", b"token-1"),
    ]


def test_the_type_cell_holds_nessies_type_name() -> None:
    assert [nessie_type_name(s) for s in ("c", "r", "v", "I", "i", "s", "t", "u")] == [
        "COMMIT",
        "REF",
        "VALUE",
        "INDEX_SEGMENTS",
        "INDEX",
        "STRING",
        "TAG",
        "UNIQUE",
    ]
    assert nessie_type_name("c-e") == "catalog-entity"
    assert nessie_type_name("no-such-type") == "no-such-type"


def test_referenced_absent_is_zero_and_a_binary_one_is_corrupt() -> None:
    data, _ = _vector_obj("value-1")
    assert NESSIE_CELLS.obj_row(OBJ_ID, {b"o": data}).referenced == 0
    assert NESSIE_CELLS.obj_row(OBJ_ID, {b"o": data, b"z": b"-3"}).referenced == -3
    with pytest.raises(CorruptData, match="not a decimal number"):
        NESSIE_CELLS.obj_row(OBJ_ID, {b"o": data, b"z": b"\x00\x00\x00\x00\x00\x00\x00\x05"})
    with pytest.raises(CorruptData, match="has no cell 'o'"):
        NESSIE_CELLS.obj_row(OBJ_ID, {b"t": b"VALUE"})


def test_every_cell_has_nessies_fixed_timestamp() -> None:
    """With another timestamp a write would add a version beside Nessie's instead of replacing it."""
    adapter = BigtableAdapter(parse_url("bigtable://127.0.0.1:1?layout=nessie"))
    try:
        data, _ = _vector_obj("value-1")
        mutations = adapter._replace_row(ObjRow(OBJ_ID, "v", None, data, 1))
        ref = RefRow("main", POINTER, False, 0, None, b"")
        mutations += adapter._set_cells("r", NESSIE_CELLS.ref_cells(ref))
        stamps = {m.set_cell.timestamp_micros for m in mutations if "set_cell" in m}
        assert stamps == {NESSIE_CELL_TIMESTAMP_MICROS} == {1_586_232_861_000}
    finally:
        adapter.close()
