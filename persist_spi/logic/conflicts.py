"""Key-level commit conflicts and how a caller may resolve them."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from persist_spi.errors import LochkitError
from persist_spi.indexes.elements import CommitOp
from persist_spi.keys import StoreKey


class ConflictType(enum.Enum):
    KEY_EXISTS = "key '{key}' already exists"
    KEY_DOES_NOT_EXIST = "key '{key}' does not exist"
    PAYLOAD_DIFFERS = "payload of existing and expected content for key '{key}' are different"
    CONTENT_ID_DIFFERS = "content IDs of existing and expected content for key '{key}' are different"
    VALUE_DIFFERS = "values of existing and expected content for key '{key}' are different"


class ConflictResolution(enum.Enum):
    #: Record the conflict and leave the operation out (the commit then fails).
    CONFLICT = "conflict"
    #: Leave the operation out silently.
    DROP = "drop"
    #: Keep the operation despite the conflict.
    ADD = "add"


@dataclass(frozen=True)
class CommitConflict:
    key: StoreKey
    conflict_type: ConflictType
    #: The attempted operation (None for an Unchanged check).
    op: CommitOp | None
    #: What the index holds for the key, if anything (lets a client decide how to retry).
    existing: CommitOp | None = None

    def message(self, key_text: str | None = None) -> str:
        return self.conflict_type.value.format(key=key_text if key_text is not None else self.key)


class CommitConflictError(LochkitError):
    def __init__(self, conflicts: Sequence[CommitConflict]) -> None:
        self.conflicts = tuple(conflicts)
        super().__init__(
            "Commit conflict: " + ", ".join(f"{c.conflict_type.name}:{c.key}" for c in self.conflicts)
        )
