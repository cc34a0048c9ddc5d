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

    def __post_init__(self) -> None:
        check_payload(self.payload)


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
