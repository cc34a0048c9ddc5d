"""Mapping botocore failures to the errors lochkit promises: each names the backend, the address
(never credentials) and what to do, and "outcome unknown" is kept apart from "did not happen"."""

from __future__ import annotations

from typing import Final

from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    UnknownOperationResult,
)

BACKEND: Final = "dynamodb"

#: The service refused the request before applying it: repeating it is always safe.
REJECTED_CODES: Final = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TransactionConflictException",
    }
)
#: The request may or may not have been applied.
UNKNOWN_OUTCOME_CODES: Final = frozenset(
    {
        "InternalServerError",
        "InternalFailure",
        "ServiceUnavailable",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)
AUTH_CODES: Final = frozenset(
    {
        "UnrecognizedClientException",
        "InvalidSignatureException",
        "IncompleteSignatureException",
        "MissingAuthenticationToken",
        "MissingAuthenticationTokenException",
        "InvalidClientTokenId",
        "ExpiredToken",
        "ExpiredTokenException",
        "SignatureDoesNotMatch",
        "AuthFailure",
    }
)
CONDITION_FAILED: Final = "ConditionalCheckFailedException"
#: A TransactWriteItems that applied nothing; its ``CancellationReasons`` say why, action by action.
TRANSACTION_CANCELLED: Final = "TransactionCanceledException"
#: The reason of an action whose condition did not hold ("None" for an action that would have applied).
REASON_CONDITION_FAILED: Final = "ConditionalCheckFailed"
REASON_NONE: Final = "None"
REASON_UNKNOWN: Final = "Unknown"
#: Reasons that cancel a transaction only for now: another transaction on the same items, throttling.
RETRIED_REASONS: Final = frozenset(
    {"TransactionConflict", "ProvisionedThroughputExceeded", "ThrottlingError", "RequestLimitExceeded"}
)


def error_code(error: BaseException) -> str | None:
    """The service's error code of a botocore ClientError, else None."""
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return None
    code = response.get("Error", {}).get("Code")
    return str(code) if code else None


def error_message(error: BaseException) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Message") or "")
    return str(error)


def cancellation_reasons(error: BaseException) -> list[str] | None:
    """The reason of each action of a cancelled TransactWriteItems, in the request's order (botocore
    reads them from the response, as DynamoDB Local 2.6 sends them too), or ``[REASON_UNKNOWN]``
    when the response has none; None for other errors."""
    if error_code(error) != TRANSACTION_CANCELLED:
        return None
    reasons = getattr(error, "response", {}).get("CancellationReasons") or []
    return [str(reason.get("Code") or REASON_NONE) for reason in reasons] or [REASON_UNKNOWN]


def refused_before_applying(error: BaseException) -> bool:
    """DynamoDB refused the write for now (throttling, a conflicting transaction) without applying
    any of it, so sending it again is safe; a failed condition is an answer, not a refusal."""
    if error_code(error) in REJECTED_CODES:
        return True
    reasons = set(cancellation_reasons(error) or ()) - {REASON_NONE}
    return bool(reasons) and reasons <= RETRIED_REASONS


def is_item_too_large(error: BaseException) -> bool:
    """DynamoDB reports its 400 KiB item limit as a ValidationException mentioning the item size."""
    return error_code(error) == "ValidationException" and "item size" in error_message(error).lower()


def translate(error: Exception, address: str, action: str, *, write: bool) -> Exception:
    """The lochkit error for a botocore exception (or ``error`` itself when nothing applies).

    ``write`` tells whether the request may have changed data: a lost response to a write is an
    unknown outcome, while a lost response to a read is just a failed read (also retryable).
    """
    from botocore.exceptions import (
        ConnectionClosedError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
        ReadTimeoutError,
    )

    code = error_code(error)
    if isinstance(error, (EndpointConnectionError, ConnectTimeoutError)):
        return BackendUnavailable(
            BACKEND,
            address,
            f"cannot connect to the endpoint while trying to {action} ({type(error).__name__})",
            "start the server or check the host, port, network and the 'connect_timeout' option",
        )
    if isinstance(error, (NoCredentialsError, PartialCredentialsError)):
        return BackendAuthenticationFailed(
            BACKEND,
            address,
            "no usable AWS credentials were found",
            "configure credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws, a role) or a profile=",
        )
    if code in AUTH_CODES:
        return BackendAuthenticationFailed(
            BACKEND,
            address,
            f"the server rejected the credentials ({code})",
            "check the access key id and secret key (and session token) and the clock of this machine",
        )
    if code == "AccessDeniedException":
        return BackendPermissionDenied(
            BACKEND,
            address,
            f"the credentials may not {action}: {_short(error_message(error))}",
            "grant the IAM permissions dynamodb:CreateTable, DescribeTable, GetItem, PutItem, UpdateItem, "
            "DeleteItem, BatchGetItem, BatchWriteItem and Scan on the lochkit tables",
        )
    if code == "ResourceNotFoundException":
        return BackendSchemaMismatch(
            BACKEND,
            address,
            f"a lochkit table does not exist (while trying to {action})",
            "let lochkit create its tables (setup_schema) or check the region and table_prefix",
        )
    if isinstance(error, (ReadTimeoutError, ConnectionClosedError)) or code in UNKNOWN_OUTCOME_CODES:
        return _unknown(address, action, f"{code or type(error).__name__}", write)
    if code in REJECTED_CODES:
        return _unknown(address, action, f"throttled ({code}) after the retries", write)
    return error


def _unknown(address: str, action: str, why: str, write: bool) -> UnknownOperationResult:
    outcome = "it is unknown whether the write was applied" if write else "the read failed"
    return UnknownOperationResult(f"{BACKEND} at {address}: {action}: {why}; {outcome}. Retry the operation")


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
