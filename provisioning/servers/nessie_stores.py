"""The Nessie server's settings for a version store on a database lochkit already has: the
``nessie.version.store.type`` matching a lochkit backend, and the Quarkus properties that point it
at the database a lochkit URL names (so both open the same tables, keyspace or directory).

Secrets (a database password) are given apart, as environment variables, so they never show in a
process listing. Nessie's object cache is switched off (``cache-capacity-mb=0``) and its reference
cache stays off (no ``reference-cache-ttl``): with either, the server would not see what the other
writer committed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from urllib.parse import parse_qsl, unquote, urlsplit

from provisioning.base import ProvisioningFailed

#: The Nessie store type that shares each lochkit backend's database.
STORE_OF_BACKEND: Final = {
    "postgres": "JDBC2",
    "mariadb": "JDBC2",
    "rocksdb": "ROCKSDB",
    "cassandra": "CASSANDRA2",
    "dynamodb": "DYNAMODB2",
    "mongodb": "MONGODB2",
    "bigtable": "BIGTABLE",
}
#: Every shared store: no object cache on Nessie's side; the reference cache is off unless
#: ``reference-cache-ttl`` is set, which it must never be here.
NO_CACHES: Final = {"nessie.version.store.persist.cache-capacity-mb": "0"}
#: The keyspace Nessie's CASSANDRA2 store expects (Nessie creates its tables, not the keyspace).
CASSANDRA_KEYSPACE: Final = "nessie"
#: DynamoDB Local accepts any credentials; these are the ones Nessie's own examples use.
DYNAMODB_LOCAL_KEY: Final = ("fakeKeyId", "fakeSecretAccessKey")


@dataclass(frozen=True)
class SharedStore:
    """How to start Nessie on one database: its store type, properties and secret properties."""

    store: str
    properties: dict[str, str]
    #: Properties given as environment variables (Quarkus reads ``QUARKUS_...`` names).
    secrets: dict[str, str] = field(default_factory=dict)

    def environment(self) -> dict[str, str]:
        """The secret properties as the environment variables Quarkus maps them from."""
        return {_env_name(k): v for k, v in self.secrets.items()}


def _env_name(prop: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in prop).upper()


def shared_store(backend: str, lochkit_url: str) -> SharedStore:
    """Nessie's settings for the database ``lochkit_url`` (a lochkit ``backend`` URL) names."""
    store = STORE_OF_BACKEND.get(backend)
    if store is None:
        raise ProvisioningFailed(
            f"nessie: no Nessie version store shares a {backend} database; the shared ones are "
            f"{', '.join(sorted(STORE_OF_BACKEND))}"
        )
    props, secrets = _PROPERTIES[backend](lochkit_url)
    return SharedStore(store, {"nessie.version.store.type": store, **NO_CACHES, **props}, secrets)


Props = tuple[dict[str, str], dict[str, str]]


def _postgres(url: str) -> Props:
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ProvisioningFailed(f"nessie: JDBC2 needs a postgresql:// URL, not {parts.scheme}://")
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    database = parts.path.lstrip("/") or "postgres"
    props = {
        # The named data source Nessie's JDBC2 store looks for, activated by its name.
        "nessie.version.store.persist.jdbc.datasource": "postgresql",
        "quarkus.datasource.postgresql.jdbc.url": f"jdbc:postgresql://{host}{port}/{database}",
    }
    if parts.username:
        props["quarkus.datasource.postgresql.username"] = unquote(parts.username)
    secrets = {"quarkus.datasource.postgresql.password": unquote(parts.password)} if parts.password else {}
    return props, secrets


def _mariadb(url: str) -> Props:
    parts = urlsplit(url)
    if parts.scheme not in ("mariadb", "mysql"):
        raise ProvisioningFailed(f"nessie: JDBC2 on MariaDB needs a mariadb:// URL, not {parts.scheme}://")
    host = parts.hostname or "localhost"
    database = parts.path.lstrip("/")
    props = {
        # Nessie's named MariaDB data source (its "mysql" one uses the same driver).
        "nessie.version.store.persist.jdbc.datasource": "mariadb",
        "quarkus.datasource.mariadb.jdbc.url": f"jdbc:mariadb://{host}:{parts.port or 3306}/{database}",
    }
    if parts.username:
        props["quarkus.datasource.mariadb.username"] = unquote(parts.username)
    secrets = {"quarkus.datasource.mariadb.password": unquote(parts.password)} if parts.password else {}
    return props, secrets


