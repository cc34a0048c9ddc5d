"""Unit tests of the MariaDB backend's pure parts: URL and option parsing, the password in
messages, error classification, the size limit, RETURNING detection, the rows Nessie's layout
reads and writes, and the schema verdict. Behaviour against a real server is in
tests/servers/test_mariadb.py and in the conformance suites."""

from __future__ import annotations

import pymysql
import pytest

from backends.mariadb.adapter import has_returning
from backends.mariadb.capabilities import object_size_limit
from backends.mariadb.config import parse_settings
from backends.mariadb.errors import classify, error_context
from backends.mariadb.schema import RULES
from backends.mariadb.statements import NESSIE_OBJS, NESSIE_REFS, Statements, expected_columns
from backends.postgres.errors import Kind
from backends.postgres.schema import Found, judge
from persist_spi.adapter import RefRow
from persist_spi.errors import BackendAuthenticationFailed, BackendConfigError
from persist_spi.layouts import NESSIE_LAYOUT

SECRET = "s3cr%2Ft-pw"  # percent-encoded '/' in the URL


def test_url_is_parsed_and_its_address_has_no_password() -> None:
    settings = parse_settings("mariadb", f"mysql://me:{SECRET}@db.example:3307/store?pool_max=3")
    assert (settings.host, settings.port, settings.user, settings.database) == (
        "db.example",
        3307,
        "me",
        "store",
    )
    assert settings.password == "s3cr/t-pw"
    assert settings.pool_max == 3
    assert "s3cr" not in settings.address
    assert "s3cr" not in repr(settings)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://me@h/db", "unsupported URL scheme"),
        ("mariadb://me@h:3306", "names no database"),
        ("mariadb://me@h/db?pool_maxx=3", "unknown option(s) pool_maxx"),
        ("mariadb://me@h/db?pool_max=0", "must be between"),
        ("mariadb://me@h/db?layout=nessie&table_prefix=x_", "cannot be combined with layout=nessie"),
        ("mariadb://me:a/b@h/db", "unencoded"),
    ],
)
def test_bad_urls_are_refused_with_the_reason(url: str, message: str) -> None:
    with pytest.raises(BackendConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_settings("mariadb", url)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (pymysql.OperationalError(1213, "Deadlock found"), Kind.CONFLICT),
        (pymysql.OperationalError(1205, "Lock wait timeout exceeded"), Kind.CONFLICT),
        (pymysql.OperationalError(1045, "Access denied for user"), Kind.AUTHENTICATION),
        (pymysql.OperationalError(1044, "Access denied for user to database"), Kind.PERMISSION),
        (pymysql.ProgrammingError(1146, "Table doesn't exist"), Kind.SCHEMA),
        (pymysql.OperationalError(1049, "Unknown database"), Kind.CONFIG),
        (pymysql.OperationalError(2003, "Can't connect"), Kind.CONNECTION),
        (pymysql.OperationalError(2013, "Lost connection during query (timed out)"), Kind.CONNECTION),
        (pymysql.InterfaceError(0, ""), Kind.CONNECTION),
        (
            pymysql.OperationalError(1969, "Query execution was interrupted (max_statement_time)"),
            Kind.CANCELLED,
        ),
        (pymysql.IntegrityError(1062, "Duplicate entry"), Kind.OTHER),
        (ValueError("not a driver error"), Kind.OTHER),
    ],
)
def test_errors_are_classified_by_number(error: BaseException, kind: Kind) -> None:
    assert classify(error) is kind


def test_messages_never_show_the_password() -> None:
    settings = parse_settings("mariadb", f"mariadb://me:{SECRET}@h/db")
    context = error_context("mariadb", settings.address, ("t",), settings.scrub)
    error = pymysql.OperationalError(1045, "Access denied for user 'me' (using password: s3cr/t-pw)")
    translated = context.backend_error(Kind.AUTHENTICATION, error, "connecting")
    assert isinstance(translated, BackendAuthenticationFailed)
    assert "s3cr" not in str(translated)


def test_the_size_limit_leaves_room_for_escaping_and_the_statement() -> None:
    limit = object_size_limit(16 * 1024 * 1024)
    assert 2 * limit < 16 * 1024 * 1024
    assert limit > 8 * 1024 * 1024 - 100 * 1024


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("10.11.19-MariaDB-0+deb12u1", True),
        ("10.5.0-MariaDB", True),
        ("10.4.34-MariaDB", False),
        ("8.4.2", False),
    ],
)
def test_returning_is_used_on_mariadb_10_5_and_later_only(version: str, expected: bool) -> None:
    assert has_returning(version) is expected


def test_nessie_rows_write_null_for_zero_and_empty_and_read_bit_flags() -> None:
    sql = Statements("", NESSIE_LAYOUT)
    _, params = sql.insert_ref("repo", RefRow("main", b"\x01", False, 0, None, b""))
    assert params == ["repo", "main", b"\x01", False, None, None, None]
    condition, _ = sql._ref_condition("repo", RefRow("main", b"\x01", False, 0, None, b""))
    assert "created_at IS NULL" in condition
    assert "ext_info IS NULL" in condition
    row = sql.ref_from_db(("main", b"\x01", b"\x01", None, None, None))
    assert row == RefRow("main", b"\x01", True, 0, None, b"")
    assert sql.ref_from_db(("main", b"\x01", b"\x00", 5, b"\x02", b"h")).deleted is False


def test_nessie_tables_use_nessies_mariadb_types() -> None:
    create = Statements("", NESSIE_LAYOUT).create
    assert "utf8mb4_bin" in create[NESSIE_REFS]
    assert "BIT(1)" in create[NESSIE_REFS]
    assert "obj_id(255)" in create[NESSIE_OBJS]
    assert "TINYBLOB" in create[NESSIE_OBJS]


def test_schema_verdicts() -> None:
    lochkit = Statements("lk_")
    good = Found(expected_columns("lk_"), (1, "lochkit test"))
    assert judge(lochkit, good, RULES).problem is None
    odd = {**expected_columns("lk_"), "lk_objs": {"repo": "varchar"}}
    assert "has columns" in (judge(lochkit, Found(odd, (1, "x")), RULES).problem or "")
    nessie = Statements("", NESSIE_LAYOUT)
    columns = {
        NESSIE_REFS: dict.fromkeys(
            ("repo", "ref_name", "pointer", "deleted", "created_at", "ext_info", "prev_ptr"), "x"
        )
        | {"repo": "varchar", "ref_name": "varchar"},
    }
    found = Found(columns, None, {NESSIE_REFS: ("repo", "ref_name")})
    assert judge(nessie, found, RULES).missing == (NESSIE_OBJS,)
    wrong = Found(columns, None, {NESSIE_REFS: ("repo",)})
    assert "primary key" in (judge(nessie, wrong, RULES).problem or "")


def test_a_broken_connection_discards_the_idle_ones() -> None:
    """After a server restart every pooled connection is dead: a read retried once must not meet
    another dead one."""
    from backends.mariadb.pool import ConnectionPool

    made: list[int] = []
    closed: list[int] = []

    def connect() -> int:
        made.append(len(made))
        return made[-1]

    pool: ConnectionPool[int] = ConnectionPool(connect, closed.append, size=3, timeout=1)
    with pool.borrowed(), pool.borrowed(), pool.borrowed():
        pass
    pool.discard_idle()
    assert sorted(closed) == [0, 1, 2]
    with pool.borrowed() as conn:
        assert conn == 3  # a new connection, not a discarded one
