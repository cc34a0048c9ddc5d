"""What version-store reads and writes return."""

from __future__ import annotations

from dataclasses import dataclass, field

from persist_spi.ids import ObjId
from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.errors import Conflict
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import MergeBehavior, Operation
from persist_spi.versionstore.refs import NamedRef


@dataclass(frozen=True)
class CommitResult:
    hash: ObjId
    parent: ObjId
    #: Content ids the store assigned to new content, by key.
    added_content_ids: dict[ContentKey, str] = field(default_factory=dict)
    #: How many attempts the store made (lost compare-and-swap races are retried). Always 1 over
    #: REST: a server's own retries are invisible to its clients. Not part of equality.
    attempts: int = field(default=1, compare=False)


@dataclass(frozen=True)
class ContentsAt:
    """Contents read at one commit, and which commit that was (Nessie's "effective reference"):
    a client commits with that hash as its expected hash."""

    hash: ObjId
    contents: dict[ContentKey, Content]
    #: The reference the read addressed; None for a detached commit.
    reference: NamedRef | None = None


@dataclass(frozen=True)
class KeyEntry:
    key: ContentKey
    payload: int
    content_id: str | None
    content: Content | None = None
    #: Resume a listing at this entry (inclusive).
    paging_token: str = ""


@dataclass(frozen=True)
class LogEntry:
    hash: ObjId
    parent: ObjId
    meta: CommitMeta
    operations: tuple[Operation, ...] | None = None
    paging_token: str = ""


@dataclass(frozen=True)
class Diff:
    key: ContentKey
    from_content: Content | None
    to_content: Content | None
    paging_token: str = ""


@dataclass(frozen=True)
class KeyDetails:
    behavior: MergeBehavior
    conflict: Conflict | None = None


@dataclass
class MergeResult:
    target: NamedRef
    applied: bool = False
    successful: bool = False
    was_dry_run: bool = False
    resultant_target_hash: ObjId | None = None
    common_ancestor: ObjId | None = None
    effective_target_hash: ObjId | None = None
    expected_hash: ObjId | None = None
    created_commits: list[ObjId] = field(default_factory=list)
    details: dict[ContentKey, KeyDetails] = field(default_factory=dict)
