"""Errors as Nessie's server answers them: an HTTP status, an ``errorCode`` and a message, plus
``errorDetails`` (the conflicts of a refused commit, merge or transplant) for clients that say they
speak client spec 2 (``Nessie-Client-Spec: 2``), as Nessie does.

The version store's exceptions map through :func:`persist_spi.versionstore.nessie_json.error_to_json`;
what only the HTTP layer knows (a malformed request, a missing content key) is an :class:`ApiError`.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from persist_spi.versionstore import nessie_json as nj
from persist_spi.versionstore.content import ContentKey

CLIENT_SPEC_HEADER: Final = "nessie-client-spec"
_LOG = logging.getLogger(__name__)


class ApiError(Exception):
    """An error answer: status, Nessie error code, message and optional details."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.details = details

    def body(self) -> dict[str, Any]:
        return nj.error_body(self.status, self.code, str(self), self.details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BAD_REQUEST", message)


def content_not_found(key: ContentKey, ref_name: str) -> ApiError:
    status, body = nj.content_not_found_to_json(key, ref_name)
    return ApiError(status, body["errorCode"], body["message"], body.get("errorDetails"))


def error_answer(
    error: BaseException, client_spec: str | None, request: str = "request"
) -> tuple[int, dict[str, Any]]:
    """The status and body for ``error``; details only for client spec 2 and later. Only input
    lochkit declares wrong is the client's fault (4xx); anything else is answered 500 and logged at
    ERROR with its traceback, naming ``request`` (``GET /api/v2/trees``), for the operator."""
    if isinstance(error, ApiError):
        status, body = error.status, error.body()
    else:
        status, body = nj.error_to_json(error)
        if status >= 500:
            # Not the caller's fault: keep the traceback in the server's log, not in the answer.
            _LOG.error("%s failed: %s", request, body["message"], exc_info=error)
    if "errorDetails" in body and not _speaks_spec_2(client_spec):
        body = {k: v for k, v in body.items() if k != "errorDetails"}
    return status, body


def _speaks_spec_2(client_spec: str | None) -> bool:
    try:
        return client_spec is not None and int(client_spec.strip()) >= 2
    except ValueError:
        return False


__all__ = ["CLIENT_SPEC_HEADER", "ApiError", "bad_request", "content_not_found", "error_answer"]
