"""Bearer authentication of ``lochkit serve``: static tokens and JWTs reach the handlers as a
principal, anything else gets the 401 recorded from Nessie 0.99 (``data/nessie_unauthenticated.json``)."""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from backends.inmemory import InMemoryBackendFactory
from loadgen.targets.in_process import in_process_target
from lochkit.commands.serve_security import TOKENS_ENV, tokens_from
from persist_spi.errors import InputError
from rest_server import BackgroundServer, create_app
from rest_server.authentication import Authentication, AuthenticationMiddleware, digest, parse_tokens
from rest_server.jwt_tokens import JwtVerifier
from rest_server.principal import Principal, principal_of

from . import auth_cases as cases

KEY = cases.signing_key()
SECRET = "s3cret-token.value_1"


def _verifier(tmp_path: Path, jwks: dict[str, Any] | None = None, **kwargs: Any) -> JwtVerifier:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(jwks or cases.jwks(KEY)))
    verifier = JwtVerifier(issuer=cases.ISSUER, audience=cases.AUDIENCE, jwks=str(path), **kwargs)
    verifier.load()
    return verifier


@contextlib.contextmanager
def _lochkit(authentication: Authentication) -> Iterator[str]:
    """lochkit's REST server over an empty in-memory store, with ``authentication``: its root URL."""
    with in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    ) as target:
        api = target.api
        with BackgroundServer(create_app(lambda: api, authentication=authentication)) as server:
            yield server.uri.removesuffix("/api/v2")


@contextlib.contextmanager
def _whoami(authentication: Authentication) -> Iterator[str]:
    """A bare application behind the middleware that answers the principal it was given."""

    async def whoami(request: Request) -> JSONResponse:
        principal = principal_of(request.scope)
        assert principal is not None
        return JSONResponse({"name": principal.name, "roles": sorted(principal.roles)})

    app = Starlette(routes=[Route("/whoami", whoami)])
    with BackgroundServer(AuthenticationMiddleware(app, authentication)) as server:  # type: ignore[arg-type]
        yield server.uri.removesuffix("/api/v2") + "/whoami"


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# --- Nessie's answers -------------------------------------------------------------------------------


def test_lochkit_answers_every_credential_as_nessie_does(tmp_path: Path) -> None:
    authentication = Authentication(jwt=_verifier(tmp_path))
    with _lochkit(authentication) as root:
        assert cases.answers(root, KEY) == cases.recorded()


def test_without_authentication_anyone_is_served_as_before(
    served_inmemory: Any,
) -> None:
    with served_inmemory() as uri:
        assert requests.get(f"{uri}/config", timeout=10).status_code == 200


# --- static tokens ----------------------------------------------------------------------------------


def test_static_tokens_by_value_and_by_digest_establish_their_principal_and_roles() -> None:
    tokens = parse_tokens(
        f"# a comment\n{SECRET} alice admin,writers\n\nsha256:{digest('bobs-token')} bob  # bob\n",
        "test",
    )
    assert SECRET not in repr(tokens)  # only digests are kept
    with _whoami(Authentication(tokens=tokens)) as url:
        assert requests.get(url, headers=_bearer(SECRET), timeout=10).json() == {
            "name": "alice",
            "roles": ["admin", "writers"],
        }
        assert requests.get(url, headers=_bearer("bobs-token"), timeout=10).json() == {
            "name": "bob",
            "roles": [],
        }
        refused = requests.get(url, headers=_bearer(SECRET + "x"), timeout=10)
        assert (refused.status_code, refused.headers["WWW-Authenticate"], refused.text) == (401, "Bearer", "")
        lower = requests.get(url, headers={"Authorization": f"bearer {SECRET}"}, timeout=10)
        assert lower.status_code == 200  # the scheme is case-insensitive (RFC 7235)


def test_tokens_come_from_the_file_and_the_environment_together(tmp_path: Path) -> None:
    file = tmp_path / "tokens"
    file.write_text(f"{SECRET} alice admin\n")
    tokens = tokens_from(file, {TOKENS_ENV: "env-token carol readers; other-token dave"})
    assert tokens == {
        digest(SECRET): Principal("alice", frozenset({"admin"})),
        digest("env-token"): Principal("carol", frozenset({"readers"})),
        digest("other-token"): Principal("dave"),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{SECRET}\n", "entry 1: expected 'TOKEN PRINCIPAL [ROLE,ROLE...]'"),
        (f"# ok\n{SECRET} alice a b\n", "entry 2: expected"),
        ("sha256:abc alice\n", "a sha256: entry needs the 64 hex digits"),
        (f"{SECRET}\u00e9 alice\n", "characters a bearer token cannot have"),
        (f"{SECRET} alice\n{SECRET} bob\n", "entry 2: the same token is listed twice"),
    ],
)
def test_a_bad_token_file_is_refused_naming_the_entry_and_never_the_token(text: str, message: str) -> None:
    with pytest.raises(InputError) as refused:
        parse_tokens(text, "tokens.txt")
    assert message in str(refused.value)
    assert "tokens.txt" in str(refused.value)
    assert SECRET not in str(refused.value)


