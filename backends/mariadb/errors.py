"""How MariaDB / MySQL errors become lochkit errors.

:func:`classify` sorts a PyMySQL error into one of the PostgreSQL backend's kinds (the same
meanings: a conflict may be run again, a lost connection leaves a write's outcome unknown...) by
the server's error number; client-side errors (2000-2999) are connection problems.
:func:`error_context` gives the SQL adapters' :class:`~backends.postgres.errors.ErrorContext` with
MariaDB's fixes: it turns a kind into the error a user meets, naming the backend, its address (no
password) and the fix.
"""

from __future__ import annotations

from collections.abc import Callable

from backends.postgres.errors import ErrorContext, Fixes, Kind

_BY_ERRNO = {
    # The statement (in autocommit mode: the whole transaction) was rolled back; it may run again.
    1213: Kind.CONFLICT,  # ER_LOCK_DEADLOCK
    1205: Kind.CONFLICT,  # ER_LOCK_WAIT_TIMEOUT (innodb_lock_wait_timeout)
    1969: Kind.CANCELLED,  # ER_STATEMENT_TIMEOUT (MariaDB's max_statement_time)
    3024: Kind.CANCELLED,  # ER_QUERY_TIMEOUT (MySQL's max_execution_time)
    1317: Kind.CANCELLED,  # ER_QUERY_INTERRUPTED (KILL QUERY)
    1040: Kind.CONNECTION,  # ER_CON_COUNT_ERROR: too many connections
    1053: Kind.CONNECTION,  # ER_SERVER_SHUTDOWN
    1927: Kind.CONNECTION,  # ER_CONNECTION_KILLED
    1153: Kind.CONNECTION,  # ER_NET_PACKET_TOO_LARGE: the server closes the connection
    1045: Kind.AUTHENTICATION,  # ER_ACCESS_DENIED_ERROR: wrong user or password
    1698: Kind.AUTHENTICATION,  # ER_ACCESS_DENIED_NO_PASSWORD_ERROR
    1044: Kind.PERMISSION,  # ER_DBACCESS_DENIED_ERROR: no access to the database
    1142: Kind.PERMISSION,  # ER_TABLEACCESS_DENIED_ERROR
    1143: Kind.PERMISSION,  # ER_COLUMNACCESS_DENIED_ERROR
    1227: Kind.PERMISSION,  # ER_SPECIFIC_ACCESS_DENIED_ERROR
    1792: Kind.PERMISSION,  # ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
    1146: Kind.SCHEMA,  # ER_NO_SUCH_TABLE
    1054: Kind.SCHEMA,  # ER_BAD_FIELD_ERROR: unknown column
    1049: Kind.CONFIG,  # ER_BAD_DB_ERROR: unknown database
}


def classify(error: BaseException) -> Kind:
    """The kind of a PyMySQL error (or of anything else: OTHER)."""
    import pymysql

    if not isinstance(error, pymysql.MySQLError):
        return Kind.OTHER
    if isinstance(error, pymysql.InterfaceError):  # used a connection that is already closed
        return Kind.CONNECTION
    number = error.args[0] if error.args and isinstance(error.args[0], int) else None
    if number in _BY_ERRNO:
        return _BY_ERRNO[number]
    if number is not None and 2000 <= number < 3000:  # client errors: cannot connect, lost, timed out
        return Kind.CONNECTION
    return Kind.OTHER


def driver_message(error: BaseException) -> str:
    """PyMySQL's message on one line: its errors carry (number, text) as their arguments."""
    text = " ".join(str(part) for part in error.args) if error.args else str(error)
    return " ".join(line.strip() for line in text.strip().splitlines())


MARIADB_FIXES = Fixes(
    authentication="that the user may connect from this host (CREATE USER 'name'@'host')",
    permission=(
        "Grant the user access to the database named in the URL (which must exist), CREATE on it "
        "(to create the tables; or create them as another user), and SELECT, INSERT, UPDATE, "
        "DELETE on {tables}"
    ),
    create_database="CREATE DATABASE name CHARACTER SET utf8mb4",
    cancelled="max_statement_time (MariaDB) or max_execution_time (MySQL)",
    ping="mariadb-admin -h HOST -P PORT ping",
    url_form="mariadb://USER:PASSWORD@HOST:PORT/DATABASE",
    waits="connect_timeout, request_timeout and pool_timeout",
)


def error_context(
    backend: str, address: str, tables: tuple[str, ...], scrub: Callable[[str], str]
) -> ErrorContext:
    """The error context of a MariaDB / MySQL adapter: the SQL adapters' one, with this database's
    fixes and its driver's way of carrying a message."""
    return ErrorContext(backend, address, tables, scrub, MARIADB_FIXES, driver_message)
