"""Connection settings of the PostgreSQL / CockroachDB backend: URL and option parsing.

A URL is ``postgresql://user:password@host:port/database?options`` (``postgres://`` and
``cockroachdb://`` are accepted too). Its query mixes lochkit's own options (below) with libpq
connection parameters (``sslmode``, ``application_name``...); anything else is an error, so a typo
is reported instead of silently ignored. Options passed as a mapping work the same way and win over
the URL's.

Passwords never leave this module in readable form: :attr:`PgSettings.address` has none, and
:meth:`PgSettings.scrub` removes them from any text (driver messages included) before it is shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final
from urllib.parse import parse_qsl, quote, unquote

from persist_spi import hints
from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout, parse_layout
from persist_spi.url_safety import AMBIGUOUS_FIX, AMBIGUOUS_PROBLEM, ambiguous_credentials, unshown

#: lochkit's own options, with the help text shown when an unknown option is given.
OPTIONS: Final[dict[str, str]] = {
    "table_prefix": "prefix of the table names (default 'lochkit_'; lowercase letters, digits, _)",
    "pool_min": "connections kept open (default 1)",
    "pool_max": "most connections open at once (default 10)",
    "pool_timeout": "seconds to wait for a free connection (default 30)",
    "request_timeout": "seconds a statement may wait for the server's answer before its connection is "
    "closed (default 30; bounds a stalled or half-open connection)",
    "dialect": "auto (ask the server, default), postgresql or cockroachdb",
    "max_retries": "retries of a transaction the server aborted for a conflict (default 8)",
    "layout": "lochkit (default: lochkit's own tables <prefix>refs, <prefix>objs, <prefix>schema) or nessie "
    "(a Nessie server's JDBC2 tables refs2 and objs2 and its object bytes, so both can share the database)",
}
SCHEMES: Final = ("postgresql", "postgres", "cockroachdb")
DIALECTS: Final = ("auto", "postgresql", "cockroachdb")
DEFAULT_TABLE_PREFIX: Final = "lochkit_"
DEFAULT_CONNECT_TIMEOUT: Final = "10"
DEFAULT_APPLICATION_NAME: Final = "lochkit"
_PREFIX_PATTERN: Final = re.compile(r"[a-z_][a-z0-9_]{0,39}")
#: libpq parameters that hold secrets.
_SECRET_PARAMS: Final = ("password", "sslpassword", "oauth_client_secret")


@dataclass(frozen=True)
class PgSettings:
    """Everything needed to connect; ``conninfo`` holds the password and is never shown."""

    backend: str
    address: str
    conninfo: str = field(repr=False)
    table_prefix: str = DEFAULT_TABLE_PREFIX
    pool_min: int = 1
    pool_max: int = 10
    pool_timeout: float = 30.0
    request_timeout: float = 30.0
    dialect: str = "auto"
    max_retries: int = 8
    #: Whose tables and bytes: lochkit's own, or a Nessie server's (see :mod:`persist_spi.layouts`).
    layout: StorageLayout = LOCHKIT_LAYOUT
    secrets: tuple[str, ...] = field(default=(), repr=False)

    def scrub(self, text: str) -> str:
        """``text`` with every secret (plain and URL-encoded) replaced by ``***``."""
        return scrub(text, self.secrets)


@dataclass(frozen=True)
class OptionValues:
    """A backend's options as given (URL query and mapping), read with clear errors."""

    backend: str
    address: str
    given: Mapping[str, str]
    #: option -> its help text, shown with an invalid value.
    help: Mapping[str, str]

    def bad(self, name: str, why: str) -> BackendConfigError:
        return BackendConfigError(
            self.backend,
            self.address,
            f"option {name}={self.given[name]!r} is invalid: {why}",
            f"{name}: {self.help[name]}",
        )

    def number(self, name: str, default: float, low: float, high: float, kind: type = int) -> Any:
        """The option as a number within [low, high], or ``default`` when not given."""
        if name not in self.given:
            return default
        try:
            value = kind(self.given[name])
        except ValueError:
            raise self.bad(name, f"not a{'n integer' if kind is int else ' number'}") from None
        if not low <= value <= high:
            raise self.bad(name, f"must be between {low:g} and {high:g}")
        return value


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***").replace(quote(secret, safe=""), "***")
    return text


