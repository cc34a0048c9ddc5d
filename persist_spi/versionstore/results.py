"""What version-store reads and writes return."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from mypy_extensions import mypyc_attr

from persist_spi.ids import ObjId
from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.errors import Conflict
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import MergeBehavior, Operation
from persist_spi.versionstore.refs import NamedRef


# Compiled in the kernel; subclassed by interpreted classes (adapters' wrappers, tests).
@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(frozen=True)
class CommitResult:
    hash: ObjId
    parent: ObjId
    #: Content ids the store assigned to new content, by key.
    added_content_ids: dict[ContentKey, str] = field(default_factory=dict)
    #: How many attempts the store made (lost compare-and-swap races are retried). Always 1 over
    #: REST: a server's own retries are invisible to its clients. Not part of equality.
    attempts: int = field(default=1, compare=False)
    #: How long each attempt took (ns), first attempt first; empty over REST. Benchmarks report
    #: first attempts and retries apart from this. Not part of equality.
    attempt_nanos: tuple[int, ...] = field(default=(), compare=False)

    def __init__(
        self,
        hash: ObjId,
        parent: ObjId,
        added_content_ids: dict[ContentKey, str] | None = None,
        attempts: int = 1,
        attempt_nanos: tuple[int, ...] = (),
    ) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        object.__setattr__(self, "hash", hash)
        object.__setattr__(self, "parent", parent)
        object.__setattr__(self, "added_content_ids", {} if added_content_ids is None else added_content_ids)
        object.__setattr__(self, "attempts", attempts)
        object.__setattr__(self, "attempt_nanos", attempt_nanos)


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


@dataclass(frozen=True)
class ReferenceMetadata:
    """What Nessie returns for a reference with ``fetch=ALL``: the head's commit meta and, for a
    branch other than the base (the default branch), how it relates to the base."""

    head_meta: CommitMeta | None = None
    #: The head commit's sequence number: commits on its first-parent chain.
    total_commits: int = 0
    #: Commits on the reference since the common ancestor (None for the base itself and for tags).
    commits_ahead: int | None = None
    #: Commits on the base since the common ancestor.
    commits_behind: int | None = None
    #: The newest commit both share; the empty commit when they share none.
    common_ancestor: ObjId | None = None


class CommitConsistency(enum.Enum):
    """Whether a commit and everything it needs can be read (Nessie's names)."""

    NOT_CHECKED = "NOT_CHECKED"
    COMMIT_CONSISTENT = "COMMIT_CONSISTENT"
    #: The commit is there, but some content value its index names is missing.
    COMMIT_CONTENT_INCONSISTENT = "COMMIT_CONTENT_INCONSISTENT"
    #: The commit or one of its index objects is missing.
    COMMIT_INCONSISTENT = "COMMIT_INCONSISTENT"


@dataclass(frozen=True)
class ReferenceHistoryEntry:
    hash: ObjId
    consistency: CommitConsistency
    #: None for the empty commit and for a commit that cannot be read.
    meta: CommitMeta | None = None


@dataclass(frozen=True)
class ReferenceHistory:
    """A reference's current head and its recorded former heads (newest first), each checked for
    consistency; ``log_consistency`` covers commits below the head when asked for."""

    reference: NamedRef
    current: ReferenceHistoryEntry
    previous: tuple[ReferenceHistoryEntry, ...]
    log_consistency: CommitConsistency = CommitConsistency.NOT_CHECKED
