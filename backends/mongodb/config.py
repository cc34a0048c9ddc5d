"""Connection settings of the MongoDB backend: URL and options in, validated settings out.

Kept apart from the adapter so the rules (defaults, lochkit's own options, redaction) can be tested
without a server. Only the standard library and pymongo's URI parser are used.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout, parse_layout
from persist_spi.url_safety import AMBIGUOUS_PROBLEM, ambiguous_credentials, unshown

BACKEND: Final = "mongodb"
DEFAULT_URL: Final = "mongodb://localhost:27017/"
DEFAULT_DATABASE: Final = "lochkit"
DEFAULT_PREFIX: Final = "lochkit_"
#: Nessie's default database (``quarkus.mongodb.database``), used in the nessie layout unless the
#: URL or the options name one, so that lochkit finds a default Nessie server's data.
NESSIE_DEFAULT_DATABASE: Final = "nessie"
#: lochkit's own options; accepted in the options mapping or in the URL query (removed from the URL
#: before pymongo sees it, since pymongo rejects options it does not know).
LOCHKIT_OPTIONS: Final = ("database", "collection_prefix", "layout")
#: Client settings lochkit chooses unless the URL sets them. A short server selection timeout makes
#: a down server an error within seconds instead of pymongo's 30 s. Majority write concern means an
#: acknowledged reference change survives a failover; majority read concern means a reader never
#: builds on a write that a failover could still roll back. Socket timeout bounds a hung call; it
#: surfaces as UnknownOperationResult for writes.
CLIENT_DEFAULTS: Final[Mapping[str, Any]] = {
    "serverSelectionTimeoutMS": 3000,
    "connectTimeoutMS": 3000,
    "socketTimeoutMS": 30000,
    "w": "majority",
    "readConcernLevel": "majority",
    "appname": "lochkit",
}
_URL_HELP: Final = (
    "use mongodb://[user:password@]host:port/[database]?driver-options "
    "(escape user and password with urllib.parse.quote_plus)"
)
_PREFIX_RE: Final = re.compile(r"[A-Za-z0-9_.-]*")
_USERINFO_RE: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)(.*)@", re.DOTALL)  # a newline too


@dataclass(frozen=True)
class MongoSettings:
    #: What pymongo gets; may contain credentials, never shown.
    uri: str = field(repr=False)
    #: Hosts and database only, for messages and reports.
    address: str
    database: str
    collection_prefix: str
    #: Whether the URL carries a user name (changes what an "unauthorized" answer means).
    has_credentials: bool
    #: Keyword arguments for MongoClient: lochkit's defaults the URL did not override.
    client_options: dict[str, Any] = field(default_factory=dict)
    #: Which documents and collections: lochkit's own, or Nessie's ``refs2``/``objs2``.
    layout: StorageLayout = LOCHKIT_LAYOUT


def redact_url(url: str) -> str:
    """Hide everything between ``scheme://`` and the last ``@``: also safe for unparseable URLs,
    where an unescaped ``@`` in a password would fool a URL parser."""
    return _USERINFO_RE.sub(r"\1***@", url, count=1)


def parse_settings(url: str | None, options: Mapping[str, Any] | None = None) -> MongoSettings:
    raw = url or DEFAULT_URL
    if ambiguous_credentials(raw):
        fix = (
            "Percent-encode the user name and password as pymongo expects: urllib.parse.quote_plus(password)"
        )
        raise BackendConfigError(BACKEND, unshown(raw), AMBIGUOUS_PROBLEM, fix)
    if not raw.startswith(("mongodb://", "mongodb+srv://")):
        raise _config_error(raw, "the URL must start with mongodb:// or mongodb+srv://")
    pymongo_uri, from_query = _split_lochkit_options(raw)
    given = dict(options or {})
    unknown = sorted(set(given) - set(LOCHKIT_OPTIONS))
    if unknown:
        raise _config_error(
            raw,
            f"unknown option(s) {', '.join(unknown)}",
            f"lochkit's options are {', '.join(LOCHKIT_OPTIONS)}; driver options go in the URL query",
        )
    merged = {**from_query, **{k: str(v) for k, v in given.items()}}
    parsed = _parse_uri(pymongo_uri, raw)
    layout = parse_layout(BACKEND, redact_url(raw), merged.get("layout"))
    nessie = layout is NESSIE_LAYOUT
    if nessie and "collection_prefix" in merged:
        raise _config_error(
            raw,
            "collection_prefix cannot be combined with layout=nessie: Nessie's collections are "
            "always named refs2 and objs2",
            "remove collection_prefix; keep Nessie repositories apart with another database",
        )
    default_database = NESSIE_DEFAULT_DATABASE if nessie else DEFAULT_DATABASE
    database = merged.get("database") or parsed.get("database") or default_database
    prefix = "" if nessie else merged.get("collection_prefix", DEFAULT_PREFIX)
    _check_names(raw, database, prefix)
    hosts = ",".join(f"{h}:{p}" for h, p in parsed["nodelist"]) or str(parsed.get("fqdn"))
    scheme = raw.split("://", 1)[0]
    present = {k.lower() for k in parsed["options"]}
    return MongoSettings(
        uri=pymongo_uri,
        address=f"{scheme}://{hosts}/{database}",
        database=database,
        collection_prefix=prefix,
        has_credentials=parsed.get("username") is not None,
        client_options={k: v for k, v in CLIENT_DEFAULTS.items() if k.lower() not in present},
        layout=layout,
    )


def _split_lochkit_options(url: str) -> tuple[str, dict[str, str]]:
    """Remove lochkit's options from the query without re-encoding the driver's ones (their values,
    such as ``authMechanismProperties``, have their own escaping rules)."""
    from urllib.parse import unquote_plus

    base, sep, query = url.partition("?")
    if not sep:
        return url, {}
    kept: list[str] = []
    mine: dict[str, str] = {}
    for item in query.split("&"):
        key, _, value = item.partition("=")
        if key in LOCHKIT_OPTIONS:
            mine[key] = unquote_plus(value)
        elif item:
            kept.append(item)
    return (f"{base}?{'&'.join(kept)}" if kept else base), mine


def _parse_uri(uri: str, shown: str) -> dict[str, Any]:
    from pymongo.errors import ConfigurationError, InvalidURI
    from pymongo.uri_parser import parse_uri

    try:
        parsed: dict[str, Any] = parse_uri(uri, warn=False)
    except (InvalidURI, ConfigurationError, ValueError) as e:
        raise _config_error(shown, f"invalid URL ({_scrub(str(e), uri)})") from None
    return parsed


def _check_names(url: str, database: str, prefix: str) -> None:
    if any(c in database for c in '/\\. "$\0') or len(database) > 63:
        raise _config_error(url, f"invalid database name '{database}'", "use letters, digits, _ and -")
    if not _PREFIX_RE.fullmatch(prefix) or prefix.startswith("system."):
        raise _config_error(
            url, f"invalid collection_prefix '{prefix}'", "use letters, digits, _, - and . (not 'system.')"
        )


def _scrub(message: str, uri: str) -> str:
    """Driver messages may quote parts of the URL: never let a password through."""
    from urllib.parse import unquote

    userinfo = uri.split("://", 1)[-1].rsplit("@", 1)
    if len(userinfo) == 2:
        _, _, password = userinfo[0].partition(":")
        for secret in {password, unquote(password)} - {""}:
            message = message.replace(secret, "***")
    return message


def _config_error(url: str, problem: str, fix: str = _URL_HELP) -> BackendConfigError:
    return BackendConfigError(BACKEND, redact_url(url), problem, fix)
