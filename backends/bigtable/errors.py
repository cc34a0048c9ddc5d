"""Mapping the Google API errors of the Bigtable clients to the errors lochkit promises: each
names the backend and the address (which holds no secret) and what to do, and "outcome unknown"
is kept apart from "did not happen"."""

from __future__ import annotations

from typing import Final

from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    UnknownOperationResult,
)

BACKEND: Final = "bigtable"
#: gRPC's words for a connection that was never made: nothing was sent, nothing was applied.
_NOT_CONNECTED: Final = ("failed to connect", "connection refused", "name resolution", "dns resolution")


def not_connected(error: BaseException) -> bool:
    from google.api_core import exceptions

    return isinstance(error, exceptions.ServiceUnavailable) and any(
        words in str(error).lower() for words in _NOT_CONNECTED
    )


def translate(error: Exception, address: str, action: str, *, write: bool) -> Exception:
    """The lochkit error for a Google API exception (or ``error`` itself when nothing applies).
    ``write``: whether the request may have changed data, so that a lost answer is an unknown
    outcome for a write and a failed read for a read."""
    from google.api_core import exceptions

    if isinstance(error, exceptions.RetryError) and isinstance(error.cause, Exception):
        error = error.cause  # a client's own retries gave up: what matters is why
    if not_connected(error):
        return BackendUnavailable(
            BACKEND,
            address,
            f"cannot connect while trying to {action}",
            "start the server (lochkit servers start bigtable) or check the host and port",
        )
    if isinstance(error, exceptions.Unauthenticated):
        return BackendAuthenticationFailed(
            BACKEND,
            address,
            "the server rejected the credentials",
            "check GOOGLE_APPLICATION_CREDENTIALS or run gcloud auth application-default login",
        )
    if isinstance(error, exceptions.PermissionDenied):
        return BackendPermissionDenied(
            BACKEND,
            address,
            f"the credentials may not {action}",
            "grant the roles Bigtable User (data) and Bigtable Administrator (creating the tables)",
        )
    if isinstance(error, exceptions.NotFound):
        return BackendSchemaMismatch(
            BACKEND,
            address,
            f"a lochkit table or the instance does not exist (while trying to {action})",
            "let lochkit create its tables (setup_schema), or check the project, instance and table_prefix",
        )
    if isinstance(
        error,
        (
            exceptions.ServiceUnavailable,
            exceptions.DeadlineExceeded,
            exceptions.Aborted,
            exceptions.InternalServerError,
            exceptions.Cancelled,
            exceptions.TooManyRequests,
        ),
    ):
        outcome = "it is unknown whether the write was applied" if write else "the read failed"
        return UnknownOperationResult(
            f"{BACKEND} at {address}: {action}: {type(error).__name__}; {outcome}. Retry the operation"
        )
    return error
