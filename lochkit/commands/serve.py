"""``lochkit serve``: Nessie's REST API v2 over lochkit's version store on any backend, so Nessie
clients, Iceberg's Nessie catalog and Spark can use it (see ``docs/rest.md``)."""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from rest_server.authentication import Authentication
    from rest_server.tls import Tls

NAME = "serve"
HELP = "serve Nessie's REST API v2 over a lochkit backend (default 127.0.0.1:19120, like Nessie)"
DESCRIPTION = (
    "Serve Nessie's REST API v2 at http://HOST:PORT/api/v2 over lochkit's version store on a "
    "backend, opened as the load commands open it (--backend, --url, --provision). Nessie clients, "
    "Iceberg's Nessie catalog (uri=http://HOST:PORT/api/v2) and Spark can then use it. On an "
    "address other than loopback it needs authentication (bearer tokens or JWTs, see below) or "
    "--insecure-no-auth."
)
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 19120


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from loadgen.targets.opening import add_policy_argument, add_target_arguments
    from lochkit.commands.serve_security import add_security_arguments
    from lochkit.serve_limits import add_limit_arguments

    # No Nessie server options: serve opens a lochkit backend, and a Nessie server serves this API itself.
    add_target_arguments(parser, nessie=False)
    add_policy_argument(parser, over_rest=False)
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    add_limit_arguments(parser)
    add_security_arguments(parser)
    authorization = parser.add_argument_group("authorization")
    authorization.add_argument(
        "--authorization-rules",
        metavar="FILE",
        help="check every request against Nessie's authorization rules in FILE, a .properties file "
        "of nessie.server.authorization.rules.<name>=<CEL expression> lines (default: no checks)",
    )


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from loadgen.targets.opening import NESSIE, TargetError, open_target
    from loadgen.targets.policy import apply_policy
    from lochkit.commands.serve_security import authentication_from, tls_from
    from persist_spi.errors import InputError, LochkitError, Unreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from persist_spi.registry import UnknownBackend
    from provisioning.base import ProvisioningFailed

    problem = _check(args, NESSIE)
    if problem:
        print(f"lochkit serve: {problem}", file=sys.stderr)
        return 2
    from rest_server.authorization import RulesError, load_rules

    try:
        # Read before the backend opens: a bad rules file stops the start at once. _serve uses it.
        args.authorization = load_rules(args.authorization_rules) if args.authorization_rules else None
    except RulesError as e:
        print(f"lochkit serve: {e}", file=sys.stderr)
        return 2
    try:
        # Token file, JWKS and TLS files are read before any database is opened or started.
        authentication, tls = authentication_from(args), tls_from(args)
        with open_target(args, purpose="serve") as target:
            # The policy of the one store every client's commits go through.
            return _serve(args, target, apply_policy(target, args.policy), authentication, tls)
    except (InputError, UnknownBackend) as e:
        print(f"lochkit serve: {e}", file=sys.stderr)
        return 2
    except Unreachable as e:
        print(f"lochkit serve: {e}", file=sys.stderr)
        return UNAVAILABLE
    except (LochkitError, TargetError, ProvisioningFailed, OSError) as e:
        print(f"lochkit serve: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


def _check(args: argparse.Namespace, nessie: str) -> str | None:
    from loadgen.targets.opening import check_target_arguments
    from lochkit.commands.serve_security import authentication_configured, security_problem
    from persist_spi.errors import UsageError

    if args.backend == nessie:
        return (
            "serves a lochkit backend (--backend inmemory, rocksdb, postgres, ...); --backend nessie "
            "names a Nessie server, which already serves this API"
        )
    if not args.backend:
        return "name the backend to serve: --backend NAME (e.g. rocksdb; see 'lochkit backends')"
    try:
        check_target_arguments(args)
    except UsageError as e:
        return str(e)
    if not 0 < args.port < 65536:
        return f"--port {args.port} is not a TCP port (1-65535)"
    # An address that cannot be had is said first: no security option would make it work.
    return _address_problem(args.host, args.port) or security_problem(args, authentication_configured(args))


def _address_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port``: a name that does not resolve, or an
    address it cannot bind (in use, or not this machine's); None when it can."""
    try:
        family, kind, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        return (
            f"--host {host}: no such host name ({e.strerror}); give an address of this machine, e.g. "
            f"{DEFAULT_HOST} (this machine only) or 0.0.0.0 (every interface)"
        )
    try:
        with socket.socket(family, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            return (
                f"cannot listen on {host}:{port} ({e.strerror}); is another server (a Nessie "
                "server?) using it? Choose another with --port"
            )
        return (
            f"cannot listen on {host}:{port} ({e.strerror}); --host must be an address of this "
            f"machine, e.g. {DEFAULT_HOST} or 0.0.0.0"
        )
    return None


def _serve(
    args: argparse.Namespace,
    target: object,
    policy: str,
    authentication: Authentication | None,
    tls: Tls | None,
) -> int:
    from loadgen.targets import Target
    from lochkit.commands.serve_security import describe, is_loopback
    from lochkit.serve_limits import limits_from_args
    from rest_server import create_app, serve_forever

    assert isinstance(target, Target)
    api = target.api
    limits = limits_from_args(args)
    authorization = args.authorization
    app = create_app(lambda: api, authentication=authentication, authorization=authorization, limits=limits)
    host = f"[{args.host}]" if ":" in args.host else args.host
    scheme = "http" if tls is None else "https"
    print(f"lochkit serve: Nessie REST API v2 at {scheme}://{host}:{args.port}/api/v2")
    print(f"  over {target.describe()}, commit policy {policy}")
    for note in target.notes:
        print(f"  {note}")
    print(f"  {describe(authentication)}")
    if authorization is not None:
        count = len(authorization.rules)
        print(f"  authorization: {count} rule{'' if count == 1 else 's'} from {args.authorization_rules}")
    if authentication is None and not is_loopback(args.host):
        print(
            "  warning: --insecure-no-auth: anyone who reaches this address may read, write and "
            "delete; configure authentication to close it"
        )
    print("  Ctrl-C stops it.", flush=True)
    serve_forever(app, args.host, args.port, limits=limits, tls=tls)
    return 0