def test_authentication_without_any_token_or_issuer_is_refused() -> None:
    with pytest.raises(InputError, match="at least one static token or a JWT issuer"):
        Authentication()


# --- JWTs -------------------------------------------------------------------------------------------


def test_a_jwt_gives_its_principal_from_upn_then_preferred_username_then_sub_and_roles_from_groups(
    tmp_path: Path,
) -> None:
    verifier = _verifier(tmp_path)
    both = cases.token(KEY, upn="u", preferred_username="p", groups=["a", "b"])
    assert verifier.principal(both) == Principal("u", frozenset({"a", "b"}))
    assert verifier.principal(cases.token(KEY, preferred_username="p")) == Principal("p")
    assert verifier.principal(cases.token(KEY)) == Principal("alice")
    roles = _verifier(tmp_path, roles_claim="roles")
    assert roles.principal(cases.token(KEY, roles=["r"], groups=["g"])) == Principal(
        "alice", frozenset({"r"})
    )


def test_a_jwt_within_the_leeway_of_its_expiry_passes_and_beyond_it_fails(tmp_path: Path) -> None:
    verifier = _verifier(tmp_path, leeway=30)
    now = int(time.time())
    assert verifier.principal(cases.token(KEY, exp=now - 10)) is not None
    assert verifier.principal(cases.token(KEY, exp=now - 60)) is None
    assert verifier.principal(cases.token(KEY, nbf=now + 60)) is None
    assert verifier.principal(cases.token(KEY, exp=None)) is None  # expiry is required


def _unsigned(claims: dict[str, Any]) -> str:
    def part(doc: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'kid': cases.KID})}.{part(claims)}."


def test_alg_none_and_an_hmac_token_keyed_with_the_public_key_are_refused(tmp_path: Path) -> None:
    verifier = _verifier(tmp_path)
    now = int(time.time())
    claims = {"iss": cases.ISSUER, "aud": cases.AUDIENCE, "sub": "mallory", "exp": now + 600}
    assert verifier.principal(_unsigned(claims)) is None
    # The classic confusion: HS256 "signed" with the RSA public key a server publishes.
    public = cases.jwks(KEY)["keys"][0]
    forged = jwt.api_jws.PyJWS()
    forged._algorithms["HS256"].prepare_key = lambda key: key  # type: ignore[method-assign]
    token = forged.encode(
        json.dumps(claims).encode(),
        json.dumps(public).encode(),
        algorithm="HS256",
        headers={"kid": cases.KID},
    )
    assert verifier.principal(token) is None


