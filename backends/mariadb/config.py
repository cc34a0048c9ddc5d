"""Connection settings of the MariaDB / MySQL backend: URL and option parsing.

A URL is ``mariadb://user:password@host:port/database?options`` (``mysql://`` is accepted too; the
port defaults to 3306). Its query holds lochkit's options (below); anything else is an error, so a
typo is reported instead of silently ignored. Options passed as a mapping win over the URL's.

The password never leaves this module in readable form: :attr:`MariadbSettings.address` has none,
and :meth:`MariadbSettings.scrub` removes it from any text (driver messages included).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

from backends.postgres.config import OptionValues, safe_address, scrub
from persist_spi import hints
from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout, parse_layout
from persist_spi.url_safety import AMBIGUOUS_FIX, AMBIGUOUS_PROBLEM, ambiguous_credentials, unshown

#: lochkit's options, with the help text shown when an unknown option is given.
OPTIONS: Final[dict[str, str]] = {
    "table_prefix": "prefix of the table names (default 'lochkit_'; lowercase letters, digits, _)",
    "pool_max": "most connections open at once (default 10)",
    "pool_timeout": "seconds to wait for a free connection (default 30)",
    "connect_timeout": "seconds to wait for a new connection (default 10)",
    "request_timeout": "seconds a statement may wait for the server's answer before its connection is "
    "closed (default 30; bounds a stalled or half-open connection)",
    "max_retries": "retries of a statement the server aborted for a deadlock or lock wait (default 8)",
    "layout": "lochkit (default: lochkit's own tables <prefix>refs, <prefix>objs, <prefix>schema) or nessie "
    "(a Nessie server's JDBC2 tables refs2 and objs2 and its object bytes, so both can share the database)",
}
SCHEMES: Final = ("mariadb", "mysql")
DEFAULT_PORT: Final = 3306
DEFAULT_TABLE_PREFIX: Final = "lochkit_"
_PREFIX_PATTERN: Final = re.compile(r"[a-z_][a-z0-9_]{0,39}")
_DATABASE_PATTERN: Final = re.compile(r"[A-Za-z0-9_$]{1,64}")
EXAMPLE_URL: Final = "mariadb://USER:PASSWORD@HOST:3306/DATABASE"


@dataclass(frozen=True)
class MariadbSettings:
    """Everything needed to connect; ``password`` is never shown."""

    backend: str
    address: str
    host: str
    port: int
    user: str
    password: str = field(repr=False)
    database: str
    table_prefix: str = DEFAULT_TABLE_PREFIX
    pool_max: int = 10
    pool_timeout: float = 30.0
    connect_timeout: float = 10.0
    request_timeout: float = 30.0
    max_retries: int = 8
    #: Whose tables and bytes: lochkit's own, or a Nessie server's (see :mod:`persist_spi.layouts`).
    layout: StorageLayout = LOCHKIT_LAYOUT
    #: Every session read-only (``SET SESSION TRANSACTION READ ONLY``): the server refuses writes.
    read_only: bool = False

    def scrub(self, text: str) -> str:
        """``text`` with the password (plain and URL-encoded) replaced by ``***``."""
        return scrub(text, (self.password,))


def parse_settings(
    backend: str, url: str | None, options: Mapping[str, Any] | None = None
) -> MariadbSettings:
    """Validate ``url`` and ``options``; raise :class:`BackendConfigError` naming the problem."""
    if not url:
        raise BackendConfigError(
            backend, "(no address)", "no URL was given", hints.pass_url(backend, EXAMPLE_URL)
        )
    if ambiguous_credentials(url):
        raise BackendConfigError(backend, unshown(url), AMBIGUOUS_PROBLEM, AMBIGUOUS_FIX)
    address = safe_address(url)
    scheme = url.partition("://")[0].lower()
    if scheme not in SCHEMES:
        raise BackendConfigError(
            backend,
            address,
            f"unsupported URL scheme '{scheme}'",
            f"use one of {', '.join(s + '://' for s in SCHEMES)}",
        )
    try:
        parts = urlsplit(url)
        port = parts.port or DEFAULT_PORT
    except ValueError as e:
        raise BackendConfigError(
            backend, address, f"the URL cannot be parsed ({e})", f"use {EXAMPLE_URL}"
        ) from None
    database = parts.path.lstrip("/")
    if not _DATABASE_PATTERN.fullmatch(database):
        raise BackendConfigError(
            backend,
            address,
            "the URL names no database" if not database else f"database name {database!r} is not supported",
            f"name the database in the URL's path ({EXAMPLE_URL}): letters, digits, _ and $",
        )
    given = dict(parse_qsl(parts.query, keep_blank_values=True))
    given.update({k: str(v) for k, v in (options or {}).items()})
    unknown = sorted(set(given) - set(OPTIONS))
    if unknown:
        raise BackendConfigError(
            backend,
            address,
            f"unknown option(s) {', '.join(unknown)}",
            "lochkit's options are " + "; ".join(f"{k}: {v}" for k, v in OPTIONS.items()),
        )

    reader = OptionValues(backend, address, given, OPTIONS)
    bad, number = reader.bad, reader.number

    prefix = given.get("table_prefix", DEFAULT_TABLE_PREFIX)
    if not _PREFIX_PATTERN.fullmatch(prefix):
        raise bad("table_prefix", "use 1-40 lowercase letters, digits or _, not starting with a digit")
    layout = parse_layout(backend, address, given.get("layout"))
    if layout is NESSIE_LAYOUT and "table_prefix" in given:
        raise BackendConfigError(
            backend,
            address,
            "option table_prefix cannot be combined with layout=nessie: Nessie's tables are always "
            "named refs2 and objs2",
            "Drop table_prefix; to keep several Nessie repositories' tables apart use another database",
        )
    return MariadbSettings(
        backend=backend,
        address=address,
        host=parts.hostname or "127.0.0.1",
        port=port,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        database=database,
        table_prefix=prefix,
        pool_max=number("pool_max", 10, 1, 1000),
        pool_timeout=number("pool_timeout", 30.0, 0.1, 3600, float),
        connect_timeout=number("connect_timeout", 10.0, 0.1, 3600, float),
        request_timeout=number("request_timeout", 30.0, 0.1, 86400, float),
        max_retries=number("max_retries", 8, 0, 100),
        layout=layout,
    )
