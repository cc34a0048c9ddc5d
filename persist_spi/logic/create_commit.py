"""What a caller asks the commit logic to build: a parent, metadata and key operations."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from persist_spi.headers import EMPTY_COMMIT_HEADERS, CommitHeaders
from persist_spi.ids import ObjId
from persist_spi.keys import StoreKey
from persist_spi.objs import CommitType, check_payload


@dataclass(frozen=True)
class Add:
    """Put ``value`` under ``key``. ``expected_value`` None means "the key must not exist"."""

    key: StoreKey
    payload: int
    value: ObjId
    expected_value: ObjId | None = None
    content_id: uuid.UUID | None = None

    def __init__(
        self,
        key: StoreKey,
        payload: int,
        value: ObjId,
        expected_value: ObjId | None = None,
        content_id: uuid.UUID | None = None,
    ) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        check_payload(payload)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "payload", payload)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "expected_value", expected_value)
        object.__setattr__(self, "content_id", content_id)


@dataclass(frozen=True)
class Remove:
    key: StoreKey
    payload: int
    expected_value: ObjId
    content_id: uuid.UUID | None = None

    def __post_init__(self) -> None:
        check_payload(self.payload)


@dataclass(frozen=True)
class Unchanged:
    """A check only: the key still holds ``expected_value`` (or is absent if None)."""

    key: StoreKey
    payload: int
    expected_value: ObjId | None = None
    content_id: uuid.UUID | None = None

    def __post_init__(self) -> None:
        check_payload(self.payload)


@dataclass(frozen=True)
class CreateCommit:
    parent_commit_id: ObjId
    message: str = ""
    headers: CommitHeaders = EMPTY_COMMIT_HEADERS
    secondary_parents: tuple[ObjId, ...] = ()
    commit_type: CommitType = CommitType.NORMAL
    adds: tuple[Add, ...] = field(default=())
    removes: tuple[Remove, ...] = field(default=())
    unchanged: tuple[Unchanged, ...] = field(default=())

    def __init__(
        self,
        parent_commit_id: ObjId,
        message: str = "",
        headers: CommitHeaders = EMPTY_COMMIT_HEADERS,
        secondary_parents: tuple[ObjId, ...] = (),
        commit_type: CommitType = CommitType.NORMAL,
        adds: tuple[Add, ...] = (),
        removes: tuple[Remove, ...] = (),
        unchanged: tuple[Unchanged, ...] = (),
    ) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        object.__setattr__(self, "parent_commit_id", parent_commit_id)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "headers", headers)
        object.__setattr__(self, "secondary_parents", secondary_parents)
        object.__setattr__(self, "commit_type", commit_type)
        object.__setattr__(self, "adds", adds)
        object.__setattr__(self, "removes", removes)
        object.__setattr__(self, "unchanged", unchanged)
