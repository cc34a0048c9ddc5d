"""The Cassandra and ScyllaDB factories: one adapter, two names (the keyspace differs, see
:mod:`backends.cassandra.schema`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backends.cassandra.adapter import CassandraAdapter
from backends.cassandra.capabilities import CAPABILITIES
from backends.cassandra.config import parse_url
from persist_spi.adapter import Capabilities
from persist_spi.registry import BackendFactory


class CassandraBackendFactory(BackendFactory):
    """``cassandra://[user:password@]host[:port][,host2...]/keyspace?local_dc=&replication=&layout=``
    (options in :mod:`backends.cassandra.config`; ``layout=nessie`` uses a Nessie server's tables)."""

    name = "cassandra"
    description = "Apache Cassandra via cassandra-driver (verified on 5.0.9); LWT for every conditional write"
    required_modules = ("cassandra",)
    extra = "cassandra"
    default_url = "cassandra://127.0.0.1:9042/lochkit"

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> CassandraAdapter:
        return CassandraAdapter(parse_url(self.name, url or self.default_url or "", options))


class ScyllaBackendFactory(CassandraBackendFactory):
    """Same adapter; the keyspace is created with tablets disabled (tablets do not support LWT)."""

    name = "scylladb"
    description = "ScyllaDB through cassandra-driver (Cassandra adapter; keyspace without tablets)"
    default_url = "scylladb://127.0.0.1:9042/lochkit"
