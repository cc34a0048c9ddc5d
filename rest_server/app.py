"""The ASGI application: Nessie's REST API v2 under ``/api/v2`` over a version store.

Routing follows Nessie's paths. A reference element may hold ``@``, ``~``, ``^``, ``*`` and, before
an ``@``, ``/``; so ``/trees/...`` is matched here against the raw (still percent-encoded) path,
with the same alternatives Nessie's resources declare, and each element is decoded afterwards.

Handlers are plain functions over a :class:`~rest_server.context.Call`; they run in Starlette's
thread pool, because the version store and the database drivers under it block.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import rest_server.reads as reads
import rest_server.references as references
import rest_server.writes as writes
from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.store import VersionStore
from rest_server.authentication import Authentication, AuthenticationMiddleware
from rest_server.authorization import ALLOW_ALL, Authorization
from rest_server.context import Call
from rest_server.errors import CLIENT_SPEC_HEADER, ApiError, error_answer
from rest_server.limits import (
    UNBOUNDED,
    RequestLimits,
    bounded,
    cap_page_size,
    check_counts,
    read_body,
    within_read_timeout,
)
from rest_server.principal import principal_of

#: The REST API spec version lochkit serves (Nessie 0.99 answers the same).
SPEC_VERSION: Final = "2.2.0"
PREFIX: Final = "/api/v2"
#: Where to find the store for a request: fixed for ``lochkit serve``, swappable for test harnesses.
StoreSource = Callable[[], VersionStoreApi]

#: Nessie's path-element alternatives: no '/' at all, or anything up to an '@' and no '/' after it.
_REF: Final = r"(?:[^/]+|[^@]+(?:@|%40)[^@/]*)"
_TREES: Final = re.compile(
    rf"^{re.escape(PREFIX)}/trees/(?P<ref>{_REF})"
    r"(?P<rest>|/entries|/history|/history/commit|/history/merge|/history/transplant|/recent-changes"
    rf"|/contents|/contents/(?P<key>[^/]+)|/diff/(?P<to>{_REF}))/?$"
)

Handler = Callable[..., dict[str, Any]]
_ROUTES: Final[dict[tuple[str, str], Handler]] = {
    ("GET", ""): references.get_reference,
    ("PUT", ""): references.assign_reference,
    ("DELETE", ""): references.delete_reference,
    ("GET", "/recent-changes"): references.reference_history,
    ("GET", "/entries"): reads.get_entries,
    ("GET", "/history"): reads.get_commit_log,
    ("GET", "/contents"): reads.get_several_contents,
    ("POST", "/contents"): reads.post_contents,
    ("POST", "/history/commit"): writes.commit,
    ("POST", "/history/merge"): writes.merge,
    ("POST", "/history/transplant"): writes.transplant,
}


def create_app(
    store: StoreSource,
    *,
    authentication: Authentication | None = None,
    authorization: Authorization | None = None,
    limits: RequestLimits = UNBOUNDED,
) -> Starlette:
    """Nessie's REST API v2 over the store ``store()`` returns (asked once per request).
    ``authentication``: who may call it (None: anyone, as without authentication in Nessie);
    ``authorization``: Nessie's rules every request is checked against (None: no checks);
    ``limits``: how large and long requests may be (none unless given; ``lochkit serve`` gives its
    options')."""

    async def answer(request: Request, handler: Callable[[Call], dict[str, Any]]) -> Response:
        return await _answer(request, store, limits, handler, authorization)

    async def config(request: Request) -> Response:
        return await answer(request, lambda call: _config(call.store))

    async def trees(request: Request) -> Response:
        if request.method == "GET":
            return await answer(request, references.list_references)
        return await answer(request, references.create_reference)

    async def tree_path(request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.url.path.encode()
        match = _TREES.match(raw.decode("latin-1").split("?", 1)[0])
        if match is None:
            return _not_found(request)
        ref, rest = unquote(match.group("ref")), match.group("rest")
        if rest.startswith("/contents/") and request.method == "GET":
            key = unquote(match.group("key"))
            return await answer(request, lambda call: reads.get_content(call, ref, key))
        if rest.startswith("/diff/") and request.method == "GET":
            to = unquote(match.group("to"))
            return await answer(request, lambda call: reads.get_diff(call, ref, to))
        handler = _ROUTES.get((request.method, rest))
        if handler is None:
            return _not_found(request)
        return await answer(request, lambda call: handler(call, ref))

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        error = ApiError(status, "UNKNOWN", f"{request.method} {request.url.path}: {exc}")
        return JSONResponse(error.body(), status_code=status)

    return Starlette(
        # Large listings (entries, logs) shrink a lot; Nessie's clients ask for gzip.
        middleware=[
            # First: a request without a valid token is answered before anything else reads it.
            *(
                [Middleware(AuthenticationMiddleware, authentication=authentication)]
                if authentication
                else ()
            ),
            *bounded(limits),
            Middleware(GZipMiddleware, minimum_size=4096),
        ],
        routes=[
            Route(f"{PREFIX}/config", config, methods=["GET"]),
            Route(f"{PREFIX}/trees", trees, methods=["GET", "POST"]),
            Route(f"{PREFIX}/trees/{{rest:path}}", tree_path, methods=["GET", "POST", "PUT", "DELETE"]),
        ],
        exception_handlers={HTTPException: http_error},
    )


def _config(store: VersionStoreApi) -> dict[str, Any]:
    config: dict[str, Any] = {
        "defaultBranch": store.default_branch(),
        # Only v2 is served (Nessie also serves v1, and says 1 here): a client reading the range
        # must not be sent to an API that answers 404.
        "minSupportedApiVersion": 2,
        "maxSupportedApiVersion": 2,
        "actualApiVersion": 2,
        "specVersion": SPEC_VERSION,
        "noAncestorHash": str(EMPTY_OBJ_ID),
    }
    if isinstance(store, VersionStore):  # a store over lochkit's storage knows its repository
        description = store.repository.fetch_repository_description()
        if description is not None:
            for name, value in (
                ("repositoryCreationTimestamp", description.repository_created_time),
                ("oldestPossibleCommitTimestamp", description.oldest_possible_commit_time),
            ):
                if value is not None:
                    config[name] = value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")
    return config


def _not_found(request: Request) -> Response:
    error = ApiError(
        404,
        "UNKNOWN",
        f"No such endpoint: {request.method} {request.url.path} (see Nessie's REST API v2: "
        f"{PREFIX}/config, {PREFIX}/trees, {PREFIX}/trees/REF/entries|history|contents|diff/REF...)",
    )
    return JSONResponse(error.body(), status_code=404)


async def _answer(
    request: Request,
    store: StoreSource,
    limits: RequestLimits,
    handler: Callable[[Call], dict[str, Any]],
    authorization: Authorization | None = None,
) -> Response:
    spec = request.headers.get(CLIENT_SPEC_HEADER)
    try:
        body = await _body(request, limits)
        query: dict[str, list[str]] = {}
        for name, value in request.query_params.multi_items():
            query.setdefault(name, []).append(value)
        check_counts(query, body, limits)
        cap_page_size(query, limits)
        principal = principal_of(request.scope)
        access = authorization.checker(principal) if authorization is not None else ALLOW_ALL
        work = run_in_threadpool(lambda: handler(Call(store(), query, body, principal, access=access)))
        result = await within_read_timeout(request.method, work, limits)
    except Exception as e:  # every failure becomes Nessie's error answer
        status, answer = error_answer(e, spec, f"{request.method} {request.url.path}")
        return JSONResponse(answer, status_code=status)
    return JSONResponse(result)


async def _body(request: Request, limits: RequestLimits) -> Any:
    if request.method not in ("POST", "PUT"):
        return None
    raw = await read_body(request, limits)
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError as e:
        raise ApiError(400, "BAD_REQUEST", f"The request body is not valid JSON: {e}") from None


__all__ = ["PREFIX", "SPEC_VERSION", "StoreSource", "create_app"]
