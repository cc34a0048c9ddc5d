"""One TransactWriteItems request: its limits, and the conditional Puts it carries.

DynamoDB checks every action's condition of a transaction before it writes anything, then applies
all of them or none. The adapter stores a commit's objects and moves its branch this way, in one
request (``DynamoDBAdapter.insert_objs_and_update_ref``), when they fit in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from backends.dynamodb.statements import Item, item_size

#: Actions per request: AWS's limit, and DynamoDB Local 2.6.1's (checked: it accepts 100 Puts and
#: refuses 101 with a ValidationException).
TRANSACTION_ACTIONS: Final = 100
#: Bytes per request, as :func:`action_size` counts them. AWS allows 4 MB of items per transaction;
#: DynamoDB Local 2.6.1 refuses payloads over 4 MiB and counts more than the items (the condition
#: expressions too, measured). Decimal megabytes against a count that includes the table names,
#: conditions and values stay under both.
TRANSACTION_BYTES: Final = 4_000_000


def put(table: str, item: Item, condition: str, values: Item | None = None) -> Item:
    """A Put action that applies only when ``condition`` holds."""
    action: Item = {"TableName": table, "Item": item, "ConditionExpression": condition}
    if values:
        action["ExpressionAttributeValues"] = values
    return {"Put": action}


def action_size(action: Item) -> int:
    """What a Put action adds to a transaction's size, counted generously (see TRANSACTION_BYTES)."""
    request = action["Put"]
    extra = len(request["TableName"]) + len(request["ConditionExpression"])
    return item_size(request["Item"]) + extra + item_size(request.get("ExpressionAttributeValues", {}))


def fits_one_transaction(actions: Sequence[Item]) -> bool:
    """Whether DynamoDB accepts ``actions`` as one request (number of actions and size)."""
    return len(actions) <= TRANSACTION_ACTIONS and sum(map(action_size, actions)) <= TRANSACTION_BYTES
