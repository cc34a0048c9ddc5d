"""Requests with and without a valid bearer token, sent alike to the real Nessie server and to
``lochkit serve`` with authentication on: their answers are recorded in
``data/nessie_unauthenticated.json`` from Nessie 0.99 (test_authentication_against_nessie.py
re-checks the record against the live server) and compared with lochkit's
(test_authentication.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Final

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

RECORDED: Final = Path(__file__).parent / "data" / "nessie_unauthenticated.json"
ISSUER: Final = "https://issuer.example"
AUDIENCE: Final = "nessie"
KID: Final = "test-key"
#: Request paths, under the server's root; each gets every credential below.
PATHS: Final = (
    ("GET", "/api/v2/config"),
    ("GET", "/api/v2/trees"),
    ("POST", "/api/v2/trees"),
    ("GET", "/api/v2/trees/main"),
    ("GET", "/api/v2/trees/main/entries"),
    ("GET", "/api/v2/no-such-path"),
)
#: Answers that depend on the server beyond authentication: the valid token is compared on these only.
VALID_PATHS: Final = (("GET", "/api/v2/config"), ("GET", "/api/v2/trees/main"))


def signing_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_key_base64(key: rsa.RSAPrivateKey) -> str:
    """The public key as Quarkus' ``quarkus.oidc.public-key`` takes it (base64 DER, no PEM lines)."""
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "".join(line for line in pem.decode().splitlines() if "-----" not in line)


def jwks(key: rsa.RSAPrivateKey) -> dict[str, Any]:
    entry = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**entry, "kid": KID, "use": "sig", "alg": "RS256"}]}


def token(key: rsa.RSAPrivateKey, **claims: Any) -> str:
    now = int(time.time())
    payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 600, **claims}
    return jwt.encode(
        {k: v for k, v in payload.items() if v is not None}, key, algorithm="RS256", headers={"kid": KID}
    )


def credentials(key: rsa.RSAPrivateKey) -> dict[str, str | None]:
    """``Authorization`` header values by case name (None: no header)."""
    now = int(time.time())
    return {
        "none": None,
        "basic": "Basic dXNlcjpwYXNz",
        "bearer-empty": "Bearer ",
        "bearer-not-a-jwt": "Bearer not-a-token",
        "bearer-expired": f"Bearer {token(key, iat=now - 7200, exp=now - 3600)}",
        "bearer-other-issuer": f"Bearer {token(key, iss='https://other.example')}",
        "bearer-other-audience": f"Bearer {token(key, aud='other')}",
        "bearer-other-key": f"Bearer {token(signing_key())}",
        "bearer-valid": f"Bearer {token(key)}",
    }


def answers(root: str, key: rsa.RSAPrivateKey) -> dict[str, dict[str, Any]]:
    """What the server at ``root`` (scheme, host and port) answers, by ``"CASE METHOD PATH"``:
    the status, the ``WWW-Authenticate`` header and the body."""
    found: dict[str, dict[str, Any]] = {}
    for case, authorization in credentials(key).items():
        paths = VALID_PATHS if case == "bearer-valid" else PATHS
        for method, path in paths:
            headers = {"Nessie-Client-Spec": "2"}
            if authorization is not None:
                headers["Authorization"] = authorization
            body = {"name": "new", "type": "BRANCH"} if method == "POST" else None
            done = requests.request(method, root + path, headers=headers, json=body, timeout=30)
            found[f"{case} {method} {path}"] = {
                "status": done.status_code,
                "www-authenticate": done.headers.get("WWW-Authenticate"),
                "body": done.text if done.status_code == 401 else None,
            }
    return found


def recorded() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return data
