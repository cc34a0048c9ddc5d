"""Nessie's settings for a database lochkit provisioned: the store type, the properties pointing at
the same database, caches off, and secrets kept out of the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from provisioning.base import ProvisioningFailed
from provisioning.servers.nessie_stores import shared_store


def test_postgres_points_jdbc2_at_the_same_database_with_the_password_apart() -> None:
    shared = shared_store("postgres", "postgresql://lochkit:s%40cret@127.0.0.1:5433/shared_1?sslmode=disable")
    assert shared.store == "JDBC2"
    props = shared.properties
    assert props["nessie.version.store.type"] == "JDBC2"
    assert props["nessie.version.store.persist.jdbc.datasource"] == "postgresql"
    assert props["quarkus.datasource.postgresql.jdbc.url"] == "jdbc:postgresql://127.0.0.1:5433/shared_1"
    assert props["quarkus.datasource.postgresql.username"] == "lochkit"
    assert "s@cret" not in " ".join(props.values())
    assert shared.environment() == {"QUARKUS_DATASOURCE_POSTGRESQL_PASSWORD": "s@cret"}


def test_mariadb_points_jdbc2_at_the_same_database_with_the_password_apart() -> None:
    shared = shared_store("mariadb", "mariadb://lochkit:s%40cret@127.0.0.1:3307/shared_1?layout=nessie")
    props = shared.properties
    assert props["nessie.version.store.type"] == "JDBC2"
    assert props["nessie.version.store.persist.jdbc.datasource"] == "mariadb"
    assert props["quarkus.datasource.mariadb.jdbc.url"] == "jdbc:mariadb://127.0.0.1:3307/shared_1"
    assert props["quarkus.datasource.mariadb.username"] == "lochkit"
    assert "s@cret" not in " ".join(props.values())
    assert shared.environment() == {"QUARKUS_DATASOURCE_MARIADB_PASSWORD": "s@cret"}


def test_every_store_runs_without_nessies_caches() -> None:
    urls = {
        "postgres": "postgresql://u:p@h:1/d",
        "mariadb": "mariadb://u:p@h:1/d",
        "rocksdb": "rocksdb:///data/dir",
        "cassandra": "cassandra://127.0.0.1:9042/nessie",
        "dynamodb": "dynamodb://127.0.0.1:8000?region=us-west-2&table_prefix=",
        "mongodb": "mongodb://127.0.0.1:27017/?database=nessie",
        "bigtable": "bigtable://127.0.0.1:8086?project=p&instance=i",
    }
    for backend, url in urls.items():
        props = shared_store(backend, url).properties
        assert props["nessie.version.store.persist.cache-capacity-mb"] == "0", backend
        assert not any("reference-cache" in k for k in props), backend


def test_rocksdb_cassandra_dynamodb_mongodb_properties() -> None:
    rocks = shared_store("rocksdb", "rocksdb:///data/dir?layout=nessie").properties
    assert rocks["nessie.version.store.persist.rocks.database-path"] == "/data/dir"
    cassandra = shared_store("cassandra", "cassandra://10.0.0.1,10.0.0.2:9043/nessie?local_dc=dc2").properties
    assert cassandra["quarkus.cassandra.contact-points"] == "10.0.0.1:9042,10.0.0.2:9043"
    assert cassandra["quarkus.cassandra.local-datacenter"] == "dc2"
    assert cassandra["quarkus.cassandra.keyspace"] == "nessie"
    dynamo = shared_store("dynamodb", "dynamodb://127.0.0.1:8000?region=eu-west-1&table_prefix=")
    assert dynamo.properties["quarkus.dynamodb.endpoint-override"] == "http://127.0.0.1:8000"
    assert dynamo.properties["quarkus.dynamodb.aws.region"] == "eu-west-1"
    assert dynamo.properties["nessie.version.store.persist.dynamodb.table-prefix"] == ""
    mongo = shared_store("mongodb", "mongodb://u:pw@127.0.0.1:27017/?database=nessie&layout=nessie")
    assert mongo.properties["quarkus.mongodb.database"] == "nessie"
    assert mongo.environment() == {"QUARKUS_MONGODB_CONNECTION_STRING": "mongodb://u:pw@127.0.0.1:27017/"}


def test_bigtable_points_nessie_at_the_same_emulator_instance_and_tables() -> None:
    shared = shared_store(
        "bigtable", "bigtable://127.0.0.1:8086?project=proj-1&instance=inst-1&table_prefix=s1"
    )
    props = shared.properties
    assert props["nessie.version.store.type"] == "BIGTABLE"
    assert props["quarkus.google.cloud.project-id"] == "proj-1"
    assert props["nessie.version.store.persist.bigtable.instance-id"] == "inst-1"
    assert props["nessie.version.store.persist.bigtable.emulator-host"] == "127.0.0.1"
    assert props["nessie.version.store.persist.bigtable.emulator-port"] == "8086"
    assert props["nessie.version.store.persist.bigtable.table-prefix"] == "s1"
    assert shared.environment() == {}
    # lochkit's defaults (project and instance "lochkit", Nessie's "no prefix") when the URL has none
    defaults = shared_store("bigtable", "bigtable://[::1]:9000?layout=nessie").properties
    assert defaults["quarkus.google.cloud.project-id"] == "lochkit"
    assert defaults["nessie.version.store.persist.bigtable.instance-id"] == "lochkit"
    assert defaults["nessie.version.store.persist.bigtable.emulator-host"] == "::1"
    assert "nessie.version.store.persist.bigtable.table-prefix" not in defaults


@pytest.mark.parametrize(
    ("backend", "url"),
    [
        ("inmemory", "x"),
        ("bigtable", "bigtable://google?project=p&instance=i"),
        ("rocksdb", "relative/dir"),
        ("dynamodb", "dynamodb://aws?region=x"),
        ("postgres", "mysql://h/d"),
    ],
)
def test_what_cannot_be_shared_is_refused_with_the_reason(backend: str, url: str) -> None:
    with pytest.raises(ProvisioningFailed, match="nessie: "):
        shared_store(backend, url)


def test_a_fresh_bigtable_database_gives_both_sides_the_same_table_names(tmp_path: Path) -> None:
    """lochkit's URL (in Nessie's layout) and Nessie's properties for one shared Bigtable database
    name the same tables: Nessie joins its table prefix and the name with '_', and so does lochkit."""
    pytest.importorskip("google.cloud.bigtable_v2")
    from backends.bigtable.config import parse_url
    from reliability.shared_db.database import fresh_bigtable

    db = fresh_bigtable("bigtable://127.0.0.1:8086?project=lochkit&instance=lochkit", tmp_path)
    other = fresh_bigtable("bigtable://127.0.0.1:8086?project=lochkit&instance=lochkit", tmp_path)
    props = shared_store(db.backend, db.url).properties
    prefix = props["nessie.version.store.persist.bigtable.table-prefix"]
    settings = parse_url(db.lochkit_url)
    assert (settings.refs_table, settings.objs_table) == (f"{prefix}_refs", f"{prefix}_objs")
    assert settings.layout.name == "nessie"
    assert other.url != db.url  # a fresh prefix per database
