"""How PostgreSQL / CockroachDB errors become lochkit errors.

:func:`classify` sorts a driver error into a :class:`Kind` by SQLSTATE, falling back to the message
for errors raised while connecting (libpq reports those without a SQLSTATE). :class:`ErrorContext`
turns a kind into the error a user meets, naming the backend, its address (no secrets) and the fix.
"""

from __future__ import annotations

import enum
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from persist_spi import hints
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendError,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    UnknownOperationResult,
)


class Kind(enum.Enum):
    #: The server aborted the transaction for a conflict (serialization failure, deadlock, or
    #: CockroachDB's "restart transaction"); nothing was applied and the whole transaction may be
    #: run again.
    CONFLICT = "conflict"
    #: The server itself cannot say whether the statement committed (CockroachDB 40003).
    AMBIGUOUS = "ambiguous"
    #: The statement was cancelled (statement_timeout, pg_cancel_backend).
    CANCELLED = "cancelled"
    #: No connection could be made, or it was lost.
    CONNECTION = "connection"
    AUTHENTICATION = "authentication"
    PERMISSION = "permission"
    #: A table or column is missing.
    SCHEMA = "schema"
    #: The URL names something that does not exist (the database).
    CONFIG = "config"
    #: Anything else: a bug or bad data; propagated unchanged.
    OTHER = "other"


_BY_SQLSTATE = {
    "40001": Kind.CONFLICT,  # serialization_failure (CockroachDB: every retryable error)
    "40P01": Kind.CONFLICT,  # deadlock_detected
    "40003": Kind.AMBIGUOUS,  # statement_completion_unknown
    "57014": Kind.CANCELLED,  # query_canceled
    "57P01": Kind.CONNECTION,  # admin_shutdown (also pg_terminate_backend)
    "57P02": Kind.CONNECTION,  # crash_shutdown
    "57P03": Kind.CONNECTION,  # cannot_connect_now (starting up or shutting down)
    "28P01": Kind.AUTHENTICATION,  # invalid_password
    "28000": Kind.AUTHENTICATION,  # invalid_authorization_specification
    "42501": Kind.PERMISSION,  # insufficient_privilege
    "42P01": Kind.SCHEMA,  # undefined_table
    "42703": Kind.SCHEMA,  # undefined_column
    "3D000": Kind.CONFIG,  # invalid_catalog_name: the database does not exist
}
#: Errors raised while connecting come from libpq without a SQLSTATE: recognised by message.
_BY_MESSAGE = (
    (
        re.compile(
            r"password authentication failed|no pg_hba\.conf entry|authentication failed"
            r"|no password supplied|password is missing|role \".*\" does not exist"
        ),
        Kind.AUTHENTICATION,
    ),
    (re.compile(r"permission denied"), Kind.PERMISSION),  # 'permission denied for database "x"'
    (re.compile(r"database \".*\" does not exist"), Kind.CONFIG),
    (re.compile(r"invalid [\w ]*value"), Kind.CONFIG),  # 'invalid integer value "x" for ... "port"'
)


def classify(error: BaseException) -> Kind:
    """The kind of a psycopg error (or of anything else: OTHER)."""
    import psycopg

    sqlstate: str | None = getattr(error, "sqlstate", None)
    message = str(error).lower()
    if sqlstate in _BY_SQLSTATE:
        return _BY_SQLSTATE[sqlstate]
    if "restart transaction" in message:  # CockroachDB retry errors, whatever their code
        return Kind.CONFLICT
    if sqlstate is not None and sqlstate[:2] in ("08", "53"):  # connection exception, resources
        return Kind.CONNECTION
    if sqlstate is None and isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        for pattern, kind in _BY_MESSAGE:
            if pattern.search(message):
                return kind
        return Kind.CONNECTION
    return Kind.OTHER


def backoff_delays(
    retries: int,
    *,
    lower: float = 0.005,
    upper: float = 0.025,
    cap: float = 0.25,
    rng: Callable[[float, float], float] = random.uniform,
) -> Iterator[float]:
    """Seconds to sleep before each retry: random within a window that doubles each time (capped),
    so that writers who collided once do not collide again in lockstep."""
    for _ in range(retries):
        yield rng(lower, upper)
        lower, upper = min(cap, lower * 2), min(cap, upper * 2)


