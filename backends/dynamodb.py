"""DynamoDB backend (Amazon DynamoDB, DynamoDB Local or another emulator) through boto3.

The adapter lives in :mod:`backends.dynamodb_adapter`; this module only registers the factory,
so that listing backends works without boto3 installed. URL forms are described in
:mod:`backends.dynamodb_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from persist_spi.adapter import Capabilities
from persist_spi.registry import BackendFactory

if TYPE_CHECKING:
    from backends.dynamodb_adapter import DynamoDBAdapter

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


class DynamoBackendFactory(BackendFactory):
    """``dynamodb://HOST:PORT?region=R&table_prefix=P`` (endpoint such as DynamoDB Local) or
    ``dynamodb://aws?region=R`` (AWS, default credential chain)."""

    name = "dynamodb"
    description = "Amazon DynamoDB or DynamoDB Local (boto3): conditional writes, 400 KiB items"
    required_modules = ("boto3",)
    extra = "dynamodb"
    default_url = None

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> DynamoDBAdapter:
        from backends.dynamodb_adapter import DynamoDBAdapter
        from backends.dynamodb_settings import parse_url

        return DynamoDBAdapter(parse_url(url, options))
