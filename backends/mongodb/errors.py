"""Turning pymongo's exceptions into the errors of the Persist contract.

The rule: a user gets a :class:`~persist_spi.errors.BackendError` naming the backend, the address
(never a secret) and the fix; a write whose fate the server did not report becomes
:class:`~persist_spi.errors.UnknownOperationResult`, which retry loops may repeat because every
write lochkit issues is conditional or idempotent. Anything else is a bug and propagates unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendPermissionDenied,
    BackendUnavailable,
    LochkitError,
    UnknownOperationResult,
)

if TYPE_CHECKING:
    from pymongo.errors import BulkWriteError

BACKEND: Final = "mongodb"
DUPLICATE_KEY: Final = 11000
UNAUTHORIZED: Final = 13
AUTHENTICATION_FAILED: Final = 18
#: Server answers meaning "interrupted, not necessarily undone": shutdown, step-down, time limits.
TRANSIENT_CODES: Final = frozenset(
    {
        6,  # HostUnreachable
        7,  # HostNotFound
        50,  # MaxTimeMSExpired
        89,  # NetworkTimeout
        91,  # ShutdownInProgress
        189,  # PrimarySteppedDown
        262,  # ExceededTimeLimit
        9001,  # SocketException
        10107,  # NotWritablePrimary
        11600,  # InterruptedAtShutdown
        11602,  # InterruptedDueToReplStateChange
        13435,  # NotPrimaryNoSecondaryOk
        13436,  # NotPrimaryOrSecondary
    }
)


@dataclass(frozen=True)
class ErrorContext:
    address: str
    database: str
    has_credentials: bool


def translate(error: Exception, ctx: ErrorContext, operation: str, *, write: bool) -> Exception:
    """The exception to raise instead of ``error`` (``error`` itself when it is not ours to map)."""
    from pymongo.errors import (
        ConfigurationError,
        ConnectionFailure,
        CursorNotFound,
        OperationFailure,
        ServerSelectionTimeoutError,
        WriteConcernError,
    )

    if isinstance(error, LochkitError):
        return error
    if isinstance(error, ServerSelectionTimeoutError) or (
        # Refused while opening a connection: nothing was sent, so the outcome is known.
        isinstance(error, ConnectionFailure) and isinstance(error.__cause__, ConnectionRefusedError)
    ):  # checked before ConnectionFailure's general case below
        return _unavailable(ctx, error)
    if isinstance(error, ConfigurationError):
        return BackendConfigError(
            BACKEND, ctx.address, f"the driver rejected the settings ({error})", "fix the URL's options"
        )
    if isinstance(error, OperationFailure) and error.code == AUTHENTICATION_FAILED:
        return _authentication_failed(ctx, server_message(error))
    if isinstance(error, OperationFailure) and error.code == UNAUTHORIZED:
        if not ctx.has_credentials:
            return _authentication_failed(ctx, "the server requires authentication and the URL has none")
        return _permission_denied(ctx, operation, server_message(error))
    transient = isinstance(error, (ConnectionFailure, CursorNotFound, WriteConcernError)) or (
        isinstance(error, OperationFailure)
        and (error.code in TRANSIENT_CODES or error.has_error_label("RetryableWriteError"))
    )
    if transient:
        return _unknown(ctx, operation, error, write)
    return error


def server_message(error: Exception) -> str:
    """The server's own words (``errmsg``, code name), without pymongo's dump of the whole reply."""
    details = getattr(error, "details", None) or {}
    message = details.get("errmsg") or str(error).split(", full error:")[0]
    code_name = details.get("codeName")
    return f"{message} [{code_name}]" if code_name else str(message)


@contextmanager
def mapped_errors(ctx: ErrorContext, operation: str, *, write: bool) -> Iterator[None]:
    """Run a block, raising the contract's errors instead of pymongo's."""
    from pymongo.errors import PyMongoError

    try:
        yield
    except PyMongoError as e:
        mapped = translate(e, ctx, operation, write=write)
        if mapped is e:
            raise
        raise mapped from e


def _unavailable(ctx: ErrorContext, error: Exception) -> BackendUnavailable:
    # The driver's message lists every server and its last error; the first line is enough.
    detail = str(error).split(", Timeout:")[0].split("\n")[0]
    return BackendUnavailable(
        BACKEND,
        ctx.address,
        f"no server answered ({detail})",
        "start the server, or fix host and port in the URL; raise serverSelectionTimeoutMS in the "
        "URL if the server is just slow to answer",
    )


def _authentication_failed(ctx: ErrorContext, detail: str) -> BackendAuthenticationFailed:
    return BackendAuthenticationFailed(
        BACKEND,
        ctx.address,
        f"authentication failed ({detail})",
        "put a valid user and password in the URL (mongodb://user:password@host/...); if the user "
        "is defined in another database than the one in the URL, add ?authSource=that-database",
    )


def _permission_denied(ctx: ErrorContext, operation: str, detail: str) -> BackendPermissionDenied:
    return BackendPermissionDenied(
        BACKEND,
        ctx.address,
        f"the user may not {operation} ({detail})",
        f"grant the user the role readWrite on database '{ctx.database}' (it covers creating the "
        "collections and indexes)",
    )


def _unknown(ctx: ErrorContext, operation: str, error: Exception, write: bool) -> UnknownOperationResult:
    outcome = "it may or may not have been applied" if write else "it did not complete"
    return UnknownOperationResult(
        f"{BACKEND} at {ctx.address}: {operation} was interrupted ({type(error).__name__}: {error}); "
        f"{outcome}, retry it"
    )


def duplicates(error: BulkWriteError, ctx: ErrorContext, operation: str) -> set[int]:
    """Positions that failed only because the id exists; any other failure is raised."""
    details = error.details
    if details.get("writeConcernErrors"):
        # Written on the primary, but not confirmed by a majority: may still be rolled back.
        raise UnknownOperationResult(
            f"mongodb at {ctx.address}: {operation}: the write concern was not satisfied "
            f"({details['writeConcernErrors'][0].get('errmsg')}); it may or may not persist, retry it"
        ) from error
    positions = set()
    for write_error in details.get("writeErrors", []):
        if write_error.get("code") != DUPLICATE_KEY:
            raise error  # not ours to interpret: the caller's error mapping decides
        positions.add(int(write_error["index"]))
    return positions
