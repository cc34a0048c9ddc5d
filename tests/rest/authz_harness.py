"""What the authorization tests share: ``lochkit serve``'s application with Nessie's rules over a
fresh in-memory store, with the caller's principal taken from test-only headers (authentication
is another layer; here a small middleware plays it), and a client speaking raw HTTP."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import requests
from starlette.types import ASGIApp, Receive, Scope, Send

from backends.inmemory import InMemoryBackendFactory
from loadgen.targets.in_process import in_process_target
from rest_server import BackgroundServer, create_app
from rest_server.authorization import rules_from_properties
from rest_server.principal import SCOPE_KEY, Principal

PRINCIPAL_HEADER = "x-test-principal"
ROLES_HEADER = "x-test-roles"
#: The rule that lets the tests' set-up requests through.
ADMIN_RULE = "nessie.server.authorization.rules.admin=role=='admin'\n"
TABLE = {
    "type": "ICEBERG_TABLE",
    "metadataLocation": "s3://b/t",
    "snapshotId": 1,
    "schemaId": 2,
    "specId": 3,
    "sortOrderId": 4,
}
VIEW = {
    "type": "ICEBERG_VIEW",
    "metadataLocation": "s3://b/v",
    "versionId": 1,
    "schemaId": 2,
    "sqlText": "select 1",
}


class PrincipalFromHeaders:
    """Test-only stand-in for authentication: the principal the request's headers name."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            name = headers.get(PRINCIPAL_HEADER.encode())
            if name is not None:
                roles = frozenset(r for r in headers.get(ROLES_HEADER.encode(), b"").decode().split(",") if r)
                scope = {**scope, SCOPE_KEY: Principal(name.decode(), roles)}
        await self.app(scope, receive, send)


@dataclass
class Caller:
    """Raw HTTP requests to the server as one principal (None: no principal, as without authentication)."""

    uri: str
    name: str | None
    roles: tuple[str, ...] = ()

    def _headers(self) -> dict[str, str]:
        if self.name is None:
            return {}
        return {PRINCIPAL_HEADER: self.name, ROLES_HEADER: ",".join(self.roles)}

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> requests.Response:
        return requests.request(
            method, f"{self.uri}{path}", json=body, params=params, headers=self._headers(), timeout=60
        )

    def ok(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        response = self.call(method, path, body, **params)
        assert response.status_code == 200, response.text
        return response.json()

    def head(self, ref: str = "main") -> str:
        return str(self.ok("GET", f"/trees/{ref}")["reference"]["hash"])

    def commit(self, ref: str, *operations: dict[str, Any]) -> requests.Response:
        body = {"commitMeta": {"message": "test"}, "operations": list(operations)}
        return self.call("POST", f"/trees/{ref}@{self.head(ref)}/history/commit", body)

    def branch(self, name: str, source: str = "main") -> str:
        source_hash = self.head(source)
        self.ok(
            "POST",
            "/trees",
            {"type": "BRANCH", "name": source, "hash": source_hash},
            name=name,
            type="BRANCH",
        )
        return source_hash


def put(*elements: str, content: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "PUT", "key": {"elements": list(elements)}, "content": content or TABLE}


def put_namespace(*elements: str) -> dict[str, Any]:
    return put(*elements, content={"type": "NAMESPACE", "elements": list(elements)})


def delete(*elements: str) -> dict[str, Any]:
    return {"type": "DELETE", "key": {"elements": list(elements)}}


def unchanged(*elements: str) -> dict[str, Any]:
    return {"type": "UNCHANGED", "key": {"elements": list(elements)}}


def forbidden(response: requests.Response) -> str:
    """The message of Nessie's 403, after checking the rest of the answer is Nessie's."""
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["status"] == 403
    assert body["reason"] == "Forbidden"
    assert body["errorCode"] == "FORBIDDEN"
    return str(body["message"])


@contextlib.contextmanager
def served_with_rules(rules: str, wrap_store: Callable[[Any], Any] = lambda api: api) -> Iterator[str]:
    """A server enforcing ``rules`` (a .properties text) plus :data:`ADMIN_RULE`; yields its URI.
    ``wrap_store`` may put something between the server and its store (to watch its calls)."""
    authorization = rules_from_properties(ADMIN_RULE + rules, "rules.properties")
    with in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    ) as target:
        api = wrap_store(target.api)
        app = create_app(lambda: api, authorization=authorization)
        app.add_middleware(PrincipalFromHeaders)
        with BackgroundServer(app) as server:
            yield server.uri
