"""Exceptions of the Persist contract and of backends.

Every message says what happened, to what, and (where there is one) what to do about it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from persist_spi.ids import ObjId
    from persist_spi.references import Reference


class LochkitError(Exception):
    """Base class of every error lochkit raises on purpose."""


class InputError(LochkitError, ValueError):
    """Input the caller can fix: a value out of range, a malformed name or document, options that
    cannot apply together. Nothing was written. The REST server answers 400, commands exit 2; any
    other exception is a bug, answered 500 / exit 1 and logged. A ``ValueError`` too, so callers
    that catch that keep working."""


class UsageError(InputError):
    """A command line that cannot work: options that do not apply together, or a value an option
    cannot take; found before anything is opened, started or written."""


class CorruptData(LochkitError, ValueError):
    """Stored bytes that do not decode (a truncated index, an unknown format version, a lease row
    that is not one): the database's content is wrong, not the request, so the REST server answers
    500 and logs it. A ``ValueError`` too, as the decoders raised before."""


class Unreachable(LochkitError):
    """A database or server could not be reached or opened (down, unreachable, or a store another
    process holds locked). Commands exit with :data:`persist_spi.exit_codes.UNAVAILABLE`."""


def unexpected_error_message(error: BaseException) -> str:
    """``Type: message``, then each cause's (``, caused by ...``): how the REST server (as Nessie's
    does) and the commands describe an exception nobody declared. The class and message only: the
    traceback goes to the log, never to a client."""
    described: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current)
        described.append(f"{type(current).__name__}: {text}" if text else type(current).__name__)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return ", caused by ".join(described)


# --- objects -------------------------------------------------------------------------------------


class ObjNotFound(LochkitError):
    """One or more required objects are missing, or exist with another type than the one asked for."""

    def __init__(self, obj_ids: Sequence[ObjId]) -> None:
        self.obj_ids: tuple[ObjId, ...] = tuple(obj_ids)
        if len(self.obj_ids) == 1:
            text = f"Object with ID {self.obj_ids[0]} not found"
        else:
            text = "Objects with IDs " + ", ".join(str(i) for i in self.obj_ids) + " not found"
        super().__init__(text)


class ObjTooLarge(LochkitError):
    """An object is bigger than a soft (configured) or hard (database) limit; nothing was written."""

    def __init__(self, size: int, limit: int, obj_id: ObjId | None = None, what: str = "object") -> None:
        self.size = size
        self.limit = limit
        self.obj_id = obj_id
        where = f" {obj_id}" if obj_id is not None else ""
        super().__init__(
            f"The {what}{where} is {size} bytes, more than the limit of {limit} bytes; "
            "nothing of this request was written"
        )

    @classmethod
    def from_message(cls, message: str) -> ObjTooLarge | None:
        """The error a message of this class describes, or None. A REST server sends only the
        message, so this lets a client raise the same type an in-process caller gets."""
        found = _TOO_LARGE_MESSAGE.fullmatch(message)
        if found is None:
            return None
        return cls(int(found["size"]), int(found["limit"]), what=found["what"])


_TOO_LARGE_MESSAGE: Final = re.compile(
    r"The (?P<what>.+) is (?P<size>\d+) bytes, more than the limit of (?P<limit>\d+) bytes; "
    r"nothing of this request was written"
)


# --- references ----------------------------------------------------------------------------------


class RefAlreadyExists(LochkitError):
    """A reference with that name already exists; carries the row as read from the database."""

    def __init__(self, existing: Reference | None, name: str | None = None) -> None:
        self.reference = existing
        self.name = existing.name if existing is not None else name
        super().__init__(f"Reference {self.name} already exists")


class RefNotFound(LochkitError):
    """No row exists for the reference name."""

    def __init__(self, name: str, reference: Reference | None = None) -> None:
        self.name = name
        self.reference = reference
        super().__init__(f"Reference {name} does not exist")


class RefConditionFailed(LochkitError):
    """A conditional reference change did not apply; carries the row currently stored."""

    def __init__(self, current: Reference) -> None:
        self.reference = current
        super().__init__(
            f"Reference {current.name} has changed (now at {current.pointer}"
            f"{', marked deleted' if current.deleted else ''}); re-read it and retry"
        )


# --- outcomes of operations ----------------------------------------------------------------------


class UnknownOperationResult(LochkitError):
    """The database did not say whether a write happened (timeout, throttling, lost connection).

    Retry loops treat this as retryable: every write lochkit issues is conditional, so repeating it
    can never apply it twice.
    """


class RetryTimeout(LochkitError):
    """A bounded retry loop gave up."""

    def __init__(self, retries: int, elapsed_nanos: int) -> None:
        self.retries = retries
        self.elapsed_nanos = elapsed_nanos
        super().__init__(
            f"The operation could not be performed after {retries} retries within "
            f"{elapsed_nanos // 1_000_000} ms; the reference is under heavy contention, try again later"
        )


# --- backends ------------------------------------------------------------------------------------


class BackendError(LochkitError):
    """A backend could not serve a request. Messages name the backend and address, never secrets."""

    def __init__(self, backend: str, address: str, problem: str, fix: str) -> None:
        self.backend = backend
        self.address = address
        self.problem = problem
        self.fix = fix
        super().__init__(f"{backend} at {address}: {problem}. {fix}")


class BackendUnavailable(BackendError, Unreachable):
    """The server is down or unreachable."""


class BackendAuthenticationFailed(BackendError):
    """The server rejected the credentials."""


class BackendPermissionDenied(BackendError):
    """The credentials lack a permission lochkit needs (create tables, write rows...)."""


class BackendSchemaMismatch(BackendError):
    """The existing tables were not created by this version of lochkit."""


class BackendStoreMissing(BackendError):
    """Opening an existing store found none at the address (no directory, database, tables or
    schema of lochkit's); nothing was created there."""


class BackendConfigError(BackendError):
    """The connection settings are invalid (bad URL, unknown option)."""