def test_a_jwks_holding_only_hmac_secrets_is_refused(tmp_path: Path) -> None:
    secret = {"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "h", "alg": "HS256"}]}
    with pytest.raises(InputError, match="holds no public signing key"):
        _verifier(tmp_path, secret)


def test_es256_tokens_are_checked_against_an_ec_key(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    entry = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    verifier = _verifier(tmp_path, {"keys": [{**entry, "kid": "ec"}]})
    now = int(time.time())
    claims = {"iss": cases.ISSUER, "aud": cases.AUDIENCE, "sub": "eve", "exp": now + 60}
    assert verifier.principal(jwt.encode(claims, key, "ES256", headers={"kid": "ec"})) == Principal("eve")
    # An algorithm the key is not for: refused before any signature check.
    assert verifier.principal(jwt.encode(claims, KEY, "RS256", headers={"kid": "ec"})) is None


class _JwksHandler(http.server.BaseHTTPRequestHandler):
    served: list[dict[str, Any]] = []
    fetches = 0

    def do_GET(self) -> None:
        type(self).fetches += 1
        body = json.dumps(self.served[0]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


def test_keys_from_a_url_are_cached_and_refetched_when_a_token_names_a_new_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import rest_server.jwt_tokens as jwt_tokens

    monkeypatch.setattr(jwt_tokens, "REFETCH_INTERVAL_SECONDS", 0.0)
    _JwksHandler.served, _JwksHandler.fetches = [cases.jwks(KEY)], 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _JwksHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/jwks"
        verifier = JwtVerifier(issuer=cases.ISSUER, audience=cases.AUDIENCE, jwks=url)
        verifier.load()
        assert verifier.principal(cases.token(KEY)) == Principal("alice")
        assert verifier.principal(cases.token(KEY)) == Principal("alice")
        assert _JwksHandler.fetches == 1  # cached
        rotated = cases.signing_key()
        entry = {**cases.jwks(rotated)["keys"][0], "kid": "rotated"}
        _JwksHandler.served = [{"keys": [*cases.jwks(KEY)["keys"], entry]}]
        token = jwt.encode(
            {"iss": cases.ISSUER, "aud": cases.AUDIENCE, "sub": "new", "exp": int(time.time()) + 60},
            rotated,
            "RS256",
            headers={"kid": "rotated"},
        )
        assert verifier.principal(token) == Principal("new")
        assert _JwksHandler.fetches == 2
    finally:
        server.shutdown()
        server.server_close()


def test_an_unreadable_jwks_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"JWKS file .*missing\.json: cannot read it"):
        JwtVerifier(issuer="i", audience="a", jwks=str(tmp_path / "missing.json")).load()
    with pytest.raises(InputError, match="cannot fetch it"):
        JwtVerifier(issuer="i", audience="a", jwks="http://127.0.0.1:1/jwks").load()
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(InputError, match="not JSON"):
        JwtVerifier(issuer="i", audience="a", jwks=str(tmp_path / "bad.json")).load()


# --- the committer is the principal -----------------------------------------------------------------


def _commit(root: str, token: str, meta: dict[str, Any], key: str = "t") -> requests.Response:
    head = requests.get(f"{root}/api/v2/trees/main", headers=_bearer(token), timeout=10).json()["reference"]
    operation = {
        "type": "PUT",
        "key": {"elements": [key]},
        "content": {"type": "NAMESPACE", "elements": [key]},
    }
    return requests.post(
        f"{root}/api/v2/trees/main@{head['hash']}/history/commit",
        json={"commitMeta": meta, "operations": [operation]},
        headers=_bearer(token),
        timeout=10,
    )


def _last_meta(root: str, token: str) -> dict[str, Any]:
    log = requests.get(f"{root}/api/v2/trees/main/history", headers=_bearer(token), timeout=10).json()
    meta: dict[str, Any] = log["logEntries"][0]["commitMeta"]
    return meta


def test_an_authenticated_commit_is_committed_and_authored_by_its_principal() -> None:
    tokens = parse_tokens(f"{SECRET} alice writers\n", "test")
    with _lochkit(Authentication(tokens=tokens)) as root:
        assert _commit(root, SECRET, {"message": "m"}).status_code == 200
        meta = _last_meta(root, SECRET)
        assert (meta["committer"], meta["authors"]) == ("alice", ["alice"])
        # A named author stays the author; the committer is still whoever sent the commit.
        assert _commit(root, SECRET, {"message": "m2", "authors": ["bob"]}, key="u").status_code == 200
        meta = _last_meta(root, SECRET)
        assert (meta["committer"], meta["authors"]) == ("alice", ["bob"])


def test_an_authenticated_client_cannot_name_another_committer() -> None:
    tokens = parse_tokens(f"{SECRET} alice writers\n", "test")
    with _lochkit(Authentication(tokens=tokens)) as root:
        refused = _commit(root, SECRET, {"message": "m", "committer": "mallory"})
        assert refused.status_code == 400
        assert "Cannot set the committer on the client side" in refused.json()["message"]
        log = requests.get(f"{root}/api/v2/trees/main/history", headers=_bearer(SECRET), timeout=10).json()
        assert log["logEntries"] == []  # nothing was written


def test_an_authenticated_merge_commit_is_committed_by_its_principal() -> None:
    tokens = parse_tokens(f"{SECRET} alice writers\n", "test")
    with _lochkit(Authentication(tokens=tokens)) as root:
        main = requests.get(f"{root}/api/v2/trees/main", headers=_bearer(SECRET), timeout=10).json()
        source = {"type": "BRANCH", "name": "main", "hash": main["reference"]["hash"]}
        created = requests.post(
            f"{root}/api/v2/trees?name=dev&type=BRANCH", json=source, headers=_bearer(SECRET), timeout=10
        )
        assert created.status_code == 200, created.text
        dev = requests.get(f"{root}/api/v2/trees/dev", headers=_bearer(SECRET), timeout=10).json()
        head = dev["reference"]["hash"]
        operation = {
            "type": "PUT",
            "key": {"elements": ["n"]},
            "content": {"type": "NAMESPACE", "elements": ["n"]},
        }
        committed = requests.post(
            f"{root}/api/v2/trees/dev@{head}/history/commit",
            json={"commitMeta": {"message": "on dev"}, "operations": [operation]},
            headers=_bearer(SECRET),
            timeout=10,
        ).json()
        merged = requests.post(
            f"{root}/api/v2/trees/main@{main['reference']['hash']}/history/merge",
            json={"fromRefName": "dev", "fromHash": committed["targetBranch"]["hash"]},
            headers=_bearer(SECRET),
            timeout=10,
        )
        assert merged.status_code == 200, merged.text
        assert _last_meta(root, SECRET)["committer"] == "alice"
