"""Turning cassandra-driver exceptions into the errors of the Persist contract.

The rule: when the server could not say whether a write happened (a coordinator timeout, too few
replicas alive, an overloaded node, a client-side timeout) the result is
:class:`UnknownOperationResult`, which the core may retry because every lochkit write is
conditional or idempotent. Errors a user must fix become a :class:`BackendError` that names the
backend, the address (never the password) and the fix. Everything else propagates unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    LochkitError,
    UnknownOperationResult,
)

#: Protocol error codes without a class of their own in the driver: CAS_WRITE_UNKNOWN (protocol v5:
#: an LWT's commit may or may not have happened), OVERLOADED, IS_BOOTSTRAPPING.
_UNKNOWN_OUTCOME_CODES: Final = frozenset({0x1700, 0x1001, 0x1002})


def translate(exc: BaseException, backend: str, address: str, what: str) -> BaseException:
    """The exception to raise instead of ``exc`` (``exc`` itself when it is not recognised)."""
    from cassandra import (
        AuthenticationFailed,
        CoordinationFailure,
        InvalidRequest,
        OperationTimedOut,
        ReadTimeout,
        Unauthorized,
        Unavailable,
        WriteTimeout,
    )
    from cassandra.cluster import NoHostAvailable
    from cassandra.protocol import ErrorMessage

    if isinstance(exc, LochkitError):
        return exc
    if isinstance(exc, (WriteTimeout, ReadTimeout, Unavailable, CoordinationFailure, OperationTimedOut)) or (
        isinstance(exc, ErrorMessage) and getattr(exc, "code", None) in _UNKNOWN_OUTCOME_CODES
    ):
        return UnknownOperationResult(
            f"{backend} at {address}: {what}: the outcome is unknown ({type(exc).__name__}: {exc}); "
            "the operation may be retried"
        )
    if isinstance(exc, NoHostAvailable):
        return _no_host(exc, backend, address, what)
    if isinstance(exc, AuthenticationFailed):
        return authentication_failed(backend, address, str(exc))
    if isinstance(exc, Unauthorized):
        return BackendPermissionDenied(
            backend,
            address,
            f"{what} was refused ({_server_message(exc)})",
            "Grant the role SELECT and MODIFY on the keyspace (and CREATE on it, or on ALL KEYSPACES "
            "when lochkit must create the keyspace, for setup), or use a role that has them",
        )
    if isinstance(exc, InvalidRequest) and _missing_table(str(exc)):
        return BackendSchemaMismatch(
            backend,
            address,
            f"{what}: lochkit's tables do not exist ({_server_message(exc)})",
            "Run the schema setup once (BackendAdapter.setup_schema(); every conformance run does it) "
            "with a role allowed to create tables",
        )
    return exc


@contextmanager
def translated(backend: str, address: str, what: str) -> Iterator[None]:
    """Re-raise driver exceptions of the block as their lochkit counterparts (others unchanged)."""
    try:
        yield
    except Exception as e:
        error = translate(e, backend, address, what)
        if error is e:
            raise
        raise error from e


def authentication_failed(backend: str, address: str, detail: str) -> BackendAuthenticationFailed:
    if "requires authentication" in detail:
        problem = "the server requires a user name and password, and none was given"
    else:
        problem = "the server rejected the user name or password"
    return BackendAuthenticationFailed(
        backend, address, problem, "Put valid credentials in the URL: scheme://USER:PASSWORD@host/keyspace"
    )


def _no_host(exc: BaseException, backend: str, address: str, what: str) -> BaseException:
    from cassandra import AuthenticationFailed

    errors = getattr(exc, "errors", None) or {}
    for error in errors.values():
        if isinstance(error, AuthenticationFailed):
            return authentication_failed(backend, address, str(error))
    reasons = "; ".join(sorted({f"{type(e).__name__}: {e}" for e in errors.values()})) or str(exc)
    return BackendUnavailable(
        backend,
        address,
        f"{what}: no node answered ({reasons})",
        "Check that the server is running and reachable at that host and port",
    )


def _missing_table(message: str) -> bool:
    return "unconfigured table" in message or ("table" in message.lower() and "does not exist" in message)


def _server_message(exc: BaseException) -> str:
    """The server's sentence without the driver's ``Error from server: code=...`` wrapping."""
    text = str(exc)
    start = text.find('message="')
    return text[start + 9 :].rstrip('">') if start >= 0 else text