def _rocksdb(url: str) -> Props:
    path = url.removeprefix("rocksdb://").partition("?")[0] if url.startswith("rocksdb://") else url
    if not Path(path).is_absolute():
        raise ProvisioningFailed(f"nessie: ROCKSDB needs an absolute directory, not {path!r}")
    return {"nessie.version.store.persist.rocks.database-path": path}, {}


def _cassandra(url: str) -> Props:
    parts = urlsplit(url)
    options = dict(parse_qsl(parts.query))
    hosts = parts.netloc.rpartition("@")[2]
    contact_points = ",".join(h if ":" in h else f"{h}:9042" for h in hosts.split(","))
    keyspace = parts.path.lstrip("/") or CASSANDRA_KEYSPACE
    props = {
        "quarkus.cassandra.contact-points": contact_points,
        "quarkus.cassandra.local-datacenter": options.get("local_dc", "datacenter1"),
        "quarkus.cassandra.keyspace": keyspace,
        # Local single-node servers on a busy machine: schema changes take longer than the default.
        "nessie.version.store.cassandra.ddl-timeout": "PT30S",
        "nessie.version.store.cassandra.dml-timeout": "PT10S",
    }
    secrets = {}
    if parts.username:
        props["quarkus.cassandra.auth.username"] = unquote(parts.username)
        secrets["quarkus.cassandra.auth.password"] = unquote(parts.password or "")
    return props, secrets


def _dynamodb(url: str) -> Props:
    parts = urlsplit(url)
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    if parts.hostname in (None, "aws"):
        raise ProvisioningFailed("nessie: the shared test runs DYNAMODB2 on a local endpoint only")
    key, secret = DYNAMODB_LOCAL_KEY
    props = {
        "quarkus.dynamodb.endpoint-override": f"http://{parts.netloc}",
        "quarkus.dynamodb.aws.region": options.get("region", "us-west-2"),
        "quarkus.dynamodb.aws.credentials.type": "STATIC",
        "quarkus.dynamodb.aws.credentials.static-provider.access-key-id": key,
        "nessie.version.store.persist.dynamodb.table-prefix": options.get("table_prefix", ""),
    }
    return props, {"quarkus.dynamodb.aws.credentials.static-provider.secret-access-key": secret}


def _mongodb(url: str) -> Props:
    base, _, query = url.partition("?")
    options = dict(parse_qsl(query))
    kept = "&".join(f"{k}={v}" for k, v in parse_qsl(query) if k not in ("database", "layout"))
    # The connection string may hold a password: given as a secret.
    return {"quarkus.mongodb.database": options.get("database", "nessie")}, {
        "quarkus.mongodb.connection-string": f"{base}?{kept}" if kept else base
    }


def _bigtable(url: str) -> Props:
    parts = urlsplit(url)
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    if parts.hostname in (None, "google") or parts.port is None:
        raise ProvisioningFailed("nessie: the shared test runs BIGTABLE on an emulator (HOST:PORT) only")
    props = {
        # Nessie's Bigtable store takes the project from the Google Cloud extension's setting.
        "quarkus.google.cloud.project-id": options.get("project", "lochkit"),
        "nessie.version.store.persist.bigtable.instance-id": options.get("instance", "lochkit"),
        "nessie.version.store.persist.bigtable.emulator-host": parts.hostname,
        "nessie.version.store.persist.bigtable.emulator-port": str(parts.port),
        "nessie.version.store.persist.bigtable.enable-telemetry": "false",
    }
    # The same table names on both sides: Nessie's prefix rule is lochkit's in layout=nessie.
    if options.get("table_prefix"):
        props["nessie.version.store.persist.bigtable.table-prefix"] = options["table_prefix"]
    return props, {}


_PROPERTIES: Final[Mapping[str, Callable[[str], Props]]] = {
    "postgres": _postgres,
    "mariadb": _mariadb,
    "rocksdb": _rocksdb,
    "cassandra": _cassandra,
    "dynamodb": _dynamodb,
    "mongodb": _mongodb,
    "bigtable": _bigtable,
}
