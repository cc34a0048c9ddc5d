"""Connection settings of the DynamoDB backend: URL parsing and boto3 client construction.

Two URL forms:

* ``dynamodb://HOST:PORT?region=us-west-2&table_prefix=lochkit_`` talks to an endpoint override
  (DynamoDB Local or another emulator) over http (``tls=true`` for https). Without credentials in
  the URL it signs with static dummy credentials, which emulators accept; ``KEY:SECRET@HOST:PORT``
  gives explicit ones and ``credentials=default`` uses boto3's default chain.
* ``dynamodb://aws?region=eu-west-1`` talks to real AWS with boto3's default credential chain
  (environment, ``~/.aws``, instance or task role); ``profile=NAME`` picks a named profile.

``layout=nessie`` opens the tables of a Nessie server's DynamoDB2 store instead of lochkit's own
(:mod:`backends.dynamodb.statements`). ``table_prefix`` then means what Nessie's
``nessie.version.store.persist.dynamodb.table-prefix`` means: tables ``<prefix>_refs`` and
``<prefix>_objs``, or ``refs`` and ``objs`` without a prefix (Nessie's default). In lochkit's own
layout the prefix is prepended as it is (default ``lochkit_``: ``lochkit_refs``).

Secrets never leave this module: :attr:`DynamoSettings.address` has no credentials, and error
messages use it or :func:`~provisioning.base.redact`-style text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from persist_spi import hints
from persist_spi.errors import BackendConfigError
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout, parse_layout, prefixed_table

BACKEND = "dynamodb"
DEFAULT_REGION = "us-west-2"
DEFAULT_TABLE_PREFIX = "lochkit_"
#: Emulators accept any credentials; DynamoDB Local 2.x wants an access key of letters and digits.
STATIC_KEY = "lochkit"
STATIC_SECRET = "lochkit"  # a dummy value for emulators, not a secret

_OPTIONS = frozenset(
    {
        "region",
        "layout",
        "table_prefix",
        "tls",
        "credentials",
        "profile",
        "connect_timeout",
        "read_timeout",
        "max_attempts",
        "transactions",
    }
)
# Table names allow [a-zA-Z0-9_.-]; the prefix must leave room for "_objs"/"_refs" within 255.
_PREFIX_RE = re.compile(r"^[A-Za-z0-9_.-]{0,240}$")
_URL_HELP = (
    "use dynamodb://HOST:PORT?region=REGION&table_prefix=PREFIX for an endpoint such as DynamoDB "
    "Local, or dynamodb://aws?region=REGION for AWS"
)


@dataclass(frozen=True)
class DynamoSettings:
    #: None for AWS's own endpoints.
    endpoint: str | None
    region: str | None
    table_prefix: str
    #: (access key, secret) or None for boto3's default chain.
    static_credentials: tuple[str, str] | None = field(repr=False)  # never in logs or tracebacks
    profile: str | None
    connect_timeout: float
    read_timeout: float
    max_attempts: int
    layout: StorageLayout = LOCHKIT_LAYOUT
    #: A commit's objects and reference move in one TransactWriteItems; False: two steps (see
    #: DynamoDBAdapter.insert_objs_and_update_ref for why an emulator may need that).
    transactions: bool = True

    @property
    def refs_table(self) -> str:
        return self._table("refs")

    @property
    def objs_table(self) -> str:
        return self._table("objs")

    def _table(self, name: str) -> str:
        return prefixed_table(self.layout, self.table_prefix, name)

    @property
    def address(self) -> str:
        """Where the tables live, without credentials: safe for logs, errors and reports."""
        where = self.endpoint.split("://", 1)[1] if self.endpoint else "aws"
        layout = "" if self.layout is LOCHKIT_LAYOUT else f"&layout={self.layout.name}"
        region = self.region or "default"
        return f"dynamodb://{where}?region={region}{layout}&table_prefix={self.table_prefix}"

    def client(self, *, sdk_retries: bool) -> Any:
        """A boto3 DynamoDB client. ``sdk_retries=False`` is for conditional writes: botocore
        would also retry after a read timeout, and a repeated conditional write whose first attempt
        did apply reports "condition failed" for a write that happened."""
        import boto3
        from botocore.config import Config
        from botocore.exceptions import NoRegionError, ProfileNotFound

        attempts = self.max_attempts if sdk_retries else 1
        config = Config(
            connect_timeout=self.connect_timeout,
            read_timeout=self.read_timeout,
            retries={"mode": "standard", "total_max_attempts": attempts},
            # Threads of one process share a client; the adapter's own pool adds a few more.
            max_pool_connections=32,
        )
        kwargs: dict[str, Any] = {"config": config, "region_name": self.region}
        if self.endpoint:
            kwargs["endpoint_url"] = self.endpoint
        if self.static_credentials:
            kwargs["aws_access_key_id"], kwargs["aws_secret_access_key"] = self.static_credentials
        try:
            session = boto3.session.Session(profile_name=self.profile)
            return session.client("dynamodb", **kwargs)
        except NoRegionError:
            problem, fix = "no AWS region is configured", "add region=... to the URL or set AWS_REGION"
        except ProfileNotFound:
            problem, fix = f"the AWS profile '{self.profile}' does not exist", "check ~/.aws/config"
        raise BackendConfigError(BACKEND, self.address, problem, fix)


def parse_url(url: str | None, options: Mapping[str, Any] | None = None) -> DynamoSettings:
    """Settings from a URL plus options (options win); raises BackendConfigError naming the fix."""
    shown = _shown(url)
    if not url:
        raise BackendConfigError(
            BACKEND,
            "(no URL)",
            "no address was given",
            f"{hints.pass_url(BACKEND, 'dynamodb://HOST:PORT?region=REGION')}; {_URL_HELP}",
        )
    try:
        parts = urlsplit(url)
        if "@" in url and "@" not in parts.netloc:
            raise BackendConfigError(
                BACKEND,
                shown,
                "the credentials contain a character that ends the address ('/', '?' or '#')",
                "percent-encode the access and secret key: urllib.parse.quote(value, safe='')",
            )
        host, port = parts.hostname, parts.port
    except ValueError:
        # Not chained and not quoted: the parser's message may contain part of the secret.
        raise BackendConfigError(
            BACKEND, shown, "the URL cannot be parsed (host or port)", _URL_HELP
        ) from None
    if parts.scheme != "dynamodb" or not host:
        raise BackendConfigError(BACKEND, shown, "the URL is not of the form dynamodb://...", _URL_HELP)
    opts = _merged_options(parts.query, options, shown)
    aws = host == "aws" and port is None
    region = opts.get("region") or (None if aws else DEFAULT_REGION)
    layout = parse_layout(BACKEND, shown, opts.get("layout"))
    # Nessie's default is no prefix (tables refs/objs); lochkit's own keeps its tables apart.
    prefix = opts.get("table_prefix", "" if layout is NESSIE_LAYOUT else DEFAULT_TABLE_PREFIX)
    if not _PREFIX_RE.match(prefix):
        raise BackendConfigError(
            BACKEND,
            shown,
            f"invalid table_prefix '{prefix}'",
            "use up to 240 of the characters a-z A-Z 0-9 _ . -",
        )
    return DynamoSettings(
        endpoint=None if aws else _endpoint(host, port, _flag(opts.get("tls"), shown, "tls")),
        region=region,
        table_prefix=prefix,
        static_credentials=None if aws else _credentials(parts.username, parts.password, opts, shown),
        profile=opts.get("profile"),
        connect_timeout=_number(opts.get("connect_timeout", "3"), shown, "connect_timeout"),
        read_timeout=_number(opts.get("read_timeout", "20"), shown, "read_timeout"),
        max_attempts=int(_number(opts.get("max_attempts", "3"), shown, "max_attempts")),
        layout=layout,
        transactions=opts.get("transactions") is None or _flag(opts["transactions"], shown, "transactions"),
    )


def _merged_options(query: str, options: Mapping[str, Any] | None, shown: str) -> dict[str, str]:
    opts = {key: values[-1] for key, values in parse_qs(query).items()}
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


def _endpoint(host: str, port: int | None, tls: bool) -> str:
    scheme = "https" if tls else "http"
    bracketed = f"[{host}]" if ":" in host else host
    return f"{scheme}://{bracketed}" + (f":{port}" if port is not None else "")


def _credentials(
    user: str | None, password: str | None, opts: Mapping[str, str], shown: str
) -> tuple[str, str] | None:
    mode = opts.get("credentials", "static")
    if mode not in ("static", "default"):
        raise BackendConfigError(BACKEND, shown, f"credentials={mode} is not known", "use static or default")
    if mode == "default" or opts.get("profile"):
        return None
    if user:
        if not password:
            raise BackendConfigError(
                BACKEND,
                shown,
                "an access key without a secret key",
                "give both: dynamodb://KEY:SECRET@HOST:PORT",
            )
        return unquote(user), unquote(password)
    return STATIC_KEY, STATIC_SECRET


def _flag(value: str | None, shown: str, name: str) -> bool:
    if value is None or value.lower() in ("0", "false", "no"):
        return False
    if value.lower() in ("1", "true", "yes"):
        return True
    raise BackendConfigError(
        BACKEND, shown, f"{name}={value} is not a boolean", f"use {name}=true or {name}=false"
    )


def _number(value: str, shown: str, name: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if number <= 0:
        raise BackendConfigError(BACKEND, shown, f"{name}={value} is not a positive number", f"e.g. {name}=5")
    return number


def _shown(url: str | None) -> str:
    """The URL for messages with the secret key masked. Everything up to the last ``@`` counts as
    credentials, so an unencoded ``/``, ``?`` or ``#`` in the secret cannot leak part of it."""
    if not url:
        return "(no URL)"
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    userinfo, _, host = rest.rpartition("@")
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}"
