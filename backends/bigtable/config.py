"""Connection settings of the Bigtable backend: URL parsing and the gRPC clients.

Two URL forms:

* ``bigtable://HOST:PORT?project=P&instance=I&table_prefix=lochkit_`` talks to an emulator
  (Google's ``cbtemulator``) over plain-text gRPC without credentials. The emulator accepts any
  project and instance (defaults: ``lochkit``).
* ``bigtable://google?project=P&instance=I`` talks to Cloud Bigtable over TLS with Google's
  Application Default Credentials (``GOOGLE_APPLICATION_CREDENTIALS``, ``gcloud auth
  application-default login``, or the machine's service account).

The URL never carries a secret: credentials in it are refused (the message masks them), so no
address lochkit prints or writes can leak one. Tables are ``<table_prefix>refs`` and
``<table_prefix>objs``.

``layout=nessie`` opens the tables of a Nessie server's Bigtable store instead
(:mod:`backends.bigtable.statements`). ``table_prefix`` then means what Nessie's
``nessie.version.store.persist.bigtable.table-prefix`` means: tables ``<prefix>_refs`` and
``<prefix>_objs``, or ``refs`` and ``objs`` without a prefix (Nessie's default).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from persist_spi import hints
from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout, parse_layout, prefixed_table

BACKEND: Final = "bigtable"
DEFAULT_PROJECT: Final = "lochkit"
DEFAULT_INSTANCE: Final = "lochkit"
DEFAULT_TABLE_PREFIX: Final = "lochkit_"
#: The host name that selects Cloud Bigtable itself instead of an emulator.
GOOGLE_HOST: Final = "google"
#: gRPC's own limits are lifted (as Google's clients do); Bigtable's limits are declared instead.
GRPC_OPTIONS: Final = (("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1))

_OPTIONS: Final = frozenset({"project", "instance", "table_prefix", "app_profile", "layout", "timeout"})
# Table ids are [_a-zA-Z0-9][-_.a-zA-Z0-9]* of at most 50 characters; "objs" takes 4 of them.
_PREFIX_RE: Final = re.compile(r"^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,45}$")
# Project ids are 6-30 characters; the emulator accepts any name, so only the characters are checked.
_NAME_RE: Final = re.compile(r"^[a-z][-a-z0-9:.]{0,62}$")
_URL_HELP: Final = (
    "use bigtable://HOST:PORT?project=P&instance=I for an emulator, or "
    "bigtable://google?project=P&instance=I for Cloud Bigtable"
)


@dataclass(frozen=True)
class BigtableSettings:
    #: ``host:port`` of an emulator, or None for Cloud Bigtable.
    emulator: str | None
    project: str
    instance: str
    table_prefix: str
    app_profile: str | None
    #: Seconds a single request may take.
    timeout: float
    layout: StorageLayout = LOCHKIT_LAYOUT

    @property
    def refs_table(self) -> str:
        return self._table("refs")

    @property
    def objs_table(self) -> str:
        return self._table("objs")

    def _table(self, name: str) -> str:
        return prefixed_table(self.layout, self.table_prefix, name)

    @property
    def instance_path(self) -> str:
        return f"projects/{self.project}/instances/{self.instance}"

    def table_path(self, table: str) -> str:
        return f"{self.instance_path}/tables/{table}"

    @property
    def address(self) -> str:
        """Where the tables live (the URL holds no secret): safe for logs, errors and reports."""
        where = self.emulator or GOOGLE_HOST
        layout = "" if self.layout is LOCHKIT_LAYOUT else f"&layout={self.layout.name}"
        return (
            f"bigtable://{where}?project={self.project}&instance={self.instance}{layout}"
            f"&table_prefix={self.table_prefix}"
        )

    def clients(self) -> tuple[Any, Any]:
        """The data client and the table admin client (Google's generated gRPC clients). Built
        on an explicit channel rather than through ``BIGTABLE_EMULATOR_HOST``: an environment
        variable is one per process, while adapters for several servers may live in one."""
        from google.cloud.bigtable_admin_v2.services.bigtable_table_admin import (
            BaseBigtableTableAdminClient as BigtableTableAdminClient,
        )
        from google.cloud.bigtable_admin_v2.services.bigtable_table_admin.transports import (
            BigtableTableAdminGrpcTransport,
        )
        from google.cloud.bigtable_v2.services.bigtable import BigtableClient
        from google.cloud.bigtable_v2.services.bigtable.transports import BigtableGrpcTransport

        if self.emulator is None:
            import google.auth
            from google.auth.exceptions import DefaultCredentialsError

            try:
                credentials, _ = google.auth.default()
            except DefaultCredentialsError:
                raise BackendConfigError(
                    BACKEND,
                    self.address,
                    "no Google credentials were found",
                    "set GOOGLE_APPLICATION_CREDENTIALS or run gcloud auth application-default login",
                ) from None
            data_transport = BigtableGrpcTransport(
                credentials=credentials,
                channel=BigtableGrpcTransport.create_channel(
                    credentials=credentials, options=list(GRPC_OPTIONS)
                ),
            )
            admin = BigtableTableAdminClient(credentials=credentials)
            return BigtableClient(transport=data_transport), admin
        import grpc

        data_channel = grpc.insecure_channel(self.emulator, options=list(GRPC_OPTIONS))
        admin_channel = grpc.insecure_channel(self.emulator, options=list(GRPC_OPTIONS))
        return (
            BigtableClient(transport=BigtableGrpcTransport(channel=data_channel)),
            BigtableTableAdminClient(transport=BigtableTableAdminGrpcTransport(channel=admin_channel)),
        )


def parse_url(url: str | None, options: Mapping[str, Any] | None = None) -> BigtableSettings:
    """Settings from a URL plus options (options win); raises BackendConfigError naming the fix."""
    if not url:
        raise BackendConfigError(
            BACKEND,
            "(no URL)",
            "no address was given",
            f"{hints.pass_url(BACKEND, 'bigtable://HOST:PORT?project=P&instance=I')}; {_URL_HELP}",
        )
    shown = _shown(url)
    scheme, _, rest = url.partition("://")
    if "@" in rest:  # no option value needs an "@": anything before one is taken for credentials
        raise BackendConfigError(
            BACKEND,
            shown,
            "the URL carries credentials, which Bigtable does not take from an address",
            "remove them; an emulator needs none, Cloud Bigtable uses Application Default Credentials "
            "(GOOGLE_APPLICATION_CREDENTIALS)",
        )
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        raise BackendConfigError(
            BACKEND, shown, "the URL cannot be parsed (host or port)", _URL_HELP
        ) from None
    if scheme != BACKEND or not host or parts.path not in ("", "/"):
        raise BackendConfigError(
            BACKEND, shown, "the URL is not of the form bigtable://HOST:PORT?...", _URL_HELP
        )
    opts = _merged_options(parts.query, options, shown)
    cloud = host == GOOGLE_HOST and port is None
    if not cloud and port is None:
        raise BackendConfigError(BACKEND, shown, "an emulator address needs a port", _URL_HELP)
    if cloud and not ("project" in opts and "instance" in opts):
        raise BackendConfigError(
            BACKEND, shown, "Cloud Bigtable needs a project and an instance", "add ?project=P&instance=I"
        )
    layout = parse_layout(BACKEND, shown, opts.get("layout"))
    nessie = layout is NESSIE_LAYOUT
    # Nessie's default is no prefix (tables refs/objs); lochkit's own keeps its tables apart.
    prefix = opts.get("table_prefix", "" if nessie else DEFAULT_TABLE_PREFIX)
    longest = 45 if nessie else 46  # Nessie's "_" separator takes one of the table id's 50 characters
    if not ((_PREFIX_RE.match(prefix) and len(prefix) <= longest) or (prefix == "" and nessie)):
        raise BackendConfigError(
            BACKEND,
            shown,
            f"invalid table_prefix '{prefix}'",
            f"use {'0' if nessie else '1'} to {longest} of the characters a-z A-Z 0-9 _ . - "
            "(not starting with - or .)",
        )
    project, instance = opts.get("project", DEFAULT_PROJECT), opts.get("instance", DEFAULT_INSTANCE)
    for name, value in (("project", project), ("instance", instance)):
        if not _NAME_RE.match(value):
            raise BackendConfigError(
                BACKEND, shown, f"invalid {name} '{value}'", "use lower-case letters, digits and -"
            )
    bracketed = f"[{host}]" if ":" in host else host
    return BigtableSettings(
        emulator=None if cloud else f"{bracketed}:{port}",
        project=project,
        instance=instance,
        table_prefix=prefix,
        app_profile=opts.get("app_profile") or None,
        timeout=_positive(opts.get("timeout", "30"), shown, "timeout"),
        layout=layout,
    )


def _merged_options(query: str, options: Mapping[str, Any] | None, shown: str) -> dict[str, str]:
    opts = {key: values[-1] for key, values in parse_qs(query, keep_blank_values=True).items()}
    opts.update({k: str(v) for k, v in (options or {}).items()})
    unknown = set(opts) - _OPTIONS
    if unknown:
        raise BackendConfigError(
            BACKEND,
            shown,
            f"unknown option(s) {', '.join(sorted(unknown))}",
            f"known: {', '.join(sorted(_OPTIONS))}",
        )
    return opts


def _positive(value: str, shown: str, name: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if number <= 0:
        raise BackendConfigError(
            BACKEND, shown, f"{name}={value} is not a positive number", f"e.g. {name}=10"
        )
    return number


def _shown(url: str) -> str:
    """The URL for messages, with anything before the last ``@`` of the address masked."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    host = rest.rpartition("@")[2]
    return f"{scheme}://***@{host}"