@dataclass(frozen=True)
class Fixes:
    """What a user of one SQL database does about each kind of error: the rest of every message
    (what happened, while doing what, with the driver's words) is the same for all of them."""

    #: Where credentials are refused besides a wrong password (pg_hba.conf, a user's host).
    authentication: str
    #: Which grants the user needs; ``{tables}`` becomes the tables' names.
    permission: str
    #: How to create the database the URL names.
    create_database: str
    #: Which server setting cancels a statement.
    cancelled: str
    #: A command that checks the server answers at HOST and PORT.
    ping: str
    #: The backend's URL form, with a placeholder for each part.
    url_form: str
    #: The URL options that bound how long lochkit waits.
    waits: str


POSTGRES_FIXES = Fixes(
    authentication="that the server's pg_hba.conf lets this user connect from this host",
    permission=(
        "Grant the user CONNECT on the database, CREATE on the schema (to create the tables; or "
        "create them as another user), and SELECT, INSERT, UPDATE, DELETE on {tables}"
    ),
    create_database="CREATE DATABASE ...",
    cancelled="statement_timeout (set for the user, the database, or in the URL's options)",
    ping="pg_isready -h HOST -p PORT",
    url_form="postgresql://USER:PASSWORD@HOST:PORT/DATABASE",
    waits="connect_timeout and pool_timeout",
)


def one_line(error: BaseException) -> str:
    """The driver's message on one line."""
    return " ".join(line.strip() for line in str(error).strip().splitlines())


@dataclass(frozen=True)
class ErrorContext:
    """Turns a classified error into the error a user meets."""

    backend: str
    address: str
    tables: tuple[str, ...]
    scrub: Callable[[str], str]
    fixes: Fixes = POSTGRES_FIXES
    #: The driver's message on one line (its drivers differ in where they keep it).
    describe: Callable[[BaseException], str] = one_line

    def detail(self, error: BaseException) -> str:
        """The driver's message on one line, with secrets removed."""
        return self.scrub(self.describe(error))

    def backend_error(self, kind: Kind, error: BaseException, during: str) -> BackendError:
        detail = self.detail(error)
        fixes = self.fixes
        if kind is Kind.AUTHENTICATION:
            return BackendAuthenticationFailed(
                self.backend,
                self.address,
                f"the server rejected the credentials while {during} ({detail})",
                "Check the user name and password in the URL (percent-encode special characters) and "
                + fixes.authentication,
            )
        if kind is Kind.PERMISSION:
            tables = ", ".join(self.tables) or "lochkit's tables"
            return BackendPermissionDenied(
                self.backend,
                self.address,
                f"permission denied while {during} ({detail})",
                fixes.permission.format(tables=tables),
            )
        if kind is Kind.SCHEMA:
            return BackendSchemaMismatch(
                self.backend,
                self.address,
                f"a table or column is missing while {during} ({detail})",
                "Create the tables with setup_schema() (lochkit's tools and the conformance suites do "
                "so before use) and check that table_prefix names the tables you mean",
            )
        if kind is Kind.CONFIG:
            return BackendConfigError(
                self.backend,
                self.address,
                detail,
                "Check the URL and its options; if the database does not exist, create it "
                f"({fixes.create_database}) or name another one",
            )
        if kind is Kind.CANCELLED:
            return BackendUnavailable(
                self.backend,
                self.address,
                f"the server cancelled the statement while {during} ({detail})",
                f"Check {fixes.cancelled} and the server's load",
            )
        return BackendUnavailable(
            self.backend,
            self.address,
            f"cannot reach the server while {during} ({detail})",
            "Check that it is running and accepts TCP connections at this host and port "
            f"({fixes.ping}), or {hints.pass_url(self.backend, fixes.url_form)}; "
            f"{fixes.waits} bound how long lochkit waits",
        )

    def unknown_result(self, error: BaseException, during: str) -> UnknownOperationResult:
        return UnknownOperationResult(
            f"{self.backend} at {self.address}: {during} may or may not have been applied "
            f"({self.detail(error)}); every lochkit write is conditional, so retrying it is safe"
        )
