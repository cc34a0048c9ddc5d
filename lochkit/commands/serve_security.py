"""``lochkit serve``'s authentication and TLS options: who may call the server, and over what.

A server on a non-loopback address must have authentication (static tokens or JWTs) unless
``--insecure-no-auth`` says the network is trusted; tokens are never taken on the command line (a
process listing shows it), only from a file or from the environment."""

from __future__ import annotations

import argparse
import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rest_server.authentication import Authentication
    from rest_server.principal import Principal
    from rest_server.tls import Tls

#: The environment variable that may hold static tokens, in the token file's format (one entry a
#: line, or entries separated by ``;``): a token never needs to appear on a command line.
TOKENS_ENV: Final = "LOCHKIT_SERVE_TOKENS"


def add_security_arguments(parser: argparse.ArgumentParser) -> None:
    # Nothing of rest_server is imported here: building the parser stays light for every command.
    group = parser.add_argument_group(
        "authentication",
        "Bearer tokens, as Nessie's clients send them (Authorization: Bearer TOKEN): static tokens "
        f"from --auth-tokens-file or the {TOKENS_ENV} environment variable, and/or JWTs of an "
        "issuer (--jwt-issuer, --jwt-audience, --jwt-jwks). A request without a valid token gets "
        "Nessie's 401. Without any, anyone who reaches the server may read and write.",
    )
    group.add_argument(
        "--auth-tokens-file",
        type=Path,
        metavar="FILE",
        help="static tokens, one a line: 'TOKEN PRINCIPAL [ROLE,ROLE...]', or 'sha256:HEX PRINCIPAL "
        "[ROLES]' to keep only the token's SHA-256 in the file ('#' starts a comment)",
    )
    group.add_argument("--jwt-issuer", metavar="ISS", help="JWTs: the issuer (iss claim) to accept")
    group.add_argument("--jwt-audience", metavar="AUD", help="JWTs: the audience (aud claim) to accept")
    group.add_argument(
        "--jwt-jwks",
        metavar="FILE|URL",
        help="JWTs: the issuer's public keys, a JWKS file or https:// URL (refetched when a token "
        "names an unknown key id)",
    )
    group.add_argument(
        "--jwt-roles-claim",
        metavar="CLAIM",
        help="JWTs: the claim holding the caller's roles (default groups, as in SmallRye JWT)",
    )
    group.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="listen on a non-loopback --host without authentication (anyone who reaches it may "
        "read, write and delete); only on a network that is yours",
    )
    tls = parser.add_argument_group("TLS", "Serve HTTPS instead of HTTP: give both files, or neither.")
    tls.add_argument("--tls-cert", type=Path, metavar="FILE", help="the server's certificate chain (PEM)")
    tls.add_argument("--tls-key", type=Path, metavar="FILE", help="its private key (PEM, unencrypted)")


def security_problem(args: argparse.Namespace, configured: bool) -> str | None:
    """A usage error in the security options (None when there is none); ``configured``: whether
    authentication is configured (options or environment)."""
    jwt = [args.jwt_issuer, args.jwt_audience, args.jwt_jwks]
    if any(jwt) and not all(jwt):
        return "JWT authentication needs --jwt-issuer, --jwt-audience and --jwt-jwks together"
    if (args.tls_cert is None) != (args.tls_key is None):
        return "TLS needs both --tls-cert FILE and --tls-key FILE (or neither, for plain HTTP)"
    if configured and args.insecure_no_auth:
        return "--insecure-no-auth and authentication options contradict each other: give one of them"
    if not configured and not args.insecure_no_auth and not is_loopback(args.host):
        return (
            f"--host {args.host} is reachable from other machines, and without authentication anyone "
            "there could read, write and delete this server's data. Configure authentication "
            f"(--auth-tokens-file FILE, the {TOKENS_ENV} environment variable, or --jwt-issuer/"
            "--jwt-audience/--jwt-jwks), listen on 127.0.0.1, or, on a network that is yours, "
            "pass --insecure-no-auth"
        )
    return None


def authentication_configured(args: argparse.Namespace) -> bool:
    import os

    return bool(args.auth_tokens_file or args.jwt_jwks or args.jwt_issuer or os.environ.get(TOKENS_ENV))


def authentication_from(args: argparse.Namespace) -> Authentication | None:
    """The authentication the options and environment configure (None: none); reads the token file
    and the JWKS now, so their errors come before the server listens (InputError)."""
    from rest_server.authentication import Authentication
    from rest_server.jwt_tokens import DEFAULT_ROLES_CLAIM, JwtVerifier

    if not authentication_configured(args):
        return None
    verifier = None
    if args.jwt_jwks:
        verifier = JwtVerifier(
            issuer=args.jwt_issuer,
            audience=args.jwt_audience,
            jwks=args.jwt_jwks,
            roles_claim=args.jwt_roles_claim or DEFAULT_ROLES_CLAIM,
        )
        verifier.load()
    return Authentication(tokens=tokens_from(args.auth_tokens_file), jwt=verifier)


def tokens_from(file: Path | None, environ: Mapping[str, str] | None = None) -> dict[str, Principal]:
    """The static tokens of the token file (when given) and of :data:`TOKENS_ENV` (when set)."""
    import os

    from persist_spi.errors import InputError
    from rest_server.authentication import parse_tokens

    environ = os.environ if environ is None else environ
    tokens: dict[str, Principal] = {}
    if file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"--auth-tokens-file {file}: cannot read it ({e.__class__.__name__})") from None
        tokens.update(parse_tokens(text, f"--auth-tokens-file {file}"))
        if not tokens:
            raise InputError(f"--auth-tokens-file {file}: lists no token")
    if environ.get(TOKENS_ENV):
        for known, principal in parse_tokens(environ[TOKENS_ENV], TOKENS_ENV).items():
            if tokens.get(known, principal) != principal:
                raise InputError(f"{TOKENS_ENV}: a token also in the token file, for another principal")
            tokens[known] = principal
    return tokens


def tls_from(args: argparse.Namespace) -> Tls | None:
    from rest_server.tls import Tls

    if args.tls_cert is None or args.tls_key is None:
        return None
    tls = Tls(args.tls_cert, args.tls_key)
    tls.check()
    return tls


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def describe(authentication: Authentication | None) -> str:
    """One line for the server's banner (names no token)."""
    if authentication is None:
        return "no authentication"
    kinds = []
    if authentication.tokens:
        kinds.append(f"{len(authentication.tokens)} static token(s)")
    if authentication.jwt is not None:
        kinds.append(f"JWTs of {authentication.jwt.issuer} for {authentication.jwt.audience}")
    return "bearer authentication: " + ", ".join(kinds)
