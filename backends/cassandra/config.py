"""Connection settings of the Cassandra/ScyllaDB backend, parsed from a URL.

``cassandra://[user:password@]host[:port][,host2[:port]...]/keyspace?option=value&...``
(``scylladb://`` is the same). Options (also accepted as the factory's ``options`` mapping, which
wins over the URL):

* ``local_dc`` - the data center whose nodes coordinate requests (LOCAL_QUORUM / LOCAL_SERIAL are
  counted there); default: the data center of the first node the driver reaches.
* ``replication`` - used only when lochkit creates the keyspace: ``N`` (SimpleStrategy, N
  replicas; default 1) or ``dc1:3,dc2:3`` (NetworkTopologyStrategy).
* ``timeout`` - seconds the driver waits for one request (default 12, above the server's own
  write/CAS timeouts so that the server's precise error arrives first).
* ``connect_timeout`` - seconds to wait for a connection (default 10).
* ``layout`` - ``lochkit`` (the default: lochkit's tables ``refs``/``objs`` with a per-repository
  directory, keyspace ``lochkit``) or ``nessie`` (a Nessie server's CASSANDRA2 tables
  ``refs2``/``objs2``, keyspace ``nessie`` unless the URL names one), see :mod:`persist_spi.layouts`.
* ``create_keyspace`` - whether a missing keyspace is created. Default: yes in lochkit's layout; no
  in Nessie's, because Nessie requires its keyspace to exist and an administrator chooses its
  replication. lochkit's own server provisioning sets it, since that server holds nobody's data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout, parse_layout
from persist_spi.url_safety import AMBIGUOUS_FIX, AMBIGUOUS_PROBLEM, ambiguous_credentials, unshown

DEFAULT_PORT: Final = 9042
DEFAULT_KEYSPACE: Final = "lochkit"
#: Nessie's default keyspace (``quarkus.cassandra.keyspace``), used in the nessie layout.
NESSIE_KEYSPACE: Final = "nessie"
SCHEMES: Final = ("cassandra", "scylladb")
OPTIONS: Final = ("local_dc", "replication", "timeout", "connect_timeout", "layout", "create_keyspace")
_KEYSPACE_RE: Final = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
_DC_RE: Final = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True)
class CassandraSettings:
    flavour: str  # "cassandra" or "scylladb": decides the keyspace DDL and version query
    hosts: tuple[str, ...]
    port: int
    keyspace: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    local_dc: str | None = None
    replication: tuple[tuple[str, str], ...] = (("class", "SimpleStrategy"), ("replication_factor", "1"))
    request_timeout: float = 12.0
    connect_timeout: float = 10.0
    layout: StorageLayout = LOCHKIT_LAYOUT
    #: Create the keyspace when it is missing (otherwise setup refuses to go on).
    create_keyspace: bool = True

    @property
    def address(self) -> str:
        """The URL without the password: safe for messages, logs and reports."""
        user = f"{self.username}@" if self.username else ""
        hosts = ",".join(f"[{h}]" if ":" in h else h for h in self.hosts)
        return f"{self.flavour}://{user}{hosts}:{self.port}/{self.keyspace}"

    def replication_cql(self) -> str:
        return "{" + ", ".join(f"'{k}': '{v}'" for k, v in self.replication) + "}"


def parse_url(flavour: str, url: str, options: Mapping[str, Any] | None = None) -> CassandraSettings:
    """Settings from ``url``; every problem is a :class:`BackendConfigError` naming the fix."""
    if ambiguous_credentials(url):
        raise BackendConfigError(flavour, unshown(url), AMBIGUOUS_PROBLEM, AMBIGUOUS_FIX)
    shown = _redacted(url)
    try:
        parts = urlsplit(url)
    except ValueError:
        # Not quoted: urllib's message repeats the address part, credentials included.
        raise _config_error(flavour, shown, "unparseable URL (host or port)") from None
    if parts.scheme not in SCHEMES:
        raise _config_error(flavour, shown, f"unsupported URL scheme '{parts.scheme}'")
    userinfo, _, hostlist = parts.netloc.rpartition("@")
    username, password = _credentials(userinfo)
    hosts, port = _hosts(flavour, shown, hostlist)
    merged: dict[str, str] = dict(parse_qsl(parts.query, keep_blank_values=True))
    merged.update({k: str(v) for k, v in (options or {}).items()})
    unknown = sorted(set(merged) - set(OPTIONS))
    if unknown:
        raise _config_error(flavour, shown, f"unknown option(s) {', '.join(unknown)}")
    layout = parse_layout(flavour, shown, merged.get("layout"))
    nessie = layout is NESSIE_LAYOUT
    keyspace = unquote(parts.path.strip("/")) or (NESSIE_KEYSPACE if nessie else DEFAULT_KEYSPACE)
    if not _KEYSPACE_RE.match(keyspace):
        raise _config_error(
            flavour, shown, f"invalid keyspace '{keyspace}' (lowercase letters, digits, '_', max 48)"
        )
    local_dc = merged.get("local_dc") or None
    if local_dc is not None and not _DC_RE.match(local_dc):
        raise _config_error(flavour, shown, f"invalid local_dc '{local_dc}'")
    return CassandraSettings(
        flavour=flavour,
        hosts=hosts,
        port=port,
        keyspace=keyspace,
        username=username,
        password=password,
        local_dc=local_dc,
        replication=_replication(flavour, shown, merged.get("replication")),
        request_timeout=_seconds(flavour, shown, "timeout", merged.get("timeout"), 12.0),
        connect_timeout=_seconds(flavour, shown, "connect_timeout", merged.get("connect_timeout"), 10.0),
        layout=layout,
        create_keyspace=_flag(flavour, shown, "create_keyspace", merged.get("create_keyspace"), not nessie),
    )


def _credentials(userinfo: str) -> tuple[str | None, str | None]:
    if not userinfo:
        return None, None
    user, sep, password = userinfo.partition(":")
    return unquote(user) or None, unquote(password) if sep else None


def _hosts(flavour: str, shown: str, hostlist: str) -> tuple[tuple[str, ...], int]:
    hosts: list[str] = []
    ports: set[int] = set()
    for item in (h.strip() for h in hostlist.split(",")):
        if not item:
            continue
        if item.startswith("["):  # IPv6 literal: [::1]:9042
            host, _, rest = item[1:].partition("]")
            port_text = rest.removeprefix(":")
        else:
            host, _, port_text = item.partition(":")
        if port_text:
            if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                raise _config_error(flavour, shown, f"invalid port '{port_text}'")
            ports.add(int(port_text))
        hosts.append(host)
    if not hosts:
        raise _config_error(flavour, shown, "no host given")
    if len(ports) > 1:
        # The driver connects to every contact point on one port.
        raise _config_error(flavour, shown, "all hosts must use the same port")
    return tuple(hosts), ports.pop() if ports else DEFAULT_PORT


def _replication(flavour: str, shown: str, value: str | None) -> tuple[tuple[str, str], ...]:
    if not value:
        return (("class", "SimpleStrategy"), ("replication_factor", "1"))
    if value.isdigit() and int(value) > 0:
        return (("class", "SimpleStrategy"), ("replication_factor", value))
    pairs: list[tuple[str, str]] = [("class", "NetworkTopologyStrategy")]
    for item in value.split(","):
        dc, _, factor = item.partition(":")
        if not _DC_RE.match(dc) or not factor.isdigit() or int(factor) < 1:
            raise _config_error(
                flavour, shown, f"invalid replication '{value}' (use N, or dc1:N,dc2:M for each data center)"
            )
        pairs.append((dc, factor))
    return tuple(pairs)


def _seconds(flavour: str, shown: str, name: str, value: str | None, default: float) -> float:
    if value is None or value == "":
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if seconds <= 0:
        raise _config_error(flavour, shown, f"option {name} must be a positive number of seconds")
    return seconds


def _flag(flavour: str, shown: str, name: str, value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    if value.lower() in ("1", "true", "yes"):
        return True
    if value.lower() in ("0", "false", "no"):
        return False
    raise _config_error(flavour, shown, f"option {name} must be true or false, not '{value}'")


def _redacted(url: str) -> str:
    """The URL with any password replaced, before anything is parsed (messages may quote it)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url.split("@", 1)[-1] if "@" in url else url
    netloc, slash, tail = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    return f"{scheme}{sep}{userinfo}{at}{hosts}{slash}{tail}"


def _config_error(flavour: str, shown: str, problem: str) -> BackendConfigError:
    return BackendConfigError(
        flavour,
        shown,
        problem,
        f"Use {flavour}://[user:password@]host[:port][,host2...]/keyspace"
        "?local_dc=DC&replication=N|dc1:N,...&timeout=S&connect_timeout=S&layout=lochkit|nessie"
        "&create_keyspace=true|false",
    )
