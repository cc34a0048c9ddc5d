"""Unit tests of the postgres backend's pure parts: URL and option parsing, secrets in messages,
error classification, retry delays, dialects and SQL, the schema verdict, and the provisioner's
decisions. Behaviour against a real server is in tests/servers/test_postgres_errors.py and in the
conformance suites."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import psycopg
import pytest
from psycopg import errors as pg_errors

from backends.postgres import CockroachBackendFactory, PostgresBackendFactory
from backends.postgres.capabilities import CAPABILITIES
from backends.postgres.config import OPTIONS, parse_settings, safe_address
from backends.postgres.errors import ErrorContext, Kind, backoff_delays, classify
from backends.postgres.schema import Found, judge
from backends.postgres.statements import (
    COCKROACHDB,
    POSTGRESQL,
    SCHEMA_VERSION,
    Statements,
    detect_dialect,
    expected_columns,
    short_version,
)
from persist_spi.adapter import RefRow
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    UnknownOperationResult,
)
from persist_spi.layouts import NESSIE_LAYOUT
from provisioning.base import ProvisioningFailed
from provisioning.servers import postgres as provisioning

SECRET = "s3cr%t:p@ss/word"
ENCODED = "s3cr%25t%3Ap%40ss%2Fword"
URL = f"postgresql://alice:{ENCODED}@db.example:6543/catalog"


def traceback_text(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def conninfo_params(conninfo: str) -> dict[str, str]:
    from psycopg.conninfo import conninfo_to_dict

    return {k: str(v) for k, v in conninfo_to_dict(conninfo).items()}


# --- URL and options -----------------------------------------------------------------------------


class TestParseSettings:
    def test_defaults(self) -> None:
        s = parse_settings("postgres", URL)
        assert (s.table_prefix, s.pool_min, s.pool_max, s.pool_timeout, s.max_retries, s.dialect) == (
            "lochkit_",
            1,
            10,
            30.0,
            8,
            "auto",
        )
        params = conninfo_params(s.conninfo)
        assert params["password"] == SECRET  # decoded for libpq
        assert params["connect_timeout"] == "10"
        assert params["application_name"] == "lochkit"
        assert (params["host"], params["port"], params["dbname"], params["user"]) == (
            "db.example",
            "6543",
            "catalog",
            "alice",
        )

    @pytest.mark.parametrize("scheme", ["postgresql", "postgres", "POSTGRES", "cockroachdb"])
    def test_accepted_schemes(self, scheme: str) -> None:
        s = parse_settings("postgres", f"{scheme}://u@h:1/d")
        assert conninfo_params(s.conninfo)["host"] == "h"
        assert s.dialect == ("cockroachdb" if scheme == "cockroachdb" else "auto")

    def test_address_has_no_password_and_no_query(self) -> None:
        s = parse_settings("postgres", URL + "?sslmode=disable&password=other&table_prefix=x_")
        assert s.address == "postgresql://alice@db.example:6543/catalog"
        assert SECRET not in repr(s)
        assert ENCODED not in repr(s)
        assert "other" not in repr(s)

    def test_options_from_url_and_mapping(self) -> None:
        s = parse_settings(
            "postgres",
            URL + "?table_prefix=from_url_&pool_max=3&sslmode=disable",
            {"pool_max": 7, "application_name": "mine", "dialect": "PostgreSQL"},
        )
        assert (s.table_prefix, s.pool_max, s.dialect) == ("from_url_", 7, "postgresql")
        params = conninfo_params(s.conninfo)
        assert (params["sslmode"], params["application_name"]) == ("disable", "mine")
        assert "table_prefix" not in params
        assert "pool_max" not in params

    def test_factory_dialect_is_the_default(self) -> None:
        assert parse_settings("cockroachdb", URL, dialect="cockroachdb").dialect == "cockroachdb"

    @pytest.mark.parametrize(
        ("query", "needle"),
        [
            ("bogus=1", "unknown option(s) bogus"),
            ("table_prefx=a_", "unknown option(s) table_prefx"),
            ("pool_max=zero", "option pool_max='zero' is invalid: not an integer"),
            ("pool_max=0", "must be between 1 and 1000"),
            ("pool_min=5&pool_max=2", "option pool_min='5' is invalid: must be between 0 and 2"),
            ("pool_timeout=-1", "option pool_timeout='-1' is invalid"),
            ("max_retries=1000", "option max_retries='1000' is invalid"),
            ("dialect=mysql", "use one of auto, postgresql, cockroachdb"),
            ("table_prefix=Upper_", "option table_prefix='Upper_' is invalid"),
            ("table_prefix=x;drop%20table%20y", "option table_prefix='x;drop table y' is invalid"),
        ],
    )
    def test_invalid_options(self, query: str, needle: str) -> None:
        with pytest.raises(BackendConfigError) as e:
            parse_settings("postgres", f"{URL}?{query}")
        message = str(e.value)
        assert needle in message
        assert message.startswith("postgres at postgresql://alice@db.example:6543/catalog: ")
        assert SECRET not in message
        assert ENCODED not in message

    def test_unknown_option_lists_the_valid_ones(self) -> None:
        with pytest.raises(BackendConfigError) as e:
            parse_settings("postgres", URL, {"poolmax": 3})
        assert all(name in e.value.fix for name in OPTIONS)
        assert "libpq" in e.value.fix

    @pytest.mark.parametrize("url", [None, ""])
    def test_missing_url(self, url: str | None) -> None:
        with pytest.raises(BackendConfigError, match="no URL was given"):
            parse_settings("postgres", url)

    @pytest.mark.parametrize("url", ["mysql://u:pw@h/d", f"http://alice:{ENCODED}@h/d", "just-a-path"])
    def test_unsupported_scheme(self, url: str) -> None:
        with pytest.raises(BackendConfigError) as e:
            parse_settings("postgres", url)
        assert "unsupported URL scheme" in str(e.value)
        assert ENCODED not in str(e.value)
        assert "pw" not in e.value.address

    def test_unparseable_url_hides_the_password(self) -> None:
        with pytest.raises(BackendConfigError) as e:
            parse_settings("postgres", f"postgresql://alice:{ENCODED}@h:1/d%zz")
        assert "cannot be parsed" in str(e.value)
        assert SECRET not in str(e.value)
        assert ENCODED not in str(e.value)
        assert e.value.__cause__ is None
        assert e.value.__suppress_context__

    def test_scrub_removes_plain_and_encoded_passwords(self) -> None:
        s = parse_settings("postgres", URL + "?sslpassword=keypass")
        text = f"a {SECRET} b {ENCODED} c keypass"
        assert s.scrub(text) == "a *** b *** c ***"

    @pytest.mark.parametrize("password", ["zz/yy@xx", "zz?yy#xx", "zz:yy%xx", "zz@yy", "zz yy", "zz#yy"])
    def test_unencoded_password_characters_never_leak(self, password: str) -> None:
        url = f"postgresql://alice:{password}@h:5/db"
        try:
            settings = parse_settings("postgres", url)
        except BackendConfigError as e:
            shown = f"{e} {e.address} {traceback_text(e)}"
        else:
            shown = f"{settings.address} {settings!r} {settings.scrub('x ' + password)}"
        assert password not in shown
        assert "yy" not in shown

    def test_at_sign_in_an_option_value_must_be_encoded(self) -> None:
        with pytest.raises(BackendConfigError, match="Percent-encode"):
            parse_settings("postgres", "postgresql://u@h/d?application_name=me@home")
        params = conninfo_params(
            parse_settings("postgres", "postgresql://u@h/d?application_name=me%40home").conninfo
        )
        assert params["application_name"] == "me@home"

    def test_safe_address(self) -> None:
        assert safe_address(f"postgres://bob:{ENCODED}@h:5/db?password=x") == "postgres://bob@h:5/db"
        assert safe_address("nonsense") == "<not a URL>"


# --- errors --------------------------------------------------------------------------------------


class TestClassify:
    @pytest.mark.parametrize(
        ("error", "kind"),
        [
            (pg_errors.SerializationFailure("could not serialize access"), Kind.CONFLICT),
            (pg_errors.DeadlockDetected("deadlock detected"), Kind.CONFLICT),
            (
                psycopg.OperationalError("restart transaction: TransactionRetryWithProtoRefreshError"),
                Kind.CONFLICT,
            ),
            (pg_errors.QueryCanceled("canceling statement due to statement timeout"), Kind.CANCELLED),
            (pg_errors.AdminShutdown("terminating connection due to administrator command"), Kind.CONNECTION),
            (pg_errors.TooManyConnections("sorry, too many clients already"), Kind.CONNECTION),
            (pg_errors.InsufficientPrivilege("permission denied for table x"), Kind.PERMISSION),
            (pg_errors.UndefinedTable('relation "x" does not exist'), Kind.SCHEMA),
            (pg_errors.InvalidPassword("password authentication failed"), Kind.AUTHENTICATION),
            (pg_errors.UniqueViolation("duplicate key"), Kind.OTHER),
            (psycopg.DataError("invalid byte sequence"), Kind.OTHER),
            (ValueError("not a driver error"), Kind.OTHER),
        ],
    )
    def test_by_sqlstate(self, error: BaseException, kind: Kind) -> None:
        assert classify(error) is kind

    @pytest.mark.parametrize(
        ("message", "kind"),
        [
            (
                'connection failed: ... failed: FATAL:  password authentication failed for user "u"',
                Kind.AUTHENTICATION,
            ),
            ('FATAL:  no pg_hba.conf entry for host "1.2.3.4", user "u"', Kind.AUTHENTICATION),
            ('FATAL:  role "ghost" does not exist', Kind.AUTHENTICATION),
            ('FATAL:  database "nodb" does not exist', Kind.CONFIG),
            ('FATAL:  permission denied for database "d"', Kind.PERMISSION),
            ('connection is bad: invalid integer value "xx" for connection option "port"', Kind.CONFIG),
            ('connection is bad: invalid sslmode value: "bogus"', Kind.CONFIG),
            ("connection failed: ... port 1 failed: Connection refused", Kind.CONNECTION),
            ("server closed the connection unexpectedly", Kind.CONNECTION),
        ],
    )
    def test_connection_time_errors_by_message(self, message: str, kind: Kind) -> None:
        assert classify(psycopg.OperationalError(message)) is kind


def test_backoff_windows_double_up_to_the_cap() -> None:
    windows = list(backoff_delays(6, rng=lambda low, high: high))
    assert windows == [0.025, 0.05, 0.1, 0.2, 0.25, 0.25]
    lows = list(backoff_delays(3, rng=lambda low, high: low))
    assert lows == [0.005, 0.01, 0.02]
    assert list(backoff_delays(0)) == []
    assert all(0.005 <= d <= 0.25 for d in backoff_delays(50))


class TestErrorContext:
    context = ErrorContext(
        "postgres", "postgresql://u@h:1/d", ("p_refs", "p_objs"), lambda t: t.replace("pw", "***")
    )

    @pytest.mark.parametrize(
        ("kind", "cls", "fix_word"),
        [
            (Kind.AUTHENTICATION, BackendAuthenticationFailed, "password"),
            (Kind.PERMISSION, BackendPermissionDenied, "p_refs, p_objs"),
            (Kind.SCHEMA, BackendSchemaMismatch, "setup_schema"),
            (Kind.CONFIG, BackendConfigError, "CREATE DATABASE"),
            (Kind.CONNECTION, BackendUnavailable, "pg_isready"),
            (Kind.CANCELLED, BackendUnavailable, "statement_timeout"),
        ],
    )
    def test_messages_name_backend_address_and_fix(self, kind: Kind, cls: type, fix_word: str) -> None:
        error = self.context.backend_error(kind, psycopg.OperationalError("bad pw\nsecond line"), "doing x")
        assert isinstance(error, cls)
        assert str(error).startswith("postgres at postgresql://u@h:1/d: ")
        assert fix_word in error.fix
        assert "pw" not in str(error)
        assert "bad *** second line" in str(error)

    def test_unknown_result(self) -> None:
        error = self.context.unknown_result(psycopg.OperationalError("lost pw"), "updating a reference")
        assert isinstance(error, UnknownOperationResult)
        assert "updating a reference may or may not have been applied" in str(error)
        assert "pw" not in str(error)


# --- dialects and SQL ----------------------------------------------------------------------------


def test_dialect_detection_from_version_text() -> None:
    pg = "PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc 12.2.0, 64-bit"
    crdb = "CockroachDB CCL v25.2.4 (x86_64-pc-linux-gnu, built 2025/07/30 15:00:00, go1.23.7)"
    assert detect_dialect(pg) is POSTGRESQL
    assert detect_dialect(crdb) is COCKROACHDB
    assert short_version(pg) == "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)"
    assert short_version(crdb) == "CockroachDB CCL v25.2.4"


class TestStatements:
    def test_postgres_names_compare_bytewise_and_upsert_on_conflict(self) -> None:
        sql = Statements("p_", POSTGRESQL)
        assert 'ref_name TEXT COLLATE "C" NOT NULL' in sql.create["p_refs"]
        assert "ON CONFLICT (repo, obj_id) DO UPDATE" in sql.upsert_objs
        assert "UPSERT" not in sql.upsert_objs

    def test_only_postgres_own_objects_table_stores_values_uncompressed(self) -> None:
        """CockroachDB has no storage clause, and Nessie's tables are created as Nessie does."""
        assert Statements("p_", POSTGRESQL).after_create == {
            "p_objs": ("ALTER TABLE p_objs ALTER COLUMN obj_value SET STORAGE EXTERNAL",)
        }
        assert Statements("p_", COCKROACHDB).after_create == {}
        assert Statements("p_", POSTGRESQL, NESSIE_LAYOUT).after_create == {}

    def test_cockroach_uses_upsert_and_plain_strings(self) -> None:
        sql = Statements("p_", COCKROACHDB)
        assert sql.upsert_objs.startswith("UPSERT INTO p_objs")
        assert "COLLATE" not in " ".join(sql.create.values())

    @pytest.mark.parametrize("dialect", [POSTGRESQL, COCKROACHDB])
    def test_every_statement_uses_the_prefixed_tables(self, dialect: object) -> None:
        sql = Statements("zz_", dialect)  # type: ignore[arg-type]
        texts = [v for k, v in vars(sql).items() if isinstance(v, str) and k not in ("prefix", "inspect")]
        texts = [t for t in texts if not t.startswith("SELECT c.relname")]  # the catalog queries
        for text in texts:
            assert "zz_" in text, text
        assert sql.table_names == ("zz_refs", "zz_objs", "zz_schema")

    def test_compare_and_swap_carries_the_whole_expected_state(self) -> None:
        sql = Statements("p_", POSTGRESQL)
        expected = RefRow("main", b"\1" * 32, False, 7, None, b"")
        for text, _ in (sql.update_ref("r", expected, expected), sql.delete_ref("r", expected)):
            where = text.split("WHERE", 1)[1]
            for column in ("repo", "ref_name", "pointer", "deleted", "created_at"):
                assert f"{column} = %s" in where
            assert "ext_info IS NOT DISTINCT FROM %s" in where
            assert "prev_ptr" not in where  # history is not part of the condition


