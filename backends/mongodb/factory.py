"""The MongoDB backend's factory (FerretDB is found out by the adapter, from the server's answer)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backends.mongodb.adapter import MongoAdapter
from backends.mongodb.capabilities import CAPABILITIES
from backends.mongodb.config import DEFAULT_URL, parse_settings
from persist_spi.adapter import Capabilities
from persist_spi.registry import BackendFactory


class MongoBackendFactory(BackendFactory):
    """``mongodb://[user:password@]host:port/[database]?driver-options``; lochkit's options
    ``database`` and ``collection_prefix`` may also be given in the URL query."""

    name = "mongodb"
    description = "MongoDB (pymongo); also FerretDB 1.x, as a single-process store"
    required_modules = ("pymongo",)
    extra = "mongodb"
    default_url = DEFAULT_URL

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> MongoAdapter:
        return MongoAdapter(parse_settings(url, options))
