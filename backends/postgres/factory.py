"""The PostgreSQL and CockroachDB factories, and connecting: probe the server, pick the dialect,
then open the adapter's pool."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backends.postgres.adapter import PostgresAdapter
from backends.postgres.capabilities import CAPABILITIES
from backends.postgres.config import PgSettings, parse_settings
from backends.postgres.config import read_only as read_only_settings
from backends.postgres.errors import ErrorContext, Kind, classify
from backends.postgres.statements import DIALECTS, detect_dialect, short_version
from persist_spi.adapter import Capabilities
from persist_spi.errors import BackendConfigError
from persist_spi.registry import BackendFactory, verified


def connect(settings: PgSettings) -> PostgresAdapter:
    """Probe the server with one connection (so failures carry libpq's own reason), pick the
    dialect, then open the pool."""
    import psycopg

    errors = ErrorContext(settings.backend, settings.address, (), settings.scrub)
    try:
        with psycopg.connect(settings.conninfo, autocommit=True) as conn:
            row = conn.execute("SELECT version()").fetchone()
    except psycopg.Error as e:
        kind = classify(e)
        raise errors.backend_error(Kind.CONNECTION if kind is Kind.OTHER else kind, e, "connecting") from None
    version_text = str(row[0]) if row else ""
    detected = detect_dialect(version_text)
    if settings.dialect != "auto" and DIALECTS[settings.dialect] is not detected:
        raise BackendConfigError(
            settings.backend,
            settings.address,
            f"the server is {short_version(version_text)}, but dialect {settings.dialect} was asked for",
            f"use --backend {detected.backend}, or drop the dialect option to let lochkit detect it",
        )
    return PostgresAdapter(settings, version_text, detected)


class PostgresBackendFactory(BackendFactory):
    """``postgresql://user:password@host:port/database?table_prefix=...&pool_max=...``; also
    ``postgres://``. Detects CockroachDB by itself (see :class:`CockroachBackendFactory`)."""

    name = "postgres"
    description = "PostgreSQL through psycopg 3 (also detects CockroachDB); a server is needed"
    required_modules = ("psycopg", "psycopg_pool")
    extra = "postgres"
    default_url = None
    dialect = "auto"

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> PostgresAdapter:
        return connect(parse_settings(self.name, url, options, dialect=self.dialect))

    def open_existing(
        self, url: str | None = None, options: Mapping[str, Any] | None = None, *, read_only: bool = True
    ) -> PostgresAdapter:
        settings = parse_settings(self.name, url, options, dialect=self.dialect)
        return verified(connect(read_only_settings(settings) if read_only else settings))


class CockroachBackendFactory(PostgresBackendFactory):
    """CockroachDB through its PostgreSQL protocol: ``postgresql://root@host:26257/defaultdb?
    sslmode=disable`` (or ``cockroachdb://...``). Refuses a server that is not CockroachDB."""

    name = "cockroachdb"
    description = "CockroachDB through psycopg 3 (PostgreSQL protocol, UPSERT, 40001 retries)"
    dialect = "cockroachdb"
