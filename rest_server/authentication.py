"""Bearer-token authentication for ``lochkit serve``, as Nessie's clients send it.

A request carries ``Authorization: Bearer TOKEN``. The token is either

- a **static token**: listed in a token file or an environment variable (``lochkit serve`` reads
  them), each mapped to a principal and roles (see :func:`parse_tokens`); only the
  tokens' SHA-256 digests are kept in memory, and a file may hold just the digest;
- a **JWT** signed by an issuer's key (:mod:`rest_server.jwt_tokens`): checked against the issuer,
  the audience and the issuer's JWKS.

:class:`AuthenticationMiddleware` puts the :class:`~rest_server.principal.Principal` it established
into the ASGI scope (:data:`~rest_server.principal.SCOPE_KEY`) and answers a request without a
valid token as Nessie 0.99 does (401, see :func:`unauthorized`). Tokens never reach a log, an
error message or an answer.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from persist_spi.errors import InputError
from rest_server.jwt_tokens import JwtVerifier
from rest_server.principal import SCOPE_KEY, Principal

#: A token file entry giving the token's SHA-256 instead of the token itself.
DIGEST_PREFIX: Final = "sha256:"
#: RFC 6750's token syntax: what a bearer token may consist of.
_TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")
_NAME: Final = re.compile(r"[^\s,;]+")


def digest(token: str) -> str:
    """The SHA-256 of a token, in hexadecimal: what a token file may hold instead of the token."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Authentication:
    """Who may call the server: static tokens (by SHA-256 digest) and/or JWTs. ``open_paths`` are
    the paths answered without a token."""

    tokens: Mapping[str, Principal] = field(default_factory=dict)
    jwt: JwtVerifier | None = None
    open_paths: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.tokens and self.jwt is None:
            raise InputError(
                "authentication needs at least one static token or a JWT issuer to check tokens against"
            )

    def principal(self, token: str) -> Principal | None:
        """The principal a static token stands for, or None. Compared by digest, in constant time
        per entry, so neither the token nor its length leaks through timing."""
        presented = digest(token)
        found: Principal | None = None
        for known, principal in self.tokens.items():
            if hmac.compare_digest(known, presented):
                found = principal
        return found


def parse_tokens(text: str, source: str) -> dict[str, Principal]:
    """Static tokens from ``text`` (a token file, or an environment variable), by SHA-256 digest.

    One entry a line (or separated by ``;``); blank lines and ``#`` comments are skipped::

        TOKEN            PRINCIPAL  [ROLE,ROLE,...]
        sha256:HEXDIGEST PRINCIPAL  [ROLE,ROLE,...]

    Errors name ``source`` and the entry's number, never the token."""
    tokens: dict[str, Principal] = {}
    entries = [line.split("#", 1)[0].strip() for chunk in text.splitlines() for line in chunk.split(";")]
    for number, entry in enumerate(entries, start=1):
        if not entry:
            continue
        fields = entry.split()
        where = f"{source}, entry {number}"
        if len(fields) not in (2, 3):
            raise InputError(
                f"{where}: expected 'TOKEN PRINCIPAL [ROLE,ROLE...]' (or 'sha256:DIGEST PRINCIPAL ...'), "
                f"found {len(fields)} field(s)"
            )
        token, name = fields[0], fields[1]
        roles = frozenset(role for role in (fields[2] if len(fields) == 3 else "").split(",") if role)
        if token.startswith(DIGEST_PREFIX):
            known = token[len(DIGEST_PREFIX) :].lower()
            if not _DIGEST.fullmatch(known):
                raise InputError(f"{where}: a sha256: entry needs the 64 hex digits of the token's SHA-256")
        elif _TOKEN.fullmatch(token):
            known = digest(token)
        else:
            raise InputError(
                f"{where}: the token holds characters a bearer token cannot have (letters, digits and "
                "-._~+/ only, '=' at the end)"
            )
        if not _NAME.fullmatch(name):
            raise InputError(f"{where}: the principal must be one word")
        if known in tokens:
            raise InputError(f"{where}: the same token is listed twice")
        tokens[known] = Principal(name, roles)
    return tokens


def bearer_token(headers: Headers) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, or None."""
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


async def authenticate(authentication: Authentication, headers: Headers) -> Principal | None:
    """The principal a request's bearer token establishes, or None."""
    token = bearer_token(headers)
    if token is None:
        return None
    principal = authentication.principal(token)
    if principal is None and authentication.jwt is not None and token.count(".") == 2:
        # Verification may fetch the issuer's keys: off the event loop.
        principal = await run_in_threadpool(authentication.jwt.principal, token)
    return principal


def unauthorized() -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """Nessie 0.99's answer to a request without a valid token (recorded from the real server:
    ``tests/rest/data/nessie_unauthenticated.json``)."""
    return 401, [(b"www-authenticate", b"Bearer"), (b"content-length", b"0")], b""


class AuthenticationMiddleware:
    """ASGI middleware: every HTTP request but those to ``open_paths`` needs a valid bearer token."""

    def __init__(self, app: ASGIApp, authentication: Authentication) -> None:
        self.app = app
        self.authentication = authentication

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.authentication.open_paths:
            await self.app(scope, receive, send)
            return
        principal = await authenticate(self.authentication, Headers(scope=scope))
        if principal is None:
            status, headers, body = unauthorized()
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        scope[SCOPE_KEY] = principal
        await self.app(scope, receive, send)


__all__ = [
    "DIGEST_PREFIX",
    "Authentication",
    "AuthenticationMiddleware",
    "authenticate",
    "bearer_token",
    "digest",
    "parse_tokens",
]
