"""Unit tests of the mongodb backend's pure parts: URL and option parsing, secrets in messages, the
mapping of pymongo's errors (including those FerretDB cannot produce, such as a user without
permissions), document layout and the provisioner's build recipe. Behaviour against a real server
is in tests/servers/test_mongodb_errors.py and in the conformance suites."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    ConfigurationError,
    CursorNotFound,
    DuplicateKeyError,
    NetworkTimeout,
    NotPrimaryError,
    OperationFailure,
    ServerSelectionTimeoutError,
    WTimeoutError,
)

from backends.mongodb import MongoBackendFactory
from backends.mongodb.capabilities import CAPABILITIES, MAX_BSON_SIZE
from backends.mongodb.config import CLIENT_DEFAULTS, parse_settings, redact_url
from backends.mongodb.errors import ErrorContext, duplicates, mapped_errors, translate
from backends.mongodb.statements import id_filter, key, obj_doc, obj_row, ref_condition, ref_doc, ref_row
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendPermissionDenied,
    BackendUnavailable,
    UnknownOperationResult,
)
from provisioning.base import ProvisioningFailed
from provisioning.servers import mongodb as provisioning

SECRET = "pa55-Very$ecret"
CTX = ErrorContext("mongodb://db1:27017/lochkit", "lochkit", has_credentials=True)
ANONYMOUS = ErrorContext("mongodb://db1:27017/lochkit", "lochkit", has_credentials=False)

# --- settings ------------------------------------------------------------------------------------


def test_defaults() -> None:
    settings = parse_settings(None)
    assert (settings.database, settings.collection_prefix) == ("lochkit", "lochkit_")
    assert settings.address == "mongodb://localhost:27017/lochkit"
    assert settings.client_options == dict(CLIENT_DEFAULTS)
    assert settings.client_options["w"] == "majority"
    assert settings.client_options["readConcernLevel"] == "majority"
    assert settings.client_options["serverSelectionTimeoutMS"] <= 5000
    assert not settings.has_credentials


def test_database_from_path_and_options_override_the_url() -> None:
    assert parse_settings("mongodb://h:1/fromurl").database == "fromurl"
    settings = parse_settings("mongodb://h:1/fromurl?collection_prefix=q_", {"database": "explicit"})
    assert (settings.database, settings.collection_prefix) == ("explicit", "q_")
    assert parse_settings(
        "mongodb://h:1/?collection_prefix=a_", {"collection_prefix": "b_"}
    ).collection_prefix == ("b_")


def test_lochkit_options_are_removed_and_driver_options_kept_verbatim() -> None:
    url = (
        "mongodb://h:1/db?collection_prefix=x_&authMechanismProperties=SERVICE_NAME:other"
        "&database=other&appname=mine"
    )
    settings = parse_settings(url)
    assert settings.uri == "mongodb://h:1/db?authMechanismProperties=SERVICE_NAME:other&appname=mine"
    assert (settings.database, settings.collection_prefix) == ("other", "x_")
    assert "appname" not in settings.client_options  # the URL's value wins over lochkit's default


def test_url_options_replace_lochkit_defaults_case_insensitively() -> None:
    settings = parse_settings("mongodb://h:1/?w=1&SERVERSELECTIONTIMEOUTMS=100&readConcernLevel=local")
    assert "w" not in settings.client_options
    assert "serverSelectionTimeoutMS" not in settings.client_options
    assert "readConcernLevel" not in settings.client_options
    assert settings.client_options["socketTimeoutMS"] == CLIENT_DEFAULTS["socketTimeoutMS"]


def test_address_lists_every_host_and_never_credentials() -> None:
    settings = parse_settings(f"mongodb://alice:{SECRET}@h1:1,h2:2/db?replicaSet=rs")
    assert settings.address == "mongodb://h1:1,h2:2/db"
    assert settings.has_credentials
    assert SECRET not in repr(settings)


@pytest.mark.parametrize(
    ("url", "options", "problem"),
    [
        ("postgresql://h/db", None, "must start with mongodb://"),
        ("mongodb://h:1/?nosuchoption=1", None, "Unknown option"),
        ("mongodb://h:1/", {"colection_prefix": "x"}, "unknown option(s) colection_prefix"),
        ("mongodb://h:1/?w=notanumber&wtimeoutMS=-5", None, "invalid URL"),
        ("mongodb://h:1/", {"database": "bad.name"}, "invalid database name"),
        ("mongodb://h:1/?collection_prefix=a$b", None, "invalid collection_prefix"),
        ("mongodb://h:1/", {"collection_prefix": "system.x"}, "invalid collection_prefix"),
        ("mongodb://h:notaport/", None, "invalid URL"),
    ],
)
def test_bad_settings_are_config_errors(url: str, options: dict[str, str] | None, problem: str) -> None:
    with pytest.raises(BackendConfigError) as e:
        parse_settings(url, options)
    assert problem in str(e.value)
    assert e.value.backend == "mongodb"
    assert e.value.fix


def test_unescaped_password_never_shows() -> None:
    with pytest.raises(BackendConfigError) as e:
        parse_settings(f"mongodb://alice:{SECRET}@x@h:1/")
    assert SECRET not in str(e.value)
    assert SECRET not in e.value.address
    assert "quote_plus" in str(e.value)


def test_redact_url_hides_userinfo_even_when_unparseable() -> None:
    assert redact_url(f"mongodb://bob:{SECRET}@h:1/db") == "mongodb://***@h:1/db"
    assert SECRET not in redact_url(f"mongodb://bob:{SECRET}@with@at@h:1/db")
    assert redact_url("mongodb://h:1/db") == "mongodb://h:1/db"


def test_factory_rejects_a_bad_url_before_connecting() -> None:
    with pytest.raises(BackendConfigError):
        MongoBackendFactory().create("mongodb://h:1/?nosuchoption=1")


def test_factory_declarations_and_pickling() -> None:
    factory = MongoBackendFactory()
    assert factory.capabilities is CAPABILITIES
    assert CAPABILITIES.multi_process
    assert CAPABILITIES.durable
    assert CAPABILITIES.hard_object_size_limit is not None
    assert 15 * 1024 * 1024 < CAPABILITIES.hard_object_size_limit < MAX_BSON_SIZE
    assert not CAPABILITIES.deviations
    assert factory.required_modules == ("pymongo",)
    # The multi-process suite sends the factory to spawned workers.
    assert pickle.loads(pickle.dumps(factory)).name == "mongodb"


# --- error mapping -------------------------------------------------------------------------------


def _failure(code: int, message: str = "boom", labels: list[str] | None = None) -> OperationFailure:
    details = {"ok": 0, "errmsg": message, "code": code, "codeName": f"Code{code}"}
    if labels:
        details["errorLabels"] = labels
    return OperationFailure(message, code, details)


def test_server_down_is_unavailable() -> None:
    error = ServerSelectionTimeoutError(
        "db1:27017: [Errno 111] Connection refused, Timeout: 3.0s, Topology Description: <long>"
    )
    mapped = translate(error, CTX, "read references", write=False)
    assert isinstance(mapped, BackendUnavailable)
    assert "Connection refused" in str(mapped)
    assert "Topology" not in str(mapped)
    assert "mongodb at mongodb://db1:27017/lochkit" in str(mapped)


def test_refused_connection_is_unavailable_even_for_writes() -> None:
    """The driver raises AutoReconnect when it cannot open a connection to a server it believed up;
    a refused connection means the request was never sent."""
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as cause:
            raise AutoReconnect("db1:27017: [Errno 111] Connection refused") from cause
    except AutoReconnect as error:
        mapped = translate(error, CTX, "update a reference", write=True)
    assert isinstance(mapped, BackendUnavailable)


def test_authentication_failures() -> None:
    mapped = translate(_failure(18, "Authentication failed."), CTX, "connect", write=False)
    assert isinstance(mapped, BackendAuthenticationFailed)
    assert "Authentication failed." in str(mapped)
    assert "full error" not in str(mapped)
    # "Unauthorized" without credentials: the server wants some, so it is an authentication problem.
    mapped = translate(_failure(13, "command find requires authentication"), ANONYMOUS, "x", write=False)
    assert isinstance(mapped, BackendAuthenticationFailed)
    assert "has none" in str(mapped)


def test_missing_permission_names_the_operation_and_the_role() -> None:
    """FerretDB 1.x has no authorization (any authenticated user may do anything), so this mapping
    is only exercised here, with the error mongod sends."""
    error = _failure(13, "not authorized on lochkit to execute command { createIndexes: ... }")
    mapped = translate(error, CTX, "create collections and indexes", write=True)
    assert isinstance(mapped, BackendPermissionDenied)
    assert "may not create collections and indexes" in str(mapped)
    assert "readWrite on database 'lochkit'" in str(mapped)


@pytest.mark.parametrize(
    "error",
    [
        AutoReconnect("connection closed"),
        NetworkTimeout("db1:27017: timed out"),
        NotPrimaryError("not primary", {"code": 10107}),
        WTimeoutError("waiting for replication timed out", 64, {}),
        CursorNotFound("cursor id 5 not found", 43, {}),
        _failure(11600, "interrupted at shutdown"),
        _failure(189, "primary stepped down"),
        _failure(50, "operation exceeded time limit"),
        _failure(1, "odd", labels=["RetryableWriteError"]),
    ],
    ids=lambda e: type(e).__name__,
)
def test_interrupted_operations_have_unknown_outcome(error: Exception) -> None:
    mapped = translate(error, CTX, "update a reference", write=True)
    assert isinstance(mapped, UnknownOperationResult)
    assert "may or may not have been applied" in str(mapped)
    read = translate(error, CTX, "read objects", write=False)
    assert isinstance(read, UnknownOperationResult)
    assert "did not complete" in str(read)


def test_other_errors_are_not_ours_to_map() -> None:
    error = _failure(2, "bad value")
    assert translate(error, CTX, "x", write=True) is error
    duplicate = DuplicateKeyError("E11000", 11000)
    assert translate(duplicate, CTX, "x", write=True) is duplicate
    assert isinstance(
        translate(ConfigurationError("bad mechanism"), CTX, "x", write=False), BackendConfigError
    )


def test_mapped_errors_chains_the_driver_error() -> None:
    with pytest.raises(UnknownOperationResult) as e, mapped_errors(CTX, "store objects", write=True):
        raise NetworkTimeout("timed out")
    assert isinstance(e.value.__cause__, NetworkTimeout)
    with pytest.raises(OperationFailure), mapped_errors(CTX, "store objects", write=True):
        raise _failure(2)


def _bulk_error(
    write_errors: list[dict[str, object]], concern: list[dict[str, object]] | None = None
) -> BulkWriteError:
    return BulkWriteError({"writeErrors": write_errors, "writeConcernErrors": concern or [], "nInserted": 1})


def test_duplicates_are_positions_and_other_write_errors_propagate() -> None:
    error = _bulk_error([{"index": 0, "code": 11000}, {"index": 3, "code": 11000}])
    assert duplicates(error, CTX, "store objects") == {0, 3}
    other = _bulk_error([{"index": 0, "code": 11000}, {"index": 1, "code": 2, "errmsg": "bad"}])
    with pytest.raises(BulkWriteError):
        duplicates(other, CTX, "store objects")


def test_unsatisfied_write_concern_is_an_unknown_outcome() -> None:
    error = _bulk_error([], [{"code": 64, "errmsg": "waiting for replication timed out"}])
    with pytest.raises(UnknownOperationResult, match="write concern"):
        duplicates(error, CTX, "store objects")


# --- documents -----------------------------------------------------------------------------------


def test_keys_keep_repositories_that_prefix_each_other_apart() -> None:
    pairs = [("a", ":b"), ("a:", "b"), ("", "a::b"), ("a::", ""), ("ä", "x")]
    keys = [key(repo, name) for repo, name in pairs]
    assert len(set(keys)) == len(keys)


def test_reference_documents_round_trip() -> None:
    for row in (
        RefRow("refs/heads/main", b"\x01" * 32, False, 2**62, b"\x02" * 32, b"prev"),
        RefRow("r", b"", True, 0, None, b""),
    ):
        doc = ref_doc("repo", row)
        assert doc["r"] == "repo"
        assert doc["_id"] == key("repo", row.name)
        assert ref_row(row.name, doc) == row
        condition = ref_condition("repo", row)
        assert set(condition) == {"_id", "p", "d", "c", "e"}  # history is not part of the condition
        assert "e" in condition  # None matches a null (or absent) field, never "any value"


def test_object_documents_round_trip() -> None:
    row = ObjRow(b"\x00\xff" * 16, "c", "token", b"data" * 10, 1234567890123)
    doc = obj_doc("re:po", row)
    assert (doc["r"], doc["y"], doc["V"]) == ("re:po", "c", "token")
    assert obj_row(doc, len(key("re:po", ""))) == row
    untokened = row._replace(version_token=None)
    assert obj_row(obj_doc("r", untokened), len(key("r", ""))) == untokened


def test_a_lone_id_is_plain_equality() -> None:
    assert id_filter(["k"]) == {"_id": "k"}
    assert id_filter(["k", "l"]) == {"_id": {"$in": ["k", "l"]}}


# --- provisioning --------------------------------------------------------------------------------


def test_ferretdb_version_comes_from_the_pinned_package() -> None:
    assert provisioning.FERRETDB_VERSION == "v1.24.2"
    assert provisioning._MODULE == "github.com/FerretDB/FerretDB"


def test_install_without_go_says_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOCHKIT_CACHE", str(tmp_path))
    monkeypatch.setattr("shutil.which", lambda _name: None)
    with pytest.raises(ProvisioningFailed, match="needs the Go toolchain"):
        provisioning.install_ferretdb()


def test_a_broken_cached_binary_is_not_trusted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOCHKIT_CACHE", str(tmp_path))
    binary = provisioning.ferretdb_binary()
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho 'version: v0.0.1'\n")
    binary.chmod(0o755)
    assert not provisioning._reports_version(binary)
