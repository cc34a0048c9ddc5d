"""The MariaDB / MySQL factory, and connecting: one probe connection reads the server's version and
``max_allowed_packet``, then the adapter's pool makes its connections the same way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from backends.mariadb.adapter import ISOLATION, SQL_MODE, MariadbAdapter
from backends.mariadb.capabilities import capabilities
from backends.mariadb.config import MariadbSettings, parse_settings
from backends.mariadb.errors import classify, error_context
from backends.postgres.errors import Kind
from persist_spi.adapter import Capabilities
from persist_spi.registry import BackendFactory, verified

if TYPE_CHECKING:
    from pymysql.connections import Connection

#: MariaDB's default max_allowed_packet (16 MiB), for the capabilities declared before connecting;
#: an adapter declares its server's own.
DEFAULT_MAX_ALLOWED_PACKET: Final = 16 * 1024 * 1024


def open_connection(settings: MariadbSettings) -> Connection[Any]:
    """A connection in autocommit mode, reporting matched rather than changed rows (so an UPDATE
    that sets a row to the values it has still counts), with lochkit's session settings. It accepts
    several statements in one request, which the store-and-swap sends (every value lochkit sends
    is escaped by the driver, so this opens no way to inject one)."""
    import pymysql
    from pymysql.constants import CLIENT

    conn = pymysql.connect(
        host=settings.host,
        port=settings.port,
        user=settings.user,
        password=settings.password,
        database=settings.database,
        charset="utf8mb4",
        autocommit=True,
        client_flag=CLIENT.FOUND_ROWS | CLIENT.MULTI_STATEMENTS,
        connect_timeout=settings.connect_timeout,
        # A socket timeout on every read and write: bounds a stalled or half-open connection.
        read_timeout=settings.request_timeout,
        write_timeout=settings.request_timeout,
    )
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"SET SESSION sql_mode = '{SQL_MODE}'")
            access = "READ ONLY" if settings.read_only else "READ WRITE"
            cursor.execute(f"SET SESSION TRANSACTION ISOLATION LEVEL {ISOLATION}, {access}")
    except BaseException:
        conn.close()
        raise
    return conn


def connect(settings: MariadbSettings) -> MariadbAdapter:
    """Probe the server with one connection (so failures carry the server's own reason), then
    hand the adapter a way to make more."""
    import pymysql

    errors = error_context(settings.backend, settings.address, (), settings.scrub)
    try:
        conn = open_connection(settings)
        try:
            with conn.cursor() as cursor:
                cursor.execute("SELECT VERSION(), @@max_allowed_packet")
                version, packet = cursor.fetchone() or ("", DEFAULT_MAX_ALLOWED_PACKET)
        finally:
            conn.close()
    except pymysql.MySQLError as e:
        kind = classify(e)
        raise errors.backend_error(Kind.CONNECTION if kind is Kind.OTHER else kind, e, "connecting") from None
    return MariadbAdapter(settings, lambda: open_connection(settings), str(version), int(packet))


class MariadbBackendFactory(BackendFactory):
    """``mariadb://user:password@host:port/database?table_prefix=...``; also ``mysql://``."""

    name = "mariadb"
    description = "MariaDB or MySQL through PyMySQL; a server is needed"
    required_modules = ("pymysql",)
    extra = "mariadb"
    default_url = None

    @property
    def capabilities(self) -> Capabilities:
        return capabilities(DEFAULT_MAX_ALLOWED_PACKET)

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> MariadbAdapter:
        return connect(parse_settings(self.name, url, options))

    def open_existing(
        self, url: str | None = None, options: Mapping[str, Any] | None = None, *, read_only: bool = True
    ) -> MariadbAdapter:
        settings = replace(parse_settings(self.name, url, options), read_only=read_only)
        return verified(connect(settings))
