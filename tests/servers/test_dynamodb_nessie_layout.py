"""The DynamoDB backend's Nessie layout against a real server (DynamoDB Local unless
``LOCHKIT_DYNAMODB_URL`` names another): the tables and items lochkit writes are the ones Nessie's
DynamoDB2 store writes, and items written the way Nessie writes them are read and compare-and-swapped
by lochkit. The item shapes are taken from Nessie's DynamoDB2Persist (0.99.0).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import pytest

pytest.importorskip("boto3")

from backends.dynamodb import DynamoBackendFactory
from backends.dynamodb.adapter import DynamoDBAdapter
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import BackendSchemaMismatch
from provisioning.base import Provisioned
from tests.servers.provisioned import provisioned_server

FACTORY = DynamoBackendFactory()
POINTER = b"\x11" * 32


@pytest.fixture(scope="module")
def server() -> Iterator[Provisioned]:
    with provisioned_server("dynamodb", FACTORY, "dynamodb-nessie-layout") as provisioned:
        yield provisioned


@pytest.fixture
def prefix(server: Provisioned) -> Iterator[str]:
    """A Nessie table-prefix of its own (tables ``<prefix>_refs``/``_objs``), dropped afterwards."""
    name = f"t{uuid.uuid4().hex[:10]}"
    yield name
    adapter = _adapter(server, name)
    for table in (f"{name}_refs", f"{name}_objs"):
        with contextlib.suppress(adapter._client.exceptions.ResourceNotFoundException):
            adapter._client.delete_table(TableName=table)
    adapter.close()


def _adapter(server: Provisioned, prefix: str, layout: str = "nessie") -> DynamoDBAdapter:
    assert server.url is not None
    return FACTORY.create(f"{server.url}&layout={layout}&table_prefix={prefix}")


def test_setup_creates_nessies_tables_and_writes_no_item(server: Provisioned, prefix: str) -> None:
    adapter = _adapter(server, prefix)
    adapter.setup_schema()
    adapter.setup_schema()  # idempotent
    for table in (f"{prefix}_refs", f"{prefix}_objs"):
        described = adapter._client.describe_table(TableName=table)["Table"]
        assert described["KeySchema"] == [{"AttributeName": "k", "KeyType": "HASH"}]
        assert described["AttributeDefinitions"] == [{"AttributeName": "k", "AttributeType": "S"}]
        assert described["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        assert adapter._client.scan(TableName=table)["Items"] == []
    adapter.close()


def test_lochkit_layout_tables_under_the_same_names_are_refused(server: Provisioned, prefix: str) -> None:
    # lochkit's own layout with table_prefix "<p>_" names its tables as Nessie's with prefix "<p>".
    own = _adapter(server, prefix + "_", layout="lochkit")
    own.setup_schema()
    own.close()
    with pytest.raises(BackendSchemaMismatch, match="written in lochkit's own layout"):
        _adapter(server, prefix).setup_schema()


def test_items_are_written_as_nessie_writes_them(server: Provisioned, prefix: str) -> None:
    adapter = _adapter(server, prefix)
    adapter.setup_schema()
    obj_id = os.urandom(32)
    adapter.insert_objs("repo", [ObjRow(obj_id, "c", None, b"\x12\x00", 1_700_000_000_000_001)])
    adapter.insert_ref("repo", RefRow("refs/heads/main", POINTER, False, 0, None, b""))
    moved = RefRow("refs/heads/main", b"\x22" * 32, False, 0, None, b"\x0a\x01")
    assert adapter.update_ref("repo", RefRow("refs/heads/main", POINTER, False, 0, None, b""), moved)

    raw_obj = adapter._client.get_item(TableName=f"{prefix}_objs", Key={"k": {"S": f"repo:{obj_id.hex()}"}})
    assert raw_obj["Item"] == {
        "k": {"S": f"repo:{obj_id.hex()}"},
        "y": {"S": "c"},
        "z": {"S": "1700000000000001"},
        "v": {"B": b"\x12\x00"},
    }
    raw_ref = adapter._client.get_item(TableName=f"{prefix}_refs", Key={"k": {"S": "repo:refs/heads/main"}})
    assert raw_ref["Item"] == {
        "k": {"S": "repo:refs/heads/main"},
        "p": {"B": b"\x22" * 32},
        "d": {"BOOL": False},
        "h": {"B": b"\x0a\x01"},
    }
    # storing it again refreshes "referenced", still as a string
    assert adapter.insert_objs("repo", [ObjRow(obj_id, "c", None, b"\x12\x00", 5)]) == [False]
    refreshed = adapter._client.get_item(TableName=f"{prefix}_objs", Key={"k": {"S": f"repo:{obj_id.hex()}"}})
    assert refreshed["Item"]["z"] == {"S": "5"}
    assert adapter.delete_obj_if_referenced("repo", obj_id, 5) is True
    adapter.close()


def test_items_nessie_wrote_are_read_and_swapped(server: Provisioned, prefix: str) -> None:
    """A reference with a creation time and extended info, and an updateable object, put the way
    Nessie's DynamoDB2Persist puts them (numbers as strings)."""
    adapter = _adapter(server, prefix)
    adapter.setup_schema()
    client = adapter._client
    client.put_item(
        TableName=f"{prefix}_refs",
        Item={
            "k": {"S": "repo:refs/heads/dev"},
            "p": {"B": POINTER},
            "d": {"BOOL": False},
            "c": {"S": "1700000000123456"},
            "e": {"B": b"\x33" * 32},
        },
    )
    obj_id = os.urandom(32)
    client.put_item(
        TableName=f"{prefix}_objs",
        Item={
            "k": {"S": f"repo:{obj_id.hex()}"},
            "y": {"S": "c-e"},
            "z": {"S": "42"},
            "V": {"S": "token-1"},
            "v": {"B": b"\x4a\x00"},
        },
    )
    stored = RefRow("refs/heads/dev", POINTER, False, 1_700_000_000_123_456, b"\x33" * 32, b"")
    assert adapter.fetch_refs("repo", ["refs/heads/dev"]) == [stored]
    assert adapter.fetch_objs("repo", [obj_id]) == [ObjRow(obj_id, "c-e", "token-1", b"\x4a\x00", 42)]
    assert [r.obj_id for r in adapter.scan_objs("repo", None)] == [obj_id]
    assert list(adapter.list_repositories()) == ["repo"]

    # a stale expectation is refused, the right one applies and keeps the string creation time
    assert adapter.update_ref("repo", stored._replace(created_at_micros=1), stored) is False
    assert adapter.update_ref("repo", stored, stored._replace(pointer=b"\x44" * 32, deleted=True)) is True
    raw = client.get_item(TableName=f"{prefix}_refs", Key={"k": {"S": "repo:refs/heads/dev"}})["Item"]
    assert raw["c"] == {"S": "1700000000123456"}
    assert adapter.update_obj_if_version(
        "repo", "c-e", "token-1", ObjRow(obj_id, "c-e", "token-2", b"\x4a\x01", 43)
    )
    adapter.erase_repositories(["repo"])
    assert client.scan(TableName=f"{prefix}_refs")["Items"] == []
    assert client.scan(TableName=f"{prefix}_objs")["Items"] == []
    adapter.close()


def test_erasing_a_repository_leaves_one_whose_id_extends_it(server: Provisioned, prefix: str) -> None:
    adapter = _adapter(server, prefix)
    adapter.setup_schema()
    for repo in ("a", "ab", ""):
        adapter.insert_ref(repo, RefRow("refs/heads/main", POINTER, False, 0, None, b""))
    adapter.erase_repositories(["a"])
    assert sorted(adapter.list_repositories()) == ["", "ab"]
    adapter.close()
