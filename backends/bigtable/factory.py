"""The Bigtable backend's factory. It imports the adapter (and so Google's client) only when one is
created, so that listing backends works without the client installed. URL forms are described in
:mod:`backends.bigtable.config`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from backends.bigtable.capabilities import CAPABILITIES
from persist_spi.adapter import Capabilities
from persist_spi.registry import BackendFactory

if TYPE_CHECKING:
    from backends.bigtable.adapter import BigtableAdapter


class BigtableBackendFactory(BackendFactory):
    """``bigtable://HOST:PORT?project=P&instance=I&table_prefix=T`` (an emulator) or
    ``bigtable://google?project=P&instance=I`` (Cloud Bigtable, Application Default Credentials)."""

    name = "bigtable"
    description = "Google Cloud Bigtable or its emulator (google-cloud-bigtable): check-and-mutate rows"
    required_modules = ("google.cloud.bigtable_v2",)
    extra = "bigtable"
    default_url = None

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> BigtableAdapter:
        from backends.bigtable.adapter import BigtableAdapter
        from backends.bigtable.config import parse_url

        return BigtableAdapter(parse_url(url, options))
