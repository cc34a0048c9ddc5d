"""Creating and checking the two DynamoDB tables, and the schema-version item.

Both tables have one string HASH key ``k`` and on-demand billing. Creation is idempotent and
tolerates concurrent creators (another process may win the CreateTable race); it then waits until
the table is ACTIVE, which on AWS takes seconds and on DynamoDB Local is immediate.

In Nessie's layout the tables are the same (Nessie's DynamoDB2 store creates them exactly so), but
there is no schema-version item: Nessie keeps none, and an item of lochkit's in Nessie's refs table
would be an item Nessie does not expect. A refs table holding lochkit's version item is refused
instead: those are lochkit-layout tables (``table_prefix=`` empty gives them Nessie's names).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Final

from backends.dynamodb.config import DynamoSettings
from persist_spi.errors import BackendSchemaMismatch
from persist_spi.layouts import NESSIE_LAYOUT

#: Bump when the item layout changes incompatibly.
SCHEMA_VERSION: Final = 1
#: Lives in the refs table; real keys start with a digit (the repository id's length), so no
#: repository's rows can collide with it.
SCHEMA_ITEM_KEY: Final = "lochkit:schema"
KEY_ATTRIBUTE: Final = "k"
_ACTIVE_TIMEOUT_SECONDS = 300.0


def setup_schema(client: Any, settings: DynamoSettings) -> str:
    """Create or check both tables, then record or check the schema version; returns a summary."""
    for table in (settings.refs_table, settings.objs_table):
        _ensure_table(client, settings, table)
    if settings.layout is NESSIE_LAYOUT:
        _refuse_lochkit_tables(client, settings)
        return (
            f"dynamodb at {settings.address}: tables {settings.refs_table}, {settings.objs_table} "
            f"(HASH key {KEY_ATTRIBUTE}, on-demand) in Nessie's DynamoDB2 layout"
        )
    _ensure_schema_version(client, settings)
    return (
        f"dynamodb at {settings.address}: tables {settings.refs_table}, {settings.objs_table} "
        f"(HASH key {KEY_ATTRIBUTE}, on-demand), schema version {SCHEMA_VERSION}"
    )


def _ensure_table(client: Any, settings: DynamoSettings, table: str) -> None:
    description = _describe(client, table)
    if description is None:
        # Another process may win the race to create it: then check what it created.
        with contextlib.suppress(client.exceptions.ResourceInUseException):
            client.create_table(
                TableName=table,
                KeySchema=[{"AttributeName": KEY_ATTRIBUTE, "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": KEY_ATTRIBUTE, "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
        description = _wait_active(client, settings, table)
    elif description.get("TableStatus") != "ACTIVE":
        description = _wait_active(client, settings, table)
    _check_key_schema(settings, table, description)


def _describe(client: Any, table: str) -> dict[str, Any] | None:
    try:
        table_description: dict[str, Any] = client.describe_table(TableName=table)["Table"]
    except client.exceptions.ResourceNotFoundException:
        return None
    return table_description


def _wait_active(client: Any, settings: DynamoSettings, table: str) -> dict[str, Any]:
    deadline = time.monotonic() + _ACTIVE_TIMEOUT_SECONDS
    delay = 0.05
    while True:
        description = _describe(client, table)
        if description is not None and description.get("TableStatus") == "ACTIVE":
            return description
        if time.monotonic() > deadline:
            state = "missing" if description is None else description.get("TableStatus")
            raise BackendSchemaMismatch(
                "dynamodb",
                settings.address,
                f"table {table} did not become ACTIVE within {_ACTIVE_TIMEOUT_SECONDS:.0f} s (it is {state})",
                "check the table in the AWS console and retry",
            )
        time.sleep(delay)
        delay = min(delay * 2, 2.0)


def _check_key_schema(settings: DynamoSettings, table: str, description: dict[str, Any]) -> None:
    keys = [(k["AttributeName"], k["KeyType"]) for k in description.get("KeySchema", [])]
    types = {a["AttributeName"]: a["AttributeType"] for a in description.get("AttributeDefinitions", [])}
    if keys != [(KEY_ATTRIBUTE, "HASH")] or types.get(KEY_ATTRIBUTE) != "S":
        raise BackendSchemaMismatch(
            "dynamodb",
            settings.address,
            f"table {table} exists with key schema {keys} and attribute types {types}, not the one "
            f"lochkit uses (a single string HASH key '{KEY_ATTRIBUTE}')",
            "use another table_prefix, or drop the table if it holds nothing you need",
        )


def _ensure_schema_version(client: Any, settings: DynamoSettings) -> None:
    stored = _stored_version(client, settings)
    if stored is None and _holds_other_items(client, settings):
        # A concurrent lochkit may have written its version item and data since we looked.
        stored = _stored_version(client, settings)
        if stored is None:
            raise BackendSchemaMismatch(
                "dynamodb",
                settings.address,
                f"the tables {settings.refs_table}/{settings.objs_table} hold items but no lochkit "
                "schema-version item: they were not written by lochkit (Nessie uses the same key name)",
                "pick another table_prefix so that lochkit creates its own tables",
            )
    if stored is None:
        item = {
            KEY_ATTRIBUTE: {"S": SCHEMA_ITEM_KEY},
            "version": {"N": str(SCHEMA_VERSION)},
            "written_by": {"S": "lochkit"},
        }
        try:
            client.put_item(
                TableName=settings.refs_table, Item=item, ConditionExpression="attribute_not_exists(k)"
            )
            return
        except client.exceptions.ConditionalCheckFailedException:
            stored = _stored_version(client, settings)  # a concurrent creator was first: compare
    if stored != str(SCHEMA_VERSION):
        raise BackendSchemaMismatch(
            "dynamodb",
            settings.address,
            f"the tables were written with lochkit schema version {stored}, "
            f"this lochkit uses {SCHEMA_VERSION}",
            "use the lochkit version that wrote them, migrate by export/import, or pick another table_prefix",
        )


def _refuse_lochkit_tables(client: Any, settings: DynamoSettings) -> None:
    stored = _stored_version(client, settings)
    if stored is not None:
        raise BackendSchemaMismatch(
            "dynamodb",
            settings.address,
            f"the tables {settings.refs_table}/{settings.objs_table} were written in lochkit's own "
            f"layout (schema version {stored}), not in Nessie's",
            "open them without layout=nessie, or give Nessie's tables with table_prefix= "
            "(Nessie's nessie.version.store.persist.dynamodb.table-prefix)",
        )


def _stored_version(client: Any, settings: DynamoSettings) -> str | None:
    response = client.get_item(
        TableName=settings.refs_table, Key={KEY_ATTRIBUTE: {"S": SCHEMA_ITEM_KEY}}, ConsistentRead=True
    )
    version = response.get("Item", {}).get("version", {}).get("N")
    return None if version is None else str(version)


def _holds_other_items(client: Any, settings: DynamoSettings) -> bool:
    """True when a table has an item other than the version item (reads at most two per table)."""
    for table in (settings.refs_table, settings.objs_table):
        page = client.scan(TableName=table, Limit=2, ProjectionExpression=KEY_ATTRIBUTE, ConsistentRead=True)
        if any(item[KEY_ATTRIBUTE]["S"] != SCHEMA_ITEM_KEY for item in page.get("Items", [])):
            return True
    return False
