"""Version-store errors, with messages a client can show and conflicts a client can act on."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from persist_spi.errors import InputError, LochkitError

if TYPE_CHECKING:
    from persist_spi.versionstore.content import Content, ContentKey


class ConflictType(enum.Enum):
    """Nessie's conflict types; the value formats the conflict's message."""

    UNKNOWN = "{key}"
    #: A key a failed merge or transplant touched without a conflict of its own (Nessie lists
    #: every key of a raised merge or transplant conflict; the others carry this type and the message
    #: "UNKNOWN"; tests/nessie pins both against a real server).
    KEY_CONFLICT = "UNKNOWN"
    KEY_EXISTS = "key '{key}' already exists"
    KEY_DOES_NOT_EXIST = "key '{key}' does not exist"
    PAYLOAD_DIFFERS = "payload of existing and expected content for key '{key}' are different"
    CONTENT_ID_DIFFERS = "content IDs of existing and expected content for key '{key}' are different"
    VALUE_DIFFERS = "values of existing and expected content for key '{key}' are different"
    NAMESPACE_ABSENT = "namespace '{key}' must exist"
    NOT_A_NAMESPACE = (
        "expecting the key '{key}' to be a namespace, but is not a namespace "
        "(using a content object that is not a namespace as a namespace is forbidden)"
    )
    NAMESPACE_NOT_EMPTY = "namespace '{key}' is not empty"
    #: Its conflict names no key (Nessie's); the message names the reference and both hashes.
    UNEXPECTED_HASH = "hash of reference '{key}' is not the expected one"


@dataclass(frozen=True)
class Conflict:
    conflict_type: ConflictType
    key: ContentKey | None
    message: str
    #: The content the key currently holds (on the target), so a client can decide how to retry.
    current: Content | None = None

    @classmethod
    def of(cls, conflict_type: ConflictType, key: Any, current: Content | None = None) -> Conflict:
        return cls(conflict_type, key, conflict_type.value.format(key=key), current)


class ReferenceNotFoundError(LochkitError):
    pass


class ReferenceAlreadyExistsError(LochkitError):
    pass


class ReferenceConflictError(LochkitError):
    """The operation conflicts with the current state; ``conflicts`` says which key and how."""

    #: Attempts the store made before the conflict (set by the version store's retry loop).
    attempts: int = 1

    def __init__(self, conflicts: Sequence[Conflict], message: str | None = None) -> None:
        self.conflicts = tuple(conflicts)
        super().__init__(message if message is not None else conflicts_message(self.conflicts))


class InvalidOperation(ReferenceConflictError, InputError):
    """An operation a commit must never carry (a Put that would re-create existing content, change
    a content id or type...). It is a ValueError and still names the conflict and current content."""


class ContentIdClaimFailed(LochkitError):
    """The backend refused every freshly generated content id: its insert-if-absent is broken."""

    def __init__(self, attempts: int) -> None:
        super().__init__(
            f"The backend reported {attempts} freshly generated random content ids in a row as already "
            "taken. Random 122-bit ids do not collide, so its insert-if-absent reports new objects as "
            "existing; check the adapter's insert_objs (True for every row it inserted)."
        )
        self.attempts = attempts


class ReferenceRetryFailureError(LochkitError):
    """The commit lost every compare-and-swap race within the retry budget."""

    attempts: int = 1


class MergeConflictError(ReferenceConflictError):
    """A merge or transplant whose keys conflict; ``result`` is what it would have done. As in
    Nessie, ``conflicts`` lists every key of the result: a conflicting key with its conflict, any
    other key as ``KEY_CONFLICT``."""

    def __init__(self, message: str, result: Any) -> None:
        self.result = result
        details = getattr(result, "details", {})
        super().__init__(
            [
                d.conflict if d.conflict is not None else Conflict(ConflictType.KEY_CONFLICT, k, "UNKNOWN")
                for k, d in details.items()
            ],
            message,
        )


def unexpected_hash(ref_name: str, expected: Any, actual: Any) -> ReferenceConflictError:
    """A reference is not at the hash the caller expected (Nessie's conflict names no key)."""
    text = f"named-reference '{ref_name}' is not at expected hash '{expected}', but at '{actual}'"
    return ReferenceConflictError(
        [Conflict(ConflictType.UNEXPECTED_HASH, None, text)], text[:1].upper() + text[1:] + "."
    )


def conflicts_message(conflicts: Sequence[Conflict]) -> str:
    if len(conflicts) == 1:
        text = conflicts[0].message
        return text[:1].upper() + text[1:] + "."
    return (
        "There are multiple conflicts that prevent committing the provided operations: "
        + ", ".join(c.message for c in conflicts)
        + "."
    )
