"""Unit tests of the DynamoDB backend's Nessie layout (``layout=nessie``): table names with Nessie's
table-prefix, keys ``repo:name`` / ``repo:hex``, numbers as decimal strings, absent attributes, and
Nessie's conditions. The requests are checked through botocore's Stubber; whether a Nessie server
and lochkit really agree on them is shown against DynamoDB Local (conformance and tests/servers).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("boto3")

from botocore.stub import Stubber

from backends.dynamodb.adapter import DynamoDBAdapter
from backends.dynamodb.config import parse_url
from backends.dynamodb.statements import NESSIE_ITEMS
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import BackendConfigError, CorruptData, InputError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT

OBJ_ID = bytes(range(32))
HEX = OBJ_ID.hex()
POINTER = b"\x11" * 32


# --- tables --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "tables"),
    [
        ("layout=nessie", ("refs", "objs")),
        ("layout=nessie&table_prefix=", ("refs", "objs")),
        ("layout=nessie&table_prefix=prod", ("prod_refs", "prod_objs")),
        ("layout=nessie&table_prefix=a_", ("a__refs", "a__objs")),
        ("layout=NESSIE&table_prefix=x.y-z", ("x.y-z_refs", "x.y-z_objs")),
        # lochkit's own layout is unchanged: the prefix is prepended as it is.
        ("", ("lochkit_refs", "lochkit_objs")),
        ("table_prefix=prod", ("prodrefs", "prodobjs")),
    ],
)
def test_table_names_follow_nessies_table_prefix(query: str, tables: tuple[str, str]) -> None:
    settings = parse_url(f"dynamodb://127.0.0.1:8000?{query}")
    assert (settings.refs_table, settings.objs_table) == tables


def test_the_layout_is_in_the_address_and_the_adapter() -> None:
    settings = parse_url("dynamodb://127.0.0.1:8000?layout=nessie&table_prefix=p")
    assert settings.layout is NESSIE_LAYOUT
    assert settings.address == "dynamodb://127.0.0.1:8000?region=us-west-2&layout=nessie&table_prefix=p"
    # the address is a URL that opens the same tables again
    again = parse_url(settings.address)
    assert (again.layout, again.refs_table) == (NESSIE_LAYOUT, "p_refs")
    adapter = DynamoDBAdapter(settings)
    try:
        assert adapter.layout is NESSIE_LAYOUT
    finally:
        adapter.close()
    assert parse_url("dynamodb://127.0.0.1:8000").layout is LOCHKIT_LAYOUT


def test_an_unknown_layout_is_a_config_error() -> None:
    with pytest.raises(BackendConfigError, match=r"unknown or unsupported layout 'nessie2'.*layout=nessie"):
        parse_url("dynamodb://127.0.0.1:8000?layout=nessie2")


# --- keys ----------------------------------------------------------------------------------------


def test_keys_are_repo_colon_name_and_repo_colon_hex() -> None:
    assert NESSIE_ITEMS.repo_prefix("") == ":"
    assert NESSIE_ITEMS.repo_prefix("repo") == "repo:"
    assert NESSIE_ITEMS.obj_item("repo:", ObjRow(OBJ_ID, "c", None, b"x", 1))["k"] == {"S": f"repo:{HEX}"}
    assert NESSIE_ITEMS.ref_item("repo:", _ref())["k"] == {"S": "repo:refs/heads/main"}
    assert NESSIE_ITEMS.repo_of_key(f"repo:{HEX}") == "repo"
    assert NESSIE_ITEMS.repo_of_key(":refs/heads/a:b") == ""
    assert NESSIE_ITEMS.repo_of_key("no-colon") is None


def test_repository_ids_with_a_colon_are_refused_only_in_nessies_layout() -> None:
    nessie = DynamoDBAdapter(parse_url("dynamodb://127.0.0.1:1?layout=nessie"))
    lochkit = DynamoDBAdapter(parse_url("dynamodb://127.0.0.1:1"))
    try:
        assert nessie.repository_id_problem("a:b") is not None
        assert "':'" in (nessie.repository_id_problem(":") or "")
        assert nessie.repository_id_problem("") is None
        assert nessie.repository_id_problem("a_b") is None
        assert lochkit.repository_id_problem("a:b") is None
        from persist_spi.adapter_persist import AdapterPersist
        from persist_spi.config import StoreConfig

        with pytest.raises(InputError, match=r"repository id 'a:b' cannot be used"):
            AdapterPersist(nessie, StoreConfig(repository_id="a:b"))
    finally:
        nessie.close()
        lochkit.close()


# --- reference items -----------------------------------------------------------------------------


def _ref(created: int = 0, extended: bytes | None = None, history: bytes = b"") -> RefRow:
    return RefRow("refs/heads/main", POINTER, False, created, extended, history)


def test_a_fresh_reference_item_has_only_key_pointer_and_deleted() -> None:
    assert NESSIE_ITEMS.ref_item("r:", _ref()) == {
        "k": {"S": "r:refs/heads/main"},
        "p": {"B": POINTER},
        "d": {"BOOL": False},
    }


def test_reference_numbers_are_decimal_strings_and_present_values_are_kept() -> None:
    item = NESSIE_ITEMS.ref_item("r:", _ref(1_700_000_000_123_456, b"\x22" * 32, b"\x0a\x01"))
    assert item["c"] == {"S": "1700000000123456"}
    assert item["e"] == {"B": b"\x22" * 32}
    assert item["h"] == {"B": b"\x0a\x01"}


def test_absent_reference_attributes_read_back_as_lochkits_defaults() -> None:
    item = {"k": {"S": "r:refs/heads/main"}, "p": {"B": POINTER}, "d": {"BOOL": True}}
    assert NESSIE_ITEMS.ref_row("refs/heads/main", item) == RefRow(
        "refs/heads/main", POINTER, True, 0, None, b""
    )
    full = NESSIE_ITEMS.ref_item("r:", _ref(42, b"\x22", b"\x01"))
    assert NESSIE_ITEMS.ref_row("refs/heads/main", full) == _ref(42, b"\x22", b"\x01")


def test_a_number_of_the_other_layout_is_corrupt_data_not_a_silent_zero() -> None:
    item = {"k": {"S": "r:x"}, "p": {"B": POINTER}, "d": {"BOOL": False}, "c": {"N": "42"}}
    with pytest.raises(CorruptData, match=r"'c'.*stored as S.*layout=nessie"):
        NESSIE_ITEMS.ref_row("x", item)


def test_reference_conditions_are_nessies() -> None:
    assert NESSIE_ITEMS.ref_condition(_ref()) == (
        "(d = :deleted) AND (p = :pointer) AND attribute_not_exists(c) AND attribute_not_exists(e)",
        {":deleted": {"BOOL": False}, ":pointer": {"B": POINTER}},
    )
    assert NESSIE_ITEMS.ref_condition(_ref(7, b"\x22")) == (
        "(d = :deleted) AND (p = :pointer) AND (c = :createdAt) AND (e = :extendedInfo)",
        {
            ":deleted": {"BOOL": False},
            ":pointer": {"B": POINTER},
            ":createdAt": {"S": "7"},
            ":extendedInfo": {"B": b"\x22"},
        },
    )
    assert NESSIE_ITEMS.ref_insert_condition == "attribute_not_exists(p)"


# --- object items --------------------------------------------------------------------------------


def test_object_items_carry_a_string_referenced_and_a_token_only_when_there_is_one() -> None:
    plain = NESSIE_ITEMS.obj_item("r:", ObjRow(OBJ_ID, "c", None, b"proto", 1_700_000_000_000_001))
    assert plain == {
        "k": {"S": f"r:{HEX}"},
        "y": {"S": "c"},
        "z": {"S": "1700000000000001"},
        "v": {"B": b"proto"},
    }
    versioned = NESSIE_ITEMS.obj_item("r:", ObjRow(OBJ_ID, "c-e", "tok", b"proto", 5))
    assert versioned["V"] == {"S": "tok"}
    assert NESSIE_ITEMS.obj_row(OBJ_ID, versioned) == ObjRow(OBJ_ID, "c-e", "tok", b"proto", 5)


def test_an_object_item_without_referenced_reads_as_zero() -> None:
    item = {"k": {"S": f"r:{HEX}"}, "y": {"S": "c"}, "v": {"B": b"proto"}}
    assert NESSIE_ITEMS.obj_row(OBJ_ID, item) == ObjRow(OBJ_ID, "c", None, b"proto", 0)


# --- the requests (through botocore's Stubber) ---------------------------------------------------


@pytest.fixture
def nessie() -> Iterator[tuple[DynamoDBAdapter, Stubber]]:
    adapter = DynamoDBAdapter(parse_url("dynamodb://127.0.0.1:1?layout=nessie&table_prefix=p"))
    stubber = Stubber(adapter._cas)
    with stubber:
        yield adapter, stubber
    stubber.assert_no_pending_responses()
    adapter.close()


def test_storing_an_object_puts_if_no_type_then_refreshes_a_string_referenced(
    nessie: tuple[DynamoDBAdapter, Stubber],
) -> None:
    adapter, stubber = nessie
    row = ObjRow(OBJ_ID, "c", None, b"proto", 42)
    stubber.add_client_error(
        "put_item",
        "ConditionalCheckFailedException",
        expected_params={
            "TableName": "p_objs",
            "Item": {"k": {"S": f"repo:{HEX}"}, "y": {"S": "c"}, "z": {"S": "42"}, "v": {"B": b"proto"}},
            "ConditionExpression": "attribute_not_exists(y)",
        },
    )
    stubber.add_response(
        "update_item",
        {},
        {
            "TableName": "p_objs",
            "Key": {"k": {"S": f"repo:{HEX}"}},
            "UpdateExpression": "SET z = :z",
            "ConditionExpression": "attribute_exists(y)",
            "ExpressionAttributeValues": {":z": {"S": "42"}},
        },
    )
    assert adapter.insert_objs("repo", [row]) == [False]


def test_reference_writes_use_nessies_conditions(nessie: tuple[DynamoDBAdapter, Stubber]) -> None:
    adapter, stubber = nessie
    fresh = _ref()
    moved = fresh._replace(pointer=b"\x33" * 32, previous_pointers=b"\x0a\x02")
    stubber.add_response(
        "put_item",
        {},
        {
            "TableName": "p_refs",
            "Item": {"k": {"S": "repo:refs/heads/main"}, "p": {"B": POINTER}, "d": {"BOOL": False}},
            "ConditionExpression": "attribute_not_exists(p)",
        },
    )
    condition = "(d = :deleted) AND (p = :pointer) AND attribute_not_exists(c) AND attribute_not_exists(e)"
    values: dict[str, Any] = {":deleted": {"BOOL": False}, ":pointer": {"B": POINTER}}
    stubber.add_response(
        "put_item",
        {},
        {
            "TableName": "p_refs",
            "Item": {
                "k": {"S": "repo:refs/heads/main"},
                "p": {"B": b"\x33" * 32},
                "d": {"BOOL": False},
                "h": {"B": b"\x0a\x02"},
            },
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        },
    )
    stubber.add_response(
        "delete_item",
        {},
        {
            "TableName": "p_refs",
            "Key": {"k": {"S": "repo:refs/heads/main"}},
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        },
    )
    assert adapter.insert_ref("repo", fresh) is True
    assert adapter.update_ref("repo", fresh, moved) is True
    assert adapter.delete_ref("repo", fresh) is True


def test_delete_if_referenced_compares_a_string(nessie: tuple[DynamoDBAdapter, Stubber]) -> None:
    adapter, stubber = nessie
    stubber.add_response(
        "delete_item",
        {},
        {
            "TableName": "p_objs",
            "Key": {"k": {"S": f"repo:{HEX}"}},
            "ConditionExpression": "z = :z",
            "ExpressionAttributeValues": {":z": {"S": "99"}},
        },
    )
    assert adapter.delete_obj_if_referenced("repo", OBJ_ID, 99) is True


def test_setup_writes_no_schema_item_and_refuses_lochkit_layout_tables() -> None:
    from persist_spi.errors import BackendSchemaMismatch

    adapter = DynamoDBAdapter(parse_url("dynamodb://127.0.0.1:1?layout=nessie"))
    table = {
        "TableStatus": "ACTIVE",
        "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
    }
    version_item = {"k": {"S": "lochkit:schema"}, "version": {"N": "1"}}
    try:
        for stored, outcome in (({}, None), ({"Item": version_item}, BackendSchemaMismatch)):
            with Stubber(adapter._client) as stubber:
                for name in ("refs", "objs"):
                    described = {"Table": {**table, "TableName": name}}
                    stubber.add_response("describe_table", described, {"TableName": name})
                stubber.add_response(
                    "get_item",
                    stored,
                    {"TableName": "refs", "Key": {"k": {"S": "lochkit:schema"}}, "ConsistentRead": True},
                )
                if outcome is None:
                    assert "Nessie's DynamoDB2 layout" in adapter.setup_schema()
                else:
                    with pytest.raises(outcome, match="written in lochkit's own layout"):
                        adapter.setup_schema()
                stubber.assert_no_pending_responses()  # and no put_item: Stubber refuses unplanned calls
    finally:
        adapter.close()
