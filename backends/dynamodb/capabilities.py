"""What the DynamoDB backend offers, and the item size limit its object size limit follows from."""

from __future__ import annotations

from typing import Final

from persist_spi.adapter import Capabilities

#: DynamoDB's item limit counts attribute names and values, the key included.
DYNAMODB_ITEM_LIMIT: Final = 400 * 1024
#: Room kept for everything but the object bytes: the key (at most 2 KiB), names, type, token, time.
ITEM_OVERHEAD_ALLOWANCE: Final = 4 * 1024
CAPABILITIES: Final = Capabilities(
    hard_object_size_limit=DYNAMODB_ITEM_LIMIT - ITEM_OVERHEAD_ALLOWANCE,
    multi_process=True,
    # Durability is DynamoDB's; an emulator run with -inMemory loses data only when it stops,
    # never when an adapter is closed and re-opened.
    durable=True,
    lists_repositories=True,
)
