"""The version store: branches and tags, commits, reads at any reference or commit, log and diff.
Merge and transplant live in :mod:`persist_spi.versionstore.merging`."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from persist_spi.errors import (
    ObjNotFound,
    RefAlreadyExists,
    RefConditionFailed,
    RefNotFound,
    RetryTimeout,
    UnknownOperationResult,
)
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.elements import CommitOp
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.keys import StoreKey, starts_with_elements_or_parts
from persist_spi.logic.commit_logic import (
    CommitLogic,
    CommitNotFound,
    ConflictHandler,
    DiffEntry,
    LoadedParent,
    ValueReplacement,
    report_conflict,
)
from persist_spi.logic.conflicts import CommitConflict, CommitConflictError
from persist_spi.logic.create_commit import CreateCommit
from persist_spi.logic.outcomes import commit_in_history
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.logic.retry import RetryNeeded, commit_retry
from persist_spi.objs import CommitObj, ContentValueObj, tag_obj
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.committing import CommitState, check_value_sizes, decode_value, prepare_commit
from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.errors import (
    Conflict,
    ConflictType,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    ReferenceRetryFailureError,
)
from persist_spi.versionstore.keymap import from_store_key, store_key_max, store_key_min, to_store_key
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.namespaces import namespace_conflicts
from persist_spi.versionstore.operations import Delete, Operation, Put
from persist_spi.versionstore.refs import NamedRef, ReferenceAssigned, ReferenceInfo, RefKind, from_full_name
from persist_spi.versionstore.results import CommitResult, Diff, KeyEntry, LogEntry, MergeResult

T = TypeVar("T")
#: Called with the operations of a commit before it is built; raise to reject the commit.
Validator = Callable[[Sequence[Operation]], None]
#: A reference, or a commit hash ("detached").
RefOrHash = NamedRef | ObjId
FETCH_BATCH = 50


class VersionStore:
    def __init__(self, persist: Persist) -> None:
        self.persist = persist
        self.commits = CommitLogic(persist)
        self.refs = ReferenceLogic(persist)
        self.repository = RepositoryLogic(persist)

    # --- references ------------------------------------------------------------------------------

    def named_ref(self, name: str) -> ReferenceInfo:
        """Look a short name up as a branch, then as a tag."""
        found = self.refs.get_references([RefKind.BRANCH.value + name, RefKind.TAG.value + name])
        for row in found:
            if row is not None:
                return self._info(row)
        raise ReferenceNotFoundError(f"Named reference '{name}' not found")

    def reference(self, ref: NamedRef) -> ReferenceInfo:
        try:
            return self._info(self.refs.get_reference(ref.full_name))
        except RefNotFound:
            raise ReferenceNotFoundError(f"Named reference '{ref.name}' not found") from None

    def list_references(
        self, kinds: Sequence[RefKind] = (RefKind.BRANCH, RefKind.TAG)
    ) -> Iterator[ReferenceInfo]:
        for kind in kinds:
            for row in self.refs.query_references(kind.value):
                yield self._info(row)

    def create_reference(
        self,
        ref: NamedRef,
        target: ObjId | None = None,
        *,
        message: str | None = None,
        headers: CommitHeaders | None = None,
        signature: bytes | None = None,
    ) -> ReferenceInfo:
        """Create a branch or tag at ``target`` (default: the empty commit). Tags may carry a
        message, headers and a signature (kept in a TagObj the reference points to as extended info)."""
        target = EMPTY_OBJ_ID if target is None else target
        self._check_commit_exists(target)
        other = RefKind.TAG if ref.kind is RefKind.BRANCH else RefKind.BRANCH
        if self.refs.get_references([other.value + ref.name])[0] is not None:
            raise ReferenceAlreadyExistsError(
                f"Named reference '{ref.name}' already exists as a {other.name.lower()}"
            )
        extended: ObjId | None = None
        if ref.kind is RefKind.TAG and (message is not None or headers is not None or signature is not None):
            info = tag_obj(message, headers, signature)
            self.persist.store_obj(info)
            extended = info.id
        elif message is not None or headers is not None or signature is not None:
            raise ValueError("Only tags carry a message, headers or a signature")
        try:
            return self._info(self.refs.create_reference(ref.full_name, target, extended))
        except RefAlreadyExists:
            raise ReferenceAlreadyExistsError(f"Named reference '{ref.name}' already exists") from None

    def delete_reference(self, ref: NamedRef, expected_hash: ObjId) -> ObjId:
        try:
            self.refs.delete_reference(ref.full_name, expected_hash)
        except RefNotFound:
            raise ReferenceNotFoundError(f"Named reference '{ref.name}' not found") from None
        except RefConditionFailed as e:
            raise ReferenceConflictError(
                [Conflict.of(ConflictType.UNEXPECTED_HASH, ref.name)],
                f"Named-reference '{ref.name}' is not at expected hash '{expected_hash}', but at "
                f"'{e.reference.pointer}'.",
            ) from None
        return expected_hash

    def assign(self, ref: NamedRef, expected_hash: ObjId | None, target: ObjId) -> ReferenceAssigned:
        current = self._row(ref, for_update=True)
        if expected_hash is not None and current.pointer != expected_hash:
            raise self._unexpected_hash(ref, expected_hash, current.pointer)
        self._check_commit_exists(target)
        try:
            self.refs.assign_reference(current, target)
        except RefConditionFailed as e:
            raise self._unexpected_hash(ref, expected_hash or current.pointer, e.reference.pointer) from None
        except RefNotFound:
            raise ReferenceNotFoundError(f"Named reference '{ref.name}' not found") from None
        return ReferenceAssigned(ref, current.pointer, target)

    def hash_on_reference(self, ref: NamedRef | None, hash_: ObjId | None) -> ObjId:
        """The commit a read addresses: the head of ``ref``, a commit in its history, or (without
        a ref) a detached commit that must exist."""
        if ref is None:
            if hash_ is None:
                raise ValueError("Give a reference, a hash, or both")
            self._check_commit_exists(hash_)
            return hash_
        head = self._row(ref).pointer
        if hash_ is None or hash_ == head:
            return head
        self._find_in_history(ref, head, hash_)
        return hash_

    def _resolve(self, where: RefOrHash) -> ObjId:
        return (
            self.hash_on_reference(where, None)
            if isinstance(where, NamedRef)
            else self.hash_on_reference(None, where)
        )

    # --- commits ---------------------------------------------------------------------------------

    def commit(
        self,
        branch: NamedRef,
        expected_hash: ObjId | None,
        meta: CommitMeta,
        operations: Sequence[Operation],
        validator: Validator | None = None,
    ) -> CommitResult:
        """Commit ``operations`` on ``branch``. The commit is built on the current head; it is
        rejected only when a key it touches changed since ``expected_hash`` (default: the head)."""
        if branch.kind is not RefKind.BRANCH:
            raise ValueError(f"Can only commit to a branch, not to tag '{branch.name}'")
        check_value_sizes(self.persist, operations)
        state = CommitState()

        def attempt(_: object) -> CommitResult:
            ref = self._row(branch, for_update=True)
            head_id = ref.pointer
            expected_id = expected_hash if expected_hash is not None else head_id
            if expected_id != head_id:
                self._find_in_history(branch, head_id, expected_id)
            head_commit = self.commits.fetch_commit(head_id)
            head_index = self.commits.indexes.build_complete_index_or_empty(head_commit)
            reference = head_index.reference if isinstance(head_index, LayeredIndex) else None
            expected_index = (
                head_index if expected_id == head_id else self.commits.complete_index_of(expected_id)
            )
            prepared = prepare_commit(
                self.persist,
                operations,
                expected_index,
                head_index,
                expected_id == head_id,
                state,
                self._content_for_op,
            )
            if self.persist.config.namespace_validation:
                conflicts = namespace_conflicts(
                    head_index, prepared.created_keys, prepared.added_namespaces, prepared.deleted
                )
                if conflicts:
                    raise ReferenceConflictError(conflicts)
            if validator is not None:
                validator(operations)
            create = CreateCommit(
                parent_commit_id=head_id,
                message=meta.message,
                headers=meta.to_headers(datetime.datetime.now(datetime.UTC)),
                adds=tuple(prepared.adds),
                removes=tuple(prepared.removes),
                unchanged=tuple(prepared.unchanged),
            )
            commit = self._build(create, loaded_parent=LoadedParent(head_commit, reference))
            stored = self.commits.store_commit(commit, prepared.objects)
            if stored.commit is None:
                raise RuntimeError(f"Hash collision detected for commit {commit.id}")
            state.stored.update(o.id for o in prepared.objects)
            self._move_branch(ref, stored.commit.id)
            return CommitResult(stored.commit.id, head_id, dict(prepared.new_content_ids))

        return self._with_retries(attempt)

    def _build(
        self,
        create: CreateCommit,
        conflict_handler: ConflictHandler = report_conflict,
        expected_value_replacement: ValueReplacement | None = None,
        committed_value_replacement: ValueReplacement | None = None,
        logic: CommitLogic | None = None,
        loaded_parent: LoadedParent | None = None,
    ) -> CommitObj:
        """Build a commit; key conflicts become a ReferenceConflictError naming the current content."""
        logic = logic if logic is not None else self.commits
        try:
            return logic.build_commit_obj(
                create,
                conflict_handler,
                expected_value_replacement=expected_value_replacement,
                committed_value_replacement=committed_value_replacement,
                loaded_parent=loaded_parent,
            )
        except CommitConflictError as e:
            raise ReferenceConflictError(self._conflicts(e.conflicts)) from None

    def _move_branch(self, ref: Reference, new_head: ObjId) -> None:
        """Compare-and-swap the branch; a lost race retries the whole attempt on the new head."""
        try:
            self.persist.update_reference_pointer(ref, new_head)
        except RefConditionFailed:
            raise RetryNeeded() from None
        except UnknownOperationResult:
            # The write may have happened. If it did, our commit is in the branch's history, at
            # its head or (when others committed on top since) below it.
            now = self.persist.fetch_reference_for_update(ref.name)
            if now is None or not commit_in_history(self.commits, now.pointer, new_head):
                raise RetryNeeded() from None

    def _with_retries(self, attempt: Callable[[object], T]) -> T:
        try:
            return commit_retry(self.persist.config, attempt)
        except RetryTimeout as e:
            raise ReferenceRetryFailureError(
                f"The commit operation could not be performed after {e.retries} retries within the "
                f"configured commit timeout after {e.elapsed_nanos // 1_000_000} ms"
            ) from e

    def _conflicts(self, conflicts: Sequence[CommitConflict]) -> list[Conflict]:
        existing = [c.existing for c in conflicts]
        contents = self._contents_for_ops(existing)
        result = []
        for conflict, current in zip(conflicts, contents, strict=True):
            key = from_store_key(conflict.key)
            conflict_type = ConflictType[conflict.conflict_type.name]
            result.append(Conflict.of(conflict_type, key if key is not None else conflict.key, current))
        return result

    # --- reads -----------------------------------------------------------------------------------

    def get_values(self, where: RefOrHash, keys: Sequence[ContentKey]) -> dict[ContentKey, Content]:
        index = self.commits.complete_index_of(self._resolve(where))
        store_keys = [to_store_key(k) for k in keys]
        index.load_if_necessary(store_keys)
        ops: list[tuple[ContentKey, CommitOp]] = []
        for key, store_key in zip(keys, store_keys, strict=True):
            element = index.get(store_key)
            if element is not None and element.op.exists:
                ops.append((key, element.op))
        contents = self._contents_for_ops([op for _, op in ops])
        return {key: content for (key, _), content in zip(ops, contents, strict=True) if content is not None}

    def get_value(self, where: RefOrHash, key: ContentKey) -> Content | None:
        return self.get_values(where, [key]).get(key)

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
    ) -> Iterator[KeyEntry]:
        """Live content keys in key order, optionally with their content (fetched in batches)."""
        if prefix_key is not None and (min_key is not None or max_key is not None):
            raise ValueError("Combining prefixKey with either minKey or maxKey is not supported.")
        index = self.commits.complete_index_of(self._resolve(where))
        begin, end = _key_range(min_key, max_key, prefix_key, paging_token)
        if begin is not None and end is not None and begin > end:
            return
        prefix = store_key_min(prefix_key) if prefix_key is not None else None
        batch: list[tuple[ContentKey, str, CommitOp]] = []
        for element in index.iterate(begin, end):
            if prefix is not None and not starts_with_elements_or_parts(element.key, prefix):
                if element.key > prefix:
                    break
                continue
            if not element.op.exists:
                continue
            key = from_store_key(element.key)
            if key is None or (key_filter is not None and not key_filter(key)):
                continue
            batch.append((key, element.key, element.op))
            if len(batch) == FETCH_BATCH:
                yield from self._entries(batch, with_content)
                batch = []
        yield from self._entries(batch, with_content)

    def _entries(
        self, batch: list[tuple[ContentKey, str, CommitOp]], with_content: bool
    ) -> Iterator[KeyEntry]:
        contents = self._contents_for_ops([op for _, _, op in batch]) if with_content else [None] * len(batch)
        for (key, raw, op), content in zip(batch, contents, strict=True):
            yield KeyEntry(
                key, op.payload, str(op.content_id) if op.content_id else None, content, raw.encode().hex()
            )

    def get_commits(
        self, where: RefOrHash, *, paging_token: str | None = None, with_operations: bool = False
    ) -> Iterator[LogEntry]:
        """First-parent history, newest first; resume at a page's token (a commit hash, inclusive)."""
        start = self._resolve(where)
        if paging_token:
            start = ObjId.from_hex(paging_token)
        try:
            for commit in self.commits.commit_log(start):
                yield self._log_entry(commit, with_operations)
        except CommitNotFound as e:
            raise ReferenceNotFoundError(str(e)) from None

    def _log_entry(self, commit: CommitObj, with_operations: bool) -> LogEntry:
        parents = (commit.direct_parent, *commit.secondary_parents)
        meta = CommitMeta.from_commit(
            commit.message, commit.headers, str(commit.id), tuple(str(p) for p in parents)
        )
        operations: tuple[Operation, ...] | None = None
        if with_operations:
            ops = self.commits.indexes.commit_operations(commit)
            adds = [e for e in ops if e.op.exists]
            contents = self._contents_for_ops([e.op for e in adds])
            by_key = {e.key: c for e, c in zip(adds, contents, strict=True)}
            built: list[Operation] = []
            for element in ops:
                key = from_store_key(element.key)
                if key is None:
                    continue
                content = by_key.get(element.key)
                built.append(Put(key, content) if element.op.exists and content is not None else Delete(key))
            operations = tuple(built)
        return LogEntry(commit.id, commit.direct_parent, meta, operations, str(commit.id))

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
    ) -> Iterator[Diff]:
        """Keys whose content differs between two references or commits, in key order."""
        if prefix_key is not None and (min_key is not None or max_key is not None):
            raise ValueError("Combining prefixKey with either minKey or maxKey is not supported.")
        from_index = self.commits.complete_index_of(self._resolve(from_))
        to_index = self.commits.complete_index_of(self._resolve(to))
        begin, end = _key_range(min_key, max_key, prefix_key, paging_token)
        if begin is not None and end is not None and begin > end:
            return
        prefix = store_key_min(prefix_key) if prefix_key is not None else None

        def wanted(store_key: StoreKey) -> bool:
            if prefix is not None and not starts_with_elements_or_parts(store_key, prefix):
                return False
            key = from_store_key(store_key)
            return key is not None and (key_filter is None or key_filter(key))

        batch = []
        for entry in self.commits.diff(from_index, to_index, begin, end, wanted):
            batch.append(entry)
            if len(batch) == FETCH_BATCH:
                yield from self._diffs(batch)
                batch = []
        yield from self._diffs(batch)

    def _diffs(self, batch: list[DiffEntry]) -> Iterator[Diff]:
        contents = self._contents_for_ops([op for e in batch for op in (e.from_op, e.to_op)])
        for i, entry in enumerate(batch):
            key = from_store_key(entry.key)
            assert key is not None
            yield Diff(key, contents[2 * i], contents[2 * i + 1], entry.key.encode().hex())

    # --- merge and transplant --------------------------------------------------------------------

    def merge(
        self, source: RefOrHash, target: NamedRef, expected_hash: ObjId | None = None, **options: Any
    ) -> MergeResult:
        """Squash the source's changes since the merge base into one commit on ``target``; see
        :meth:`persist_spi.versionstore.merging.Merger.merge` for the options."""
        from persist_spi.versionstore.merging import Merger

        return Merger(self).merge(source, target, expected_hash, **options)

    def transplant(
        self, target: NamedRef, expected_hash: ObjId | None, sequence: Sequence[ObjId], **options: Any
    ) -> MergeResult:
        """Replay contiguous commits one by one on ``target``; see
        :meth:`persist_spi.versionstore.merging.Merger.transplant` for the options."""
        from persist_spi.versionstore.merging import Merger

        return Merger(self).transplant(target, expected_hash, sequence, **options)

    # --- helpers ---------------------------------------------------------------------------------

    def _content_for_op(self, op: CommitOp) -> Content | None:
        return self._contents_for_ops([op])[0]

    def _contents_for_ops(self, ops: Sequence[CommitOp | None]) -> list[Content | None]:
        ids = [op.value if op is not None and op.exists else None for op in ops]
        objs = self.persist.fetch_all_if_exist_as(ids, ContentValueObj)
        return [decode_value(o) if o is not None else None for o in objs]

    def _row(self, ref: NamedRef, for_update: bool = False) -> Reference:
        try:
            if for_update:
                return self.refs.get_reference_for_update(ref.full_name)
            return self.refs.get_reference(ref.full_name)
        except RefNotFound:
            raise ReferenceNotFoundError(f"Named reference '{ref.name}' not found") from None

    def _info(self, row: Reference) -> ReferenceInfo:
        named = from_full_name(row.name)
        if named is None:
            raise ValueError(f"{row.name} is neither a branch nor a tag")
        return ReferenceInfo(named, row.pointer, row.created_at_micros, row.extended_info_obj)

    def _check_commit_exists(self, commit_id: ObjId) -> None:
        if commit_id == EMPTY_OBJ_ID:
            return
        try:
            self.commits.fetch_commit(commit_id)
        except ObjNotFound:
            raise ReferenceNotFoundError(f"Commit '{commit_id}' not found") from None

    def _find_in_history(self, ref: NamedRef, head: ObjId, wanted: ObjId) -> None:
        if wanted == EMPTY_OBJ_ID:
            return
        for commit_id in self.commits.commit_id_log(head):
            if commit_id == wanted:
                return
        raise ReferenceNotFoundError(f"Could not find commit '{wanted}' in reference '{ref.name}'.")

    def _unexpected_hash(self, ref: NamedRef, expected: ObjId, actual: ObjId) -> ReferenceConflictError:
        return ReferenceConflictError(
            [Conflict.of(ConflictType.UNEXPECTED_HASH, ref.name)],
            f"Named-reference '{ref.name}' is not at expected hash '{expected}', but at '{actual}'.",
        )


def _key_range(
    min_key: ContentKey | None, max_key: ContentKey | None, prefix_key: ContentKey | None, token: str | None
) -> tuple[StoreKey | None, StoreKey | None]:
    begin: StoreKey | None = None
    end: StoreKey | None = None
    if prefix_key is not None:
        begin = store_key_min(prefix_key)
    if min_key is not None:
        begin = store_key_min(min_key)
    if max_key is not None:
        end = store_key_max(max_key)
    if token:
        try:
            begin = StoreKey(bytes.fromhex(token).decode("utf-8"))
        except ValueError:
            raise ValueError(
                f"Invalid paging token '{token}': expected the hex text a listing returned"
            ) from None
    return begin, end


__all__ = ["VersionStore"]