def safe_address(url: str) -> str:
    """``scheme://user@host:port/database`` of a URL: no password, no query. Splits at the last
    ``@`` so that even an unencoded ``/`` or ``@`` in a password does not leak into the address."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "<not a URL>"
    userinfo, at, location = rest.partition("?")[0].rpartition("@")
    user = userinfo.partition(":")[0]
    hostport, _, database = location.partition("/")
    return f"{scheme}://{user}{at}{hostport}/{database}"


def parse_settings(
    backend: str,
    url: str | None,
    options: Mapping[str, Any] | None = None,
    *,
    dialect: str = "auto",
) -> PgSettings:
    """Validate ``url`` and ``options``; raise :class:`BackendConfigError` naming the problem."""
    if not url:
        raise BackendConfigError(
            backend,
            "(no address)",
            "no URL was given",
            hints.pass_url(backend, "postgresql://USER:PASSWORD@HOST:5432/DATABASE"),
        )
    address = safe_address(url)
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in SCHEMES:
        raise BackendConfigError(
            backend,
            address,
            f"unsupported URL scheme '{scheme}'",
            f"use one of {', '.join(s + '://' for s in SCHEMES)}",
        )
    _reject_ambiguous(backend, url)
    base, _, query = rest.partition("?")
    from_url = dict(parse_qsl(query, keep_blank_values=True))
    raw_secrets = _url_password(base)
    merged: dict[str, str] = {**from_url, **{k: str(v) for k, v in (options or {}).items()}}
    ours = {k: merged.pop(k) for k in list(merged) if k in OPTIONS}
    _reject_unknown(backend, address, merged)
    if scheme.lower() == "cockroachdb" and dialect == "auto":
        dialect = "cockroachdb"
    params = _libpq_params(backend, address, base, merged, raw_secrets)
    secrets = tuple(dict.fromkeys([*raw_secrets, *(params[k] for k in _SECRET_PARAMS if params.get(k))]))
    return _with_options(backend, _address_of(scheme, params), _make_conninfo(params), ours, dialect, secrets)


def read_only(settings: PgSettings) -> PgSettings:
    """The same settings with every session read-only (``default_transaction_read_only``), so the
    server itself refuses any write; the URL's own ``options`` parameter is kept."""
    from psycopg.conninfo import conninfo_to_dict

    params = {k: str(v) for k, v in conninfo_to_dict(settings.conninfo).items() if v is not None}
    flag = "-c default_transaction_read_only=on"
    params["options"] = f"{params['options']} {flag}" if params.get("options") else flag
    return replace(settings, conninfo=_make_conninfo(params))


def _reject_ambiguous(backend: str, url: str) -> None:
    """See :mod:`persist_spi.url_safety`: refuse without echoing anything."""
    if ambiguous_credentials(url):
        raise BackendConfigError(backend, unshown(url), AMBIGUOUS_PROBLEM, AMBIGUOUS_FIX)


def _url_password(base: str) -> tuple[str, ...]:
    """The password of ``user:password@host...`` as written and decoded, for scrubbing."""
    userinfo, at, _ = base.rpartition("@")
    written = userinfo.partition(":")[2] if at else ""
    return (written, unquote(written)) if written else ()


def _reject_unknown(backend: str, address: str, params: Mapping[str, str]) -> None:
    from psycopg import pq

    libpq = {d.keyword.decode() for d in pq.Conninfo.get_defaults()}
    unknown = sorted(set(params) - libpq)
    if unknown:
        ours = "; ".join(f"{k}: {v}" for k, v in OPTIONS.items())
        raise BackendConfigError(
            backend,
            address,
            f"unknown option(s) {', '.join(unknown)}",
            f"lochkit's options are {ours}. Any other option must be a libpq connection parameter "
            "(sslmode, application_name, connect_timeout, options...)",
        )


def _libpq_params(
    backend: str, address: str, base: str, extra: Mapping[str, str], secrets: tuple[str, ...]
) -> dict[str, str]:
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        parsed = conninfo_to_dict(f"postgresql://{base}")
    except (ProgrammingError, ValueError) as e:  # libpq's parser; undecodable bytes are a ValueError
        raise BackendConfigError(
            backend, address, f"the URL cannot be parsed ({scrub(str(e), secrets)})", "check its syntax"
        ) from None
    params = {k: str(v) for k, v in parsed.items() if v is not None}
    params.update(extra)
    params.setdefault("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
    params.setdefault("application_name", DEFAULT_APPLICATION_NAME)
    return params


def _make_conninfo(params: Mapping[str, str]) -> str:
    from psycopg.conninfo import make_conninfo

    return make_conninfo("", **params)


def _address_of(scheme: str, params: Mapping[str, str]) -> str:
    user = params.get("user")
    host = params.get("host") or params.get("hostaddr") or "(default host)"
    port = params.get("port")
    hostport = f"{host}:{port}" if port else host
    database = params.get("dbname", "")
    return f"{scheme.lower()}://{user + '@' if user else ''}{hostport}/{database}"


def _with_options(
    backend: str,
    address: str,
    conninfo: str,
    ours: Mapping[str, str],
    dialect: str,
    secrets: tuple[str, ...],
) -> PgSettings:
    reader = OptionValues(backend, address, ours, OPTIONS)
    bad, number = reader.bad, reader.number

    prefix = ours.get("table_prefix", DEFAULT_TABLE_PREFIX)
    if not _PREFIX_PATTERN.fullmatch(prefix):
        raise bad("table_prefix", "use 1-40 lowercase letters, digits or _, not starting with a digit")
    chosen = ours.get("dialect", dialect).lower()
    if chosen not in DIALECTS:
        raise bad("dialect", f"use one of {', '.join(DIALECTS)}")
    layout = parse_layout(backend, address, ours.get("layout"))
    if layout is NESSIE_LAYOUT and "table_prefix" in ours:
        raise BackendConfigError(
            backend,
            address,
            "option table_prefix cannot be combined with layout=nessie: Nessie's tables are always "
            "named refs2 and objs2",
            "Drop table_prefix; to keep several Nessie repositories' tables apart use another database, or "
            "another schema through libpq's options parameter (options=-csearch_path%3DSCHEMA)",
        )
    pool_max = number("pool_max", 10, 1, 1000)
    return PgSettings(
        backend=backend,
        address=address,
        conninfo=conninfo,
        table_prefix=prefix,
        pool_min=number("pool_min", min(1, pool_max), 0, pool_max),
        pool_max=pool_max,
        pool_timeout=number("pool_timeout", 30.0, 0.1, 3600, float),
        request_timeout=number("request_timeout", 30.0, 0.1, 86400, float),
        dialect=chosen,
        max_retries=number("max_retries", 8, 0, 100),
        layout=layout,
        secrets=secrets,
    )
