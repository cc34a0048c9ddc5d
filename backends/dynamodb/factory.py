"""The DynamoDB backend's factory. It imports the adapter (and so boto3) only when one is created,
so that listing backends works without boto3 installed. URL forms are described in
:mod:`backends.dynamodb.config`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from backends.dynamodb.capabilities import CAPABILITIES
from persist_spi.adapter import Capabilities
from persist_spi.registry import BackendFactory

if TYPE_CHECKING:
    from backends.dynamodb.adapter import DynamoDBAdapter


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
        from backends.dynamodb.adapter import DynamoDBAdapter
        from backends.dynamodb.config import parse_url

        return DynamoDBAdapter(parse_url(url, options))
