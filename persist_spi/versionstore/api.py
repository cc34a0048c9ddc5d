"""The contract a client of Nessie's version-store model drives.

Load tools, test suites and servers program against :class:`VersionStoreApi`, not against one
implementation. Two satisfy it: :class:`~persist_spi.versionstore.store.VersionStore` (in-process,
over any Persist) and lochkit's Nessie REST API v2 client (any Nessie server). Both take and
return the same model types and raise the same errors:

- :class:`~persist_spi.versionstore.errors.ReferenceNotFoundError` for an unknown reference or
  commit;
- :class:`~persist_spi.versionstore.errors.ReferenceAlreadyExistsError` when creating an existing
  reference;
- :class:`~persist_spi.versionstore.errors.ReferenceConflictError` (with its ``conflicts``) when a
  commit, assign, delete, merge or transplant conflicts with the current state;
- :class:`~persist_spi.versionstore.errors.MergeConflictError` for a merge or transplant whose keys
  conflict (unless ``raise_on_conflict=False``);
- :class:`~persist_spi.versionstore.errors.ReferenceRetryFailureError` when retries ran out;
- :class:`ValueError` for an argument that is wrong in itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from persist_spi.errors import InputError
from persist_spi.headers import CommitHeaders
from persist_spi.ids import ObjId
from persist_spi.versionstore.commit_specs import RelativeSpec
from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import MergeBehavior, MergeKeyBehavior, Operation
from persist_spi.versionstore.refs import NamedRef, ReferenceAssigned, ReferenceInfo, RefKind
from persist_spi.versionstore.results import (
    CommitResult,
    ContentsAt,
    Diff,
    KeyEntry,
    LogEntry,
    MergeResult,
    ReferenceHistory,
    ReferenceMetadata,
)

#: A reference, or a commit hash ("detached").
RefOrHash = NamedRef | ObjId
#: Called with the operations of a commit before it is built; raise to reject the commit.
Validator = Callable[[Sequence[Operation]], None]
#: Called with a merge's or transplant's result once its per-key details are known, before anything
#: is written or a conflict raised, against the target head it was planned on; raise to reject it.
MergeValidator = Callable[[MergeResult], None]


@runtime_checkable
class VersionStoreApi(Protocol):
    """Branches and tags, commits, reads at any reference or commit, log, diff, merge, transplant."""

    # --- references ---

    def default_branch(self) -> str:
        """The name of the repository's default branch."""
        ...

    def named_ref(self, name: str) -> ReferenceInfo:
        """Look a short name up as a branch, then as a tag."""
        ...

    def reference(self, ref: NamedRef) -> ReferenceInfo: ...

    def list_references(
        self, kinds: Sequence[RefKind] = (RefKind.BRANCH, RefKind.TAG)
    ) -> Iterator[ReferenceInfo]: ...

    def create_reference(
        self,
        ref: NamedRef,
        target: ObjId | None = None,
        *,
        message: str | None = None,
        headers: CommitHeaders | None = None,
        signature: bytes | None = None,
    ) -> ReferenceInfo: ...

    def delete_reference(self, ref: NamedRef, expected_hash: ObjId) -> ObjId: ...

    def assign(self, ref: NamedRef, expected_hash: ObjId | None, target: ObjId) -> ReferenceAssigned: ...

    def hash_on_reference(
        self, ref: NamedRef | None, hash_: ObjId | None, relative: Sequence[RelativeSpec] = ()
    ) -> ObjId:
        """The commit a read addresses: the head of ``ref``, a commit in its history, or (without
        a ref) a detached commit that must exist; then the ``relative`` lookups (``~n``, ``^n``,
        ``*timestamp``, see :mod:`persist_spi.versionstore.commit_specs`) from there."""
        ...

    def reference_metadata(self, ref: NamedRef, base: NamedRef | None = None) -> ReferenceMetadata:
        """The head's commit meta and commit count; for a branch other than ``base`` (default: the
        default branch), commits ahead and behind it and the common ancestor."""
        ...

    def reference_history(self, ref: NamedRef, head_commits_to_scan: int | None = None) -> ReferenceHistory:
        """The head and the recorded former heads of ``ref``, each checked for consistency."""
        ...

    # --- commits ---

    def commit(
        self,
        branch: NamedRef,
        expected_hash: ObjId | None,
        meta: CommitMeta,
        operations: Sequence[Operation],
        validator: Validator | None = None,
    ) -> CommitResult: ...

    # --- reads ---

    def get_values(self, where: RefOrHash, keys: Sequence[ContentKey]) -> dict[ContentKey, Content]: ...

    def get_value(self, where: RefOrHash, key: ContentKey) -> Content | None: ...

    def get_contents(self, where: RefOrHash, keys: Sequence[ContentKey]) -> ContentsAt:
        """The contents of ``keys`` and the commit they were read at."""
        ...

    def get_entries(
        self,
        where: RefOrHash,
        *,
        min_key: ContentKey | None = None,
        max_key: ContentKey | None = None,
        prefix_key: ContentKey | None = None,
        key_filter: Callable[[ContentKey], bool] | None = None,
        paging_token: str | None = None,
        with_content: bool = False,
    ) -> Iterator[KeyEntry]: ...

    def get_commits(
        self, where: RefOrHash, *, paging_token: str | None = None, with_operations: bool = False
    ) -> Iterator[LogEntry]: ...

    def get_diffs(
        self,
        from_: RefOrHash,
        to: RefOrHash,
        *,
        min_key: ContentKey | None = None,
        max_key: ContentKey | None = None,
        prefix_key: ContentKey | None = None,
        key_filter: Callable[[ContentKey], bool] | None = None,
        paging_token: str | None = None,
    ) -> Iterator[Diff]: ...

    # --- merge and transplant ---

    def merge(
        self,
        source: RefOrHash,
        target: NamedRef,
        expected_hash: ObjId | None = None,
        *,
        source_hash: ObjId | None = None,
        default_behavior: MergeBehavior = MergeBehavior.NORMAL,
        key_behaviors: Sequence[MergeKeyBehavior] = (),
        dry_run: bool = False,
        meta: CommitMeta | None = None,
        raise_on_conflict: bool = True,
        validator: MergeValidator | None = None,
    ) -> MergeResult: ...

    def transplant(
        self,
        target: NamedRef,
        expected_hash: ObjId | None,
        sequence: Sequence[ObjId],
        *,
        default_behavior: MergeBehavior = MergeBehavior.NORMAL,
        key_behaviors: Sequence[MergeKeyBehavior] = (),
        dry_run: bool = False,
        raise_on_conflict: bool = True,
        message: str | None = None,
        validator: MergeValidator | None = None,
    ) -> MergeResult:
        """``message`` replaces the message of a single transplanted commit."""
        ...


__all__ = ["MergeValidator", "RefOrHash", "Validator", "VersionStoreApi"]


def check_key_range(
    min_key: ContentKey | None, max_key: ContentKey | None, prefix_key: ContentKey | None
) -> None:
    """The key-range arguments of ``get_entries`` and ``get_diffs`` every implementation refuses
    alike (Nessie's message): a prefix with either bound."""
    if prefix_key is not None and (min_key is not None or max_key is not None):
        raise InputError("Combining prefixKey with either minKey or maxKey is not supported.")