# --- schema verdict ------------------------------------------------------------------------------


class TestSchemaVerdict:
    sql = Statements("p_", POSTGRESQL)
    complete = expected_columns("p_")

    def test_nothing_exists(self) -> None:
        verdict = judge(self.sql, Found({}, None))
        assert verdict.problem is None
        assert verdict.missing == ("p_refs", "p_objs", "p_schema")

    def test_complete_and_current(self) -> None:
        verdict = judge(self.sql, Found(self.complete, (SCHEMA_VERSION, "lochkit 0.1.0")))
        assert (verdict.missing, verdict.problem) == ((), None)

    def test_version_table_without_row_gets_one(self) -> None:
        assert judge(self.sql, Found(self.complete, None)).missing == ("p_schema",)

    def test_other_version(self) -> None:
        problem = judge(self.sql, Found(self.complete, (SCHEMA_VERSION + 1, "lochkit 9.9"))).problem
        assert problem is not None
        assert f"schema version {SCHEMA_VERSION + 1} (by lochkit 9.9)" in problem

    def test_data_tables_without_version_table(self) -> None:
        found = Found({"p_refs": self.complete["p_refs"]}, None)
        problem = judge(self.sql, found).problem
        assert problem is not None
        assert "older than schema versioning" in problem

    def test_changed_columns(self) -> None:
        objs = dict(self.complete["p_objs"])
        objs["obj_id"] = "character varying"
        problem = judge(self.sql, Found({**self.complete, "p_objs": objs}, (SCHEMA_VERSION, "x"))).problem
        assert problem is not None
        assert "table p_objs has columns" in problem


