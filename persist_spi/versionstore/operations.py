"""Commit operations and merge behaviours."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from persist_spi.versionstore.content import Content, ContentKey


@dataclass(frozen=True)
class Put:
    """Create (content without id), update (content with the existing id) or rename (with the id of
    content deleted in the same commit)."""

    key: ContentKey
    content: Content


@dataclass(frozen=True)
class Delete:
    key: ContentKey


@dataclass(frozen=True)
class Unchanged:
    """Assert that the key did not change since the commit's expected hash (not persisted)."""

    key: ContentKey


Operation = Put | Delete | Unchanged


class MergeBehavior(enum.Enum):
    NORMAL = "NORMAL"
    FORCE = "FORCE"
    DROP = "DROP"


@dataclass(frozen=True)
class MergeKeyBehavior:
    key: ContentKey
    behavior: MergeBehavior = MergeBehavior.NORMAL
    #: What the caller believes the target holds; checked instead of the merge base's value.
    expected_target_content: Content | None = None
    #: The caller's resolution of a conflict, committed instead of the source's content.
    resolved_content: Content | None = None
