"""Where lochkit's Nessie client finds a bearer token: its options, a token file (``--token-file``),
or the environment variable :data:`TOKEN_ENV`, the name Nessie's own Java client reads for its
``nessie.authentication.token`` property. Never a command-line value: process listings show those.

Errors name the file or variable and the fix, never the token."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from persist_spi.errors import BackendAuthenticationFailed, InputError

TOKEN_ENV: Final = "NESSIE_AUTHENTICATION_TOKEN"
TYPE: Final = "nessie.authentication.type"
TOKEN: Final = "nessie.authentication.token"


def with_token(options: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``options`` with bearer authentication added: a token in the options without a type means
    BEARER, and with no authentication in the options a token from :data:`TOKEN_ENV` is used."""
    found = dict(options)
    if TYPE not in found and found.get(TOKEN):
        found[TYPE] = "BEARER"
    if TYPE not in found and environ.get(TOKEN_ENV, "").strip():
        found[TYPE], found[TOKEN] = "BEARER", environ[TOKEN_ENV].strip()
    return found


def token_options(file: Path) -> dict[str, str]:
    """The client options for the token in ``file`` (its first non-blank line)."""
    try:
        lines = [line.strip() for line in file.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"--token-file {file}: cannot read it ({e.__class__.__name__})") from None
    token = next((line for line in lines if line), "")
    if not token or any(c.isspace() for c in token):
        raise InputError(f"--token-file {file}: expected the bearer token alone on its first line")
    return {TYPE: "BEARER", TOKEN: token}


def unauthorized(uri: str, sent: bool) -> BackendAuthenticationFailed:
    """What a 401 from the server at ``uri`` means, and how to fix it; ``sent``: a token was sent."""
    problem = (
        "the server rejected the bearer token (401 Unauthorized: wrong, expired, or for another server)"
        if sent
        else "the server needs authentication (401 Unauthorized) and no token was sent"
    )
    return BackendAuthenticationFailed(
        "Nessie",
        uri,
        problem,
        f"Give a valid token in the {TOKEN_ENV} environment variable or with --token-file FILE",
    )


__all__ = ["TOKEN_ENV", "token_options", "unauthorized", "with_token"]