# --- factories -----------------------------------------------------------------------------------


def test_capabilities() -> None:
    assert CAPABILITIES.multi_process
    assert CAPABILITIES.durable
    assert CAPABILITIES.hard_object_size_limit is None
    assert dict(CAPABILITIES.deviations) == {}
    assert PostgresBackendFactory().capabilities is CockroachBackendFactory().capabilities


def test_factories_are_picklable_for_spawned_processes() -> None:
    for factory in (PostgresBackendFactory(), CockroachBackendFactory()):
        assert type(pickle.loads(pickle.dumps(factory))) is type(factory)


def test_modules_import_without_the_driver() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["psycopg"] = None  # makes "import psycopg" fail
        sys.modules["psycopg_pool"] = None
        import backends.postgres as backend
        import provisioning.servers.postgres as servers
        factory = backend.PostgresBackendFactory()
        assert factory.capabilities.multi_process
        assert servers.PROVISIONER.backends == ("postgres", "cockroachdb")
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr


def test_cockroach_factory_asks_for_the_cockroach_dialect() -> None:
    assert CockroachBackendFactory.dialect == "cockroachdb"
    assert CockroachBackendFactory.name == "cockroachdb"
    assert PostgresBackendFactory.dialect == "auto"


# --- provisioner decisions -----------------------------------------------------------------------


