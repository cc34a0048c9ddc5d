"""Unit tests of the cassandra backend's pieces that need no server: URL parsing, the schema text,
directory buckets, error translation, factories and the local-process launcher's command line.
The backend itself is proven against a real server by the conformance suite and
tests/servers/test_cassandra_errors.py."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from backends.cassandra import CassandraBackendFactory, ScyllaBackendFactory
from backends.cassandra.capabilities import CAPABILITIES
from backends.cassandra.config import parse_url
from backends.cassandra.errors import translate
from backends.cassandra.schema import (
    BUCKETS,
    TABLES,
    bucket_of,
    create_keyspace_cql,
    create_table_cql,
)
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    UnknownOperationResult,
)
from persist_spi.registry import discover_backends
from provisioning.base import ProvisioningFailed
from provisioning.servers import cassandra as server

pytest.importorskip("cassandra")

SECRET = "p@ss:w/rd"
QUOTED_SECRET = "p%40ss%3Aw%2Frd"


# --- URLs ----------------------------------------------------------------------------------------------


def test_defaults() -> None:
    settings = parse_url("cassandra", "cassandra://db.example")
    assert settings.hosts == ("db.example",)
    assert settings.port == 9042
    assert settings.keyspace == "lochkit"
    assert settings.username is None
    assert settings.local_dc is None
    assert settings.replication_cql() == "{'class': 'SimpleStrategy', 'replication_factor': '1'}"
    assert settings.address == "cassandra://db.example:9042/lochkit"


def test_hosts_credentials_and_options() -> None:
    url = f"cassandra://app:{QUOTED_SECRET}@h1:9142,h2:9142,[::1]:9142/cat?local_dc=eu-1&timeout=3"
    settings = parse_url("cassandra", url)
    assert settings.hosts == ("h1", "h2", "::1")
    assert settings.port == 9142
    assert (settings.username, settings.password) == ("app", SECRET)
    assert settings.local_dc == "eu-1"
    assert settings.request_timeout == 3.0
    assert settings.address == "cassandra://app@h1,h2,[::1]:9142/cat"
    assert SECRET not in repr(settings)


def test_factory_options_win_over_the_url() -> None:
    settings = parse_url("cassandra", "cassandra://h/ks?timeout=3", {"timeout": 7, "local_dc": "dc2"})
    assert (settings.request_timeout, settings.local_dc) == (7.0, "dc2")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3", "{'class': 'SimpleStrategy', 'replication_factor': '3'}"),
        ("dc1:3,dc2:2", "{'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc2': '2'}"),
    ],
)
def test_replication(value: str, expected: str) -> None:
    assert parse_url("cassandra", f"cassandra://h/ks?replication={value}").replication_cql() == expected


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgresql://h/ks", "unsupported URL scheme"),
        ("cassandra:///ks", "no host"),
        ("cassandra://h:1,h2:2/ks", "same port"),
        ("cassandra://h:99999/ks", "invalid port"),
        ("cassandra://h/Key-Space", "invalid keyspace"),
        ("cassandra://h/ks?consistency=ONE", "unknown option"),
        ("cassandra://h/ks?replication=dc1", "invalid replication"),
        ("cassandra://h/ks?timeout=soon", "timeout must be"),
        ("cassandra://h/ks?local_dc=a%20b", "invalid local_dc"),
    ],
)
def test_bad_urls_are_config_errors_without_the_password(url: str, problem: str) -> None:
    with_secret = url.replace("://", f"://user:{QUOTED_SECRET}@", 1)
    with pytest.raises(BackendConfigError) as caught:
        parse_url("cassandra", with_secret)
    text = str(caught.value)
    assert problem in text
    assert QUOTED_SECRET not in text
    assert SECRET not in text
    assert "Use cassandra://" in caught.value.fix


def test_scylla_flavour_names_itself() -> None:
    settings = parse_url("scylladb", "cassandra://h/ks")
    assert settings.address == "scylladb://h:9042/ks"


# --- schema --------------------------------------------------------------------------------------------


def test_keyspace_ddl_disables_tablets_only_for_scylla() -> None:
    replication = "{'class': 'SimpleStrategy', 'replication_factor': '1'}"
    assert "tablets" not in create_keyspace_cql("ks", replication, scylla=False)
    assert create_keyspace_cql("ks", replication, scylla=True).endswith("AND tablets = {'enabled': false}")


def test_tables_have_one_row_per_partition_except_the_directory() -> None:
    assert create_table_cql("ks", "refs").endswith("PRIMARY KEY ((repo, ref_name)))")
    assert create_table_cql("ks", "objs").endswith("PRIMARY KEY ((repo, obj_id)))")
    assert create_table_cql("ks", "repo_keys").endswith("PRIMARY KEY ((repo, bucket), kind, row_key))")
    for table, columns in TABLES.items():
        cql = create_table_cql("ks", table)
        assert cql.startswith(f"CREATE TABLE IF NOT EXISTS ks.{table} (")
        for name, (_, cql_type) in columns.items():
            assert f"{name} {cql_type}" in cql


def test_buckets_are_stable_and_in_range() -> None:
    keys = [bytes([i]) * 32 for i in range(256)]
    assert {bucket_of(k) for k in keys} == set(range(BUCKETS))
    assert bucket_of(b"refs/heads/main") == zlib.crc32(b"refs/heads/main") % BUCKETS


# --- errors --------------------------------------------------------------------------------------------


def _translated(exc: BaseException) -> BaseException:
    return translate(exc, "cassandra", "cassandra://app@h:9042/ks", "do something")


@pytest.mark.parametrize(
    "make",
    [
        lambda c: c.WriteTimeout(
            "timeout", consistency=6, received_responses=0, required_responses=1, write_type=5
        ),
        lambda c: c.ReadTimeout("timeout", consistency=6, received_responses=0, required_responses=1),
        lambda c: c.Unavailable("down", consistency=6, required_replicas=1, alive_replicas=0),
        lambda c: c.OperationTimedOut("client timeout"),
        lambda c: c.WriteFailure(
            "failed", consistency=6, received_responses=0, required_responses=1, failures=1
        ),
    ],
)
def test_undecided_outcomes_are_unknown_results(make: object) -> None:
    import cassandra

    error = _translated(make(cassandra))  # type: ignore[operator]
    assert isinstance(error, UnknownOperationResult)
    assert "cassandra://app@h:9042/ks" in str(error)


def test_cas_write_unknown_is_an_unknown_result() -> None:
    from cassandra.protocol import ErrorMessage

    assert isinstance(_translated(ErrorMessage(0x1700, "CAS write unknown", None)), UnknownOperationResult)


def test_user_errors() -> None:
    from cassandra import AuthenticationFailed, InvalidRequest, Unauthorized
    from cassandra.cluster import NoHostAvailable

    assert isinstance(_translated(Unauthorized("no MODIFY permission")), BackendPermissionDenied)
    assert isinstance(_translated(AuthenticationFailed("bad credentials")), BackendAuthenticationFailed)
    auth = NoHostAvailable("none", {"h:9042": AuthenticationFailed("Bad credentials")})
    assert isinstance(_translated(auth), BackendAuthenticationFailed)
    refused = NoHostAvailable("none", {"h:9042": ConnectionRefusedError(111, "refused")})
    assert isinstance(_translated(refused), BackendUnavailable)
    missing = InvalidRequest('Error from server: code=2200 [Invalid query] message="unconfigured table objs"')
    assert isinstance(_translated(missing), BackendSchemaMismatch)


def test_other_errors_pass_unchanged() -> None:
    from cassandra import InvalidRequest

    error = InvalidRequest("syntax")
    assert _translated(error) is error


# --- factories and provisioning ------------------------------------------------------------------------


def test_factories_are_registered_with_capabilities() -> None:
    entries = discover_backends()
    for factory in (CassandraBackendFactory(), ScyllaBackendFactory()):
        assert entries[factory.name].installed
        assert factory.capabilities is CAPABILITIES
        assert factory.missing_modules() == []
    assert CAPABILITIES.multi_process
    assert CAPABILITIES.hard_object_size_limit == 8 * 1024 * 1024
    assert not CAPABILITIES.deviations


def test_bad_url_fails_before_connecting() -> None:
    with pytest.raises(BackendConfigError):
        CassandraBackendFactory().create("cassandra://h/Not-A-Keyspace")


def test_java_command_and_config(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "jamm-0.4.0.jar").touch()
    command = server.java_command(lib, tmp_path, heap="1G")
    assert command[-1] == "org.apache.cassandra.service.CassandraDaemon"
    assert "--add-opens=java.base/java.lang=ALL-UNNAMED" in command
    assert {"-Xmx1G", "-Dcassandra-foreground=yes", f"-javaagent:{lib / 'jamm-0.4.0.jar'}"} <= set(command)
    assert f"-Dcassandra.config={(tmp_path / 'cassandra.yaml').as_uri()}" in command
    server.write_config(tmp_path, 7001, 9043)
    yaml = (tmp_path / "cassandra.yaml").read_text()
    for line in ("native_transport_port: 9043", "storage_port: 7001", "listen_address: 127.0.0.1"):
        assert line in yaml
    assert f"data_file_directories: [{tmp_path}/data]" in yaml
    assert "authenticator: PasswordAuthenticator" in yaml


def test_scylla_has_no_local_process(tmp_path: Path) -> None:
    with pytest.raises(ProvisioningFailed, match="testcontainers"):
        server.PROVISIONER.local_process("scylladb", tmp_path)
    with pytest.raises(ProvisioningFailed):
        server.PROVISIONER.install("scylladb")
