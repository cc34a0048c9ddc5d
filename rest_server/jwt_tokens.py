"""Bearer JWTs checked against an issuer, an audience and the issuer's JWKS (a file or a URL).

Only the asymmetric algorithms a JWKS key allows are accepted (RSA: RS/PS 256-512, EC: the curve's
ES algorithm, OKP: EdDSA; just the key's ``alg`` when it names one): ``none`` and HMAC keys are
refused, so a public key can never be used as an HMAC secret. Expiry (required) and not-before are
checked with :data:`LEEWAY_SECONDS` of clock skew, as SmallRye JWT (Nessie's server) allows.

The principal is the first of the ``upn``, ``preferred_username`` and ``sub`` claims (SmallRye's
order); the roles come from the ``groups`` claim (configurable).

Keys from a URL are cached; a token naming a key id the cache lacks makes one refetch (at most one
every :data:`REFETCH_INTERVAL_SECONDS`, each bounded by :data:`FETCH_TIMEOUT_SECONDS`), so the
issuer can rotate keys without a restart and unknown ids cannot make the server hammer it.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jwt

from persist_spi.errors import InputError
from rest_server.principal import Principal

LEEWAY_SECONDS: Final = 60
FETCH_TIMEOUT_SECONDS: Final = 5.0
REFETCH_INTERVAL_SECONDS: Final = 10.0
#: A JWKS is a few kilobytes; a larger answer is not one.
MAX_JWKS_BYTES: Final = 1 << 20
PRINCIPAL_CLAIMS: Final = ("upn", "preferred_username", "sub")
DEFAULT_ROLES_CLAIM: Final = "groups"
_SHAPE: Final = '{"keys": [...]}'
_FAMILIES: Final[Mapping[str, tuple[str, ...]]] = {
    "RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
    "OKP": ("EdDSA",),
}


@dataclass(frozen=True)
class _Key:
    key: Any
    algorithms: frozenset[str]


class JwtVerifier:
    """Checks bearer JWTs; ``jwks`` is a JWKS file's path or an ``https://`` / ``http://`` URL."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks: str,
        roles_claim: str = DEFAULT_ROLES_CLAIM,
        leeway: float = LEEWAY_SECONDS,
    ) -> None:
        if not issuer or not audience or not jwks:
            raise InputError("JWT authentication needs an issuer, an audience and a JWKS (file or URL)")
        self.issuer = issuer
        self.audience = audience
        self.jwks = jwks
        self.roles_claim = roles_claim
        self.leeway = leeway
        self._lock = threading.Lock()
        self._keys: dict[str | None, _Key] = {}
        self._fetched_at = float("-inf")

    def load(self) -> None:
        """Read the JWKS now (``lochkit serve`` does so before it listens): InputError, naming the
        file or URL and what is wrong, when it cannot be read or holds no usable key."""
        with self._lock:
            self._keys = _keys(_read(self.jwks), self.jwks)
            self._fetched_at = time.monotonic()

    def principal(self, token: str) -> Principal | None:
        """The principal of a valid token, or None (invalid, expired, another issuer or audience,
        or signed by a key the JWKS does not hold)."""
        try:
            header = jwt.get_unverified_header(token)
            key = self._key(header.get("kid"))
            algorithm = header.get("alg")
            if key is None or algorithm not in key.algorithms:
                return None
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError:
            return None
        names = (claims.get(claim) for claim in PRINCIPAL_CLAIMS)
        name = next((n for n in names if isinstance(n, str) and n), None)
        if name is None:
            return None
        return Principal(name, _roles(claims.get(self.roles_claim)))

    def _key(self, kid: object) -> _Key | None:
        if kid is not None and not isinstance(kid, str):
            return None
        with self._lock:
            if not self._keys or (kid not in self._keys and self._may_refetch()):
                # On failure keep the keys we have: the issuer may be briefly unreachable.
                with contextlib.suppress(InputError):
                    self._keys = _keys(_read(self.jwks), self.jwks)
                self._fetched_at = time.monotonic()
            if kid is None and len(self._keys) == 1:
                return next(iter(self._keys.values()))
            return self._keys.get(kid)

    def _may_refetch(self) -> bool:
        return time.monotonic() - self._fetched_at >= REFETCH_INTERVAL_SECONDS


def _read(jwks: str) -> Any:
    if jwks.startswith(("https://", "http://")):
        try:
            with urllib.request.urlopen(jwks, timeout=FETCH_TIMEOUT_SECONDS) as answer:
                raw = answer.read(MAX_JWKS_BYTES + 1)
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise InputError(
                f"JWKS {jwks}: cannot fetch it ({e}); check the URL and that it answers"
            ) from None
        if len(raw) > MAX_JWKS_BYTES:
            raise InputError(f"JWKS {jwks}: the answer is larger than {MAX_JWKS_BYTES} bytes; not a JWKS")
    else:
        try:
            raw = Path(jwks).read_bytes()
        except OSError as e:
            raise InputError(
                f"JWKS file {jwks}: cannot read it ({e.strerror}); give a JWKS file or an https:// URL"
            ) from None
    try:
        return json.loads(raw)
    except ValueError:
        raise InputError(f"JWKS {jwks}: not JSON; expected a JSON Web Key Set ({_SHAPE})") from None


def _keys(document: Any, source: str) -> dict[str | None, _Key]:
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise InputError(f"JWKS {source}: expected a JSON Web Key Set ({_SHAPE})")
    keys: dict[str | None, _Key] = {}
    for entry in document["keys"]:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or entry.get("kty") == "oct":
            continue  # encryption keys and HMAC secrets never verify a bearer token here
        try:
            jwk = jwt.PyJWK.from_dict(entry)
        except jwt.PyJWTError:
            continue  # a key type or algorithm this library cannot use: leave it out
        named = entry.get("alg")
        family = _FAMILIES.get(entry["kty"], (jwk.algorithm_name,))
        algorithms = (named,) if isinstance(named, str) else family
        if any(a.startswith("HS") or a == "none" for a in algorithms):
            continue
        keys[entry.get("kid")] = _Key(jwk.key, frozenset(algorithms))
    if not keys:
        raise InputError(f"JWKS {source}: holds no public signing key (RSA, EC or OKP) to check tokens with")
    return keys


def _roles(claim: object) -> frozenset[str]:
    if isinstance(claim, str):
        return frozenset(claim.split())
    if isinstance(claim, Sequence):
        return frozenset(role for role in claim if isinstance(role, str))
    return frozenset()


__all__ = ["DEFAULT_ROLES_CLAIM", "LEEWAY_SECONDS", "PRINCIPAL_CLAIMS", "JwtVerifier"]