def test_bindir_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("initdb", "postgres"):
        (tmp_path / name).write_text("")
    monkeypatch.setenv("LOCHKIT_POSTGRES_BINDIR", str(tmp_path))
    assert provisioning.server_bindir() == tmp_path


def test_missing_binaries_without_root_explain_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provisioning, "server_bindir", lambda: None)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(ProvisioningFailed) as e:
        provisioning.PROVISIONER.install("postgres")
    assert "apt-get install -y postgresql" in str(e.value)
    assert "LOCHKIT_POSTGRES_BINDIR" in str(e.value)


def test_cockroach_has_no_local_process(tmp_path: Path) -> None:
    with pytest.raises(ProvisioningFailed) as e:
        provisioning.PROVISIONER.local_process("cockroachdb", tmp_path)
    assert "--provision testcontainers" in str(e.value)
    assert "--backend-url 'cockroachdb=postgresql://" in str(e.value)
    with pytest.raises(ProvisioningFailed, match="cannot be installed"):
        provisioning.PROVISIONER.install("cockroachdb")
    assert list(tmp_path.iterdir()) == []


def test_provisioned_repr_hides_the_admin_url() -> None:
    provisioned = provisioning.PostgresProvisioned(
        "postgres",
        "postgresql://u:pw1@h:1/d",
        "local-process",
        admin_url="postgresql://postgres:pw2@h:1/postgres",
    )
    assert "pw2" not in repr(provisioned)
    assert "pw1" not in provisioned.describe()


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        (f"postgresql://alice:{ENCODED}@127.0.0.1:xx/d", 'invalid integer value "xx"'),
        (f"postgresql://alice:{ENCODED}@127.0.0.1:1/d?sslmode=bogus", 'invalid sslmode value: "bogus"'),
    ],
)
def test_values_libpq_rejects_are_config_errors(url: str, needle: str) -> None:
    """libpq checks these before connecting, so no server is needed."""
    with pytest.raises(BackendConfigError) as e:
        PostgresBackendFactory().create(url)
    assert needle in str(e.value)
    assert SECRET not in str(e.value)
    assert ENCODED not in str(e.value)
