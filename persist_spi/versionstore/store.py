"""The version store: branches and tags, commits, reads at any reference or commit, log and diff.

Merge and transplant live in :mod:`persist_spi.versionstore.merging`. What the store and the
merger share has its own modules, which neither of them is imported by: names and hashes to rows
and commits (:mod:`~persist_spi.versionstore.ref_mapping`), content values to content
(:mod:`~persist_spi.versionstore.content_mapping`), and building commits and moving branches
(:mod:`~persist_spi.versionstore.commit_helper`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

from mypy_extensions import mypyc_attr

from persist_spi.errors import InputError, LochkitError, RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.elements import CommitOp
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.keys import StoreKey, key_less, starts_with_elements_or_parts
from persist_spi.logic.commit_builder import LoadedParent
from persist_spi.logic.commit_lease import remove_free_lease
from persist_spi.logic.commit_logic import CommitLogic, DiffEntry
from persist_spi.logic.create_commit import CreateCommit
from persist_spi.logic.errors import CommitNotFound
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.objs import CommitObj, tag_obj
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.api import (
    MergeValidator,
    RefOrHash,
    Validator,
    VersionStoreApi,
    check_key_range,
)
from persist_spi.versionstore.commit_helper import CommitHelper
from persist_spi.versionstore.commit_specs import RelativeSpec
from persist_spi.versionstore.committing import CommitState, check_value_sizes, prepare_commit
from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.content_mapping import ContentMapping
from persist_spi.versionstore.errors import (
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    unexpected_hash,
)
from persist_spi.versionstore.keymap import from_store_key, store_key_max, store_key_min, to_store_key
from persist_spi.versionstore.known_heads import known_heads_of
from persist_spi.versionstore.merging import Merger
from persist_spi.versionstore.meta import CommitMeta, commit_meta_of
from persist_spi.versionstore.namespaces import namespace_conflicts
from persist_spi.versionstore.operations import Delete, MergeBehavior, MergeKeyBehavior, Operation, Put
from persist_spi.versionstore.policies import CommitPolicy, shared_policy
from persist_spi.versionstore.policies.base import BuiltCommit, CommitRequest
from persist_spi.versionstore.ref_details import reference_history, reference_metadata
from persist_spi.versionstore.ref_mapping import RefMapping, reference_info, reference_not_found
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
from persist_spi.versionstore.sources import DEFAULT_SOURCES, StoreSources

FETCH_BATCH = 50


# Compiled in the kernel; subclassed by interpreted classes (adapters' wrappers, tests).
@mypyc_attr(allow_interpreted_subclasses=True)
class VersionStore:
    """Nessie's version store over a Persist. It satisfies
    :class:`~persist_spi.versionstore.api.VersionStoreApi`, the contract load tools and the REST
    client share."""

    def __init__(
        self,
        persist: Persist,
        *,
        sources: StoreSources = DEFAULT_SOURCES,
        default_branch: str | None = None,
        transplant_commit_time: bool = True,
        policy: CommitPolicy | None = None,
    ) -> None:
        self.persist = persist
        #: Commit times and new content ids (seeded ones make runs reproducible).
        self.sources = sources
        #: A transplanted commit gets a new commit time, so replaying always writes a new commit,
        #: as Nessie's REST API does. False keeps the source's metadata whole, as Nessie's version
        #: store does when called without a metadata rewriter: replaying commits onto their own
        #: base then gives the same ids (a fast-forward).
        self.transplant_commit_time = transplant_commit_time
        self.commits = CommitLogic(persist)
        self.refs = ReferenceLogic(persist)
        self.repository = RepositoryLogic(persist)
        #: Branch rows as this process last read or moved them (shared by the stores of one Persist).
        self.known_heads = known_heads_of(persist)
        self._default_branch = default_branch
        #: How commits land on a branch: ``policy``, else the store config's ``commit-policy``
        #: (one policy object per Persist and name, so stores sharing a Persist coordinate).
        self.policy = policy if policy is not None else shared_policy(persist, persist.config.commit_policy)
        self.contents = ContentMapping(persist)
        self.ref_mapping = RefMapping(self.refs, self.commits)
        self.helper = CommitHelper(persist, self.commits, self.known_heads, self.contents)

    def default_branch(self) -> str:
        """The repository's default branch: as given, else from the repository description."""
        if self._default_branch is None:
            description = self.repository.fetch_repository_description()
            self._default_branch = description.default_branch_name if description is not None else "main"
        return self._default_branch

    # --- references ------------------------------------------------------------------------------

    def named_ref(self, name: str) -> ReferenceInfo:
        """Look a short name up as a branch, then as a tag."""
        found = self.refs.get_references([RefKind.BRANCH.value + name, RefKind.TAG.value + name])
        for row in found:
            if row is not None:
                return reference_info(row)
        raise reference_not_found(name)

    def reference(self, ref: NamedRef) -> ReferenceInfo:
        try:
            return reference_info(self.refs.get_reference(ref.full_name))
        except RefNotFound:
            raise reference_not_found(ref.name) from None

    def list_references(
        self, kinds: Sequence[RefKind] = (RefKind.BRANCH, RefKind.TAG)
    ) -> Iterator[ReferenceInfo]:
        for kind in kinds:
            for row in self.refs.query_references(kind.value):
                yield reference_info(row)

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
        self.ref_mapping.check_commit_exists(target)
        other = RefKind.TAG if ref.kind is RefKind.BRANCH else RefKind.BRANCH
        if self.refs.get_references([other.value + ref.name])[0] is not None:
            raise ReferenceAlreadyExistsError(f"Named reference '{ref.name}' already exists.")
        extended: ObjId | None = None
        if ref.kind is RefKind.TAG and (message is not None or headers is not None or signature is not None):
            info = tag_obj(message, headers, signature)
            self.persist.store_obj(info)
            extended = info.id
        elif message is not None or headers is not None or signature is not None:
            raise InputError("Only tags carry a message, headers or a signature")
        self.known_heads.forget(ref.full_name)
        try:
            return reference_info(self.refs.create_reference(ref.full_name, target, extended))
        except RefAlreadyExists:
            raise ReferenceAlreadyExistsError(f"Named reference '{ref.name}' already exists.") from None

    def delete_reference(self, ref: NamedRef, expected_hash: ObjId) -> ObjId:
        self.known_heads.forget(ref.full_name)
        try:
            self.refs.delete_reference(ref.full_name, expected_hash)
        except RefNotFound:
            raise reference_not_found(ref.name) from None
        except RefConditionFailed as e:
            raise unexpected_hash(ref.name, expected_hash, e.reference.pointer) from None
        if ref.kind is RefKind.BRANCH:
            # The coordinated policy's lease row would otherwise outlive every deleted branch. The
            # branch is gone either way: a lease left behind is harmless, so failing to remove it
            # must not fail the delete.
            with contextlib.suppress(LochkitError):
                remove_free_lease(self.persist, ref.full_name)
        return expected_hash

    def assign(self, ref: NamedRef, expected_hash: ObjId | None, target: ObjId) -> ReferenceAssigned:
        current = self.ref_mapping.row(ref, for_update=True)
        if expected_hash is not None and current.pointer != expected_hash:
            raise unexpected_hash(ref.name, expected_hash, current.pointer)
        self.ref_mapping.check_commit_exists(target)
        self.known_heads.forget(ref.full_name)
        try:
            self.refs.assign_reference(current, target)
        except RefConditionFailed as e:
            raise unexpected_hash(ref.name, expected_hash or current.pointer, e.reference.pointer) from None
        except RefNotFound:
            raise reference_not_found(ref.name) from None
        return ReferenceAssigned(ref, current.pointer, target)

    def hash_on_reference(
        self, ref: NamedRef | None, hash_: ObjId | None, relative: Sequence[RelativeSpec] = ()
    ) -> ObjId:
        """The commit a read addresses: the head of ``ref``, a commit in its history, or (without
        a ref) a detached commit that must exist; then ``relative`` lookups from there (see
        :mod:`persist_spi.versionstore.commit_specs`)."""
        return self.ref_mapping.hash_on_reference(ref, hash_, relative)

    def reference_metadata(self, ref: NamedRef, base: NamedRef | None = None) -> ReferenceMetadata:
        """The head's commit meta and commit count; for a branch other than ``base`` (default: the
        default branch), the commits ahead and behind it and their common ancestor."""
        head = self.ref_mapping.row(ref).pointer
        base = base if base is not None else NamedRef(self.default_branch(), RefKind.BRANCH)
        base_row = self.refs.get_references([base.full_name])[0]
        base_head = base_row.pointer if base_row is not None else None
        return reference_metadata(self.commits, ref, head, base, base_head)

    def reference_history(self, ref: NamedRef, head_commits_to_scan: int | None = None) -> ReferenceHistory:
        """The reference's head and its recorded former heads, each checked for consistency."""
        return reference_history(self.persist, ref, self.ref_mapping.row(ref), head_commits_to_scan)

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
        rejected only when a key it touches changed since ``expected_hash`` (default: the head).
        How it lands (retries, waiting, grouping) is the store's :attr:`policy`."""
        if branch.kind is not RefKind.BRANCH:
            raise InputError("Reference to commit into must be a branch.")
        check_value_sizes(self.persist, operations)
        return self.policy.commit(self, CommitRequest(branch, expected_hash, meta, operations, validator))

    # --- what commit policies ask of the store (policies.base.Committer) -------------------------

    def read_branch(self, branch: NamedRef) -> Reference:
        row = self.ref_mapping.row(branch, for_update=True)
        self.known_heads.remember(row)
        return row

    def known_branch(self, branch: NamedRef) -> Reference | None:
        return self.known_heads.get(branch.full_name)

    def build_on(
        self,
        request: CommitRequest,
        state: CommitState,
        head: Reference,
        *,
        parent: CommitObj | None = None,
        store: bool = True,
    ) -> BuiltCommit:
        """Validate ``request`` and store its commit on ``parent`` (default: the branch head), not
        yet moving the branch. A parent other than the head is a commit of the same group, not yet
        on the branch. With ``store=False`` nothing is written: the commit and the objects it
        needs are returned for the caller to store."""
        head_id = head.pointer
        tip_id = head_id if parent is None else parent.id
        expected_id = request.expected_hash if request.expected_hash is not None else tip_id
        if expected_id not in (tip_id, head_id):
            self.ref_mapping.find_in_history(request.branch, head_id, expected_id)
        tip_commit = self.commits.fetch_commit(head_id) if parent is None else parent
        tip_index = self.commits.indexes.build_complete_index_or_empty(tip_commit)
        reference = tip_index.reference if isinstance(tip_index, LayeredIndex) else None
        expected_index = tip_index if expected_id == tip_id else self.commits.complete_index_of(expected_id)
        prepared = prepare_commit(
            self.persist,
            request.operations,
            expected_index=expected_index,
            head_index=tip_index,
            expected_is_head=expected_id == tip_id,
            state=state,
            current_content=self.contents.content_for_op,
            new_content_id=self.sources.new_content_id,
        )
        if self.persist.config.namespace_validation:
            conflicts = namespace_conflicts(
                tip_index, prepared.created_keys, prepared.added_namespaces, prepared.deleted
            )
            if conflicts:
                raise ReferenceConflictError(conflicts)
        if request.validator is not None:
            request.validator(request.operations)
        create = CreateCommit(
            parent_commit_id=tip_id,
            message=request.meta.message,
            headers=request.meta.to_headers(self.sources.now()),
            adds=tuple(prepared.adds),
            removes=tuple(prepared.removes),
            unchanged=tuple(prepared.unchanged),
        )
        commit = self.helper.build(create, loaded_parent=LoadedParent(tip_commit, reference))
        if not store:
            result = CommitResult(commit.id, tip_id, dict(prepared.new_content_ids))
            return BuiltCommit(commit, result, tuple(prepared.objects))
        stored = self.commits.store_commit(commit, prepared.objects)
        if stored.commit is None:
            raise RuntimeError(f"Hash collision detected for commit {commit.id}")
        state.stored.update(o.id for o in prepared.objects)
        return BuiltCommit(
            stored.commit, CommitResult(stored.commit.id, tip_id, dict(prepared.new_content_ids))
        )

    def move_branch(self, ref: Reference, new_head: ObjId) -> None:
        self.helper.move_branch(ref, new_head)

    def store_and_move_branch(self, ref: Reference, built: BuiltCommit, state: CommitState) -> None:
        self.helper.store_and_move_branch(ref, built.commit, built.objects, state.stored)

    def prepare_values(self, request: CommitRequest, state: CommitState) -> None:
        """Claim the request's new content ids and store its content values, as of the branch
        head, ahead of building the commit: ``group`` has every caller do this in its own thread,
        so its leader only builds and stores the commits. A request that does not validate here is
        left for the build to report."""
        head = self.read_branch(request.branch)
        index = self.commits.indexes.build_complete_index_or_empty(self.commits.fetch_commit(head.pointer))
        try:
            prepared = prepare_commit(
                self.persist,
                request.operations,
                expected_index=index,
                head_index=index,
                expected_is_head=True,
                state=state,
                current_content=self.contents.content_for_op,
                new_content_id=self.sources.new_content_id,
            )
        except InputError:
            return
        if prepared.objects:
            self.persist.store_objs(prepared.objects)
            state.stored.update(o.id for o in prepared.objects)

    # --- reads -----------------------------------------------------------------------------------

    def get_values(self, where: RefOrHash, keys: Sequence[ContentKey]) -> dict[ContentKey, Content]:
        index = self.commits.complete_index_of(self.ref_mapping.resolve(where))
        store_keys = [to_store_key(k) for k in keys]
        index.load_if_necessary(store_keys)
        ops: list[tuple[ContentKey, CommitOp]] = []
        for key, store_key in zip(keys, store_keys, strict=True):
            element = index.get(store_key)
            if element is not None and element.op.exists:
                ops.append((key, element.op))
        contents = self.contents.contents_for_ops([op for _, op in ops])
        return {key: content for (key, _), content in zip(ops, contents, strict=True) if content is not None}

    def get_value(self, where: RefOrHash, key: ContentKey) -> Content | None:
        return self.get_values(where, [key]).get(key)

    def get_contents(self, where: RefOrHash, keys: Sequence[ContentKey]) -> ContentsAt:
        """Like :meth:`get_values`, and also which commit was read (the branch head when
        ``where`` is a reference), as Nessie's GET contents answers."""
        at = self.ref_mapping.resolve(where)
        contents = self.get_values(at, keys)
        return ContentsAt(at, contents, where if isinstance(where, NamedRef) else None)

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
        check_key_range(min_key, max_key, prefix_key)
        index = self.commits.complete_index_of(self.ref_mapping.resolve(where))
        begin, end = _key_range(min_key, max_key, prefix_key, paging_token)
        if begin is not None and end is not None and key_less(end, begin):
            return
        prefix = store_key_min(prefix_key) if prefix_key is not None else None
        batch: list[tuple[ContentKey, str, CommitOp]] = []
        for element in index.iterate(begin, end):
            if prefix is not None and not starts_with_elements_or_parts(element.key, prefix):
                if key_less(prefix, element.key):
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
        ops = [op for _, _, op in batch]
        contents = self.contents.contents_for_ops(ops) if with_content else [None] * len(batch)
        for (key, raw, op), content in zip(batch, contents, strict=True):
            yield KeyEntry(
                key, op.payload, str(op.content_id) if op.content_id else None, content, raw.encode().hex()
            )

    def get_commits(
        self, where: RefOrHash, *, paging_token: str | None = None, with_operations: bool = False
    ) -> Iterator[LogEntry]:
        """First-parent history, newest first; resume at a page's token (a commit hash, inclusive)."""
        start = self.ref_mapping.resolve(where)
        if paging_token:
            start = ObjId.from_hex(paging_token)
        try:
            for commit in self.commits.commit_log(start):
                yield self._log_entry(commit, with_operations)
        except CommitNotFound as e:
            raise ReferenceNotFoundError(str(e)) from None

    def _log_entry(self, commit: CommitObj, with_operations: bool) -> LogEntry:
        meta = commit_meta_of(commit)
        operations: tuple[Operation, ...] | None = None
        if with_operations:
            ops = self.commits.indexes.commit_operations(commit)
            adds = [e for e in ops if e.op.exists]
            contents = self.contents.contents_for_ops([e.op for e in adds])
            by_key = {e.key: c for e, c in zip(adds, contents, strict=True)}
            deletes: list[Operation] = []
            puts: list[Operation] = []
            for element in ops:
                key = from_store_key(element.key)
                if key is None:
                    continue
                content = by_key.get(element.key)
                if element.op.exists and content is not None:
                    puts.append(Put(key, content))
                else:
                    deletes.append(Delete(key))
            operations = (*deletes, *puts)  # Nessie lists a commit's deletes first
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
        check_key_range(min_key, max_key, prefix_key)
        from_index = self.commits.complete_index_of(self.ref_mapping.resolve(from_))
        to_index = self.commits.complete_index_of(self.ref_mapping.resolve(to))
        begin, end = _key_range(min_key, max_key, prefix_key, paging_token)
        if begin is not None and end is not None and key_less(end, begin):
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
        contents = self.contents.contents_for_ops([op for e in batch for op in (e.from_op, e.to_op)])
        for i, entry in enumerate(batch):
            key = from_store_key(entry.key)
            assert key is not None
            yield Diff(key, contents[2 * i], contents[2 * i + 1], entry.key.encode().hex())

    # --- merge and transplant --------------------------------------------------------------------

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
    ) -> MergeResult:
        """Squash the source's changes since the merge base into one commit on ``target``; see
        :meth:`persist_spi.versionstore.merging.Merger.merge` for the options."""
        return self._merger().merge(
            source,
            target,
            expected_hash,
            source_hash=source_hash,
            default_behavior=default_behavior,
            key_behaviors=key_behaviors,
            dry_run=dry_run,
            meta=meta,
            raise_on_conflict=raise_on_conflict,
            validator=validator,
        )

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
        """Replay contiguous commits one by one on ``target`` (``message`` replaces the message of
        a single transplanted commit); see
        :meth:`persist_spi.versionstore.merging.Merger.transplant` for the options."""
        return self._merger().transplant(
            target,
            expected_hash,
            sequence,
            default_behavior=default_behavior,
            key_behaviors=key_behaviors,
            dry_run=dry_run,
            raise_on_conflict=raise_on_conflict,
            message=message,
            validator=validator,
        )

    def _merger(self) -> Merger:
        return Merger(
            self.helper,
            self.ref_mapping,
            sources=self.sources,
            transplant_commit_time=self.transplant_commit_time,
        )


def _key_range(
    min_key: ContentKey | None, max_key: ContentKey | None, prefix_key: ContentKey | None, token: str | None
) -> tuple[StoreKey | None, StoreKey | None]:
    if (
        min_key is not None
        and max_key is not None
        and key_less(store_key_max(max_key), store_key_min(min_key))
    ):
        # Nessie's index refuses such a range ("'to' must be greater than 'from'") when a key lies
        # between the two bounds; lochkit refuses it always, so the answer does not depend on data.
        raise InputError(
            f"'to' must be greater than 'from': the minimum key '{min_key}' is above the maximum key "
            f"'{max_key}'"
        )
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
            raise InputError(
                f"Invalid paging token '{token}': expected the hex text a listing returned"
            ) from None
    return begin, end


def as_api(store: VersionStore) -> VersionStoreApi:
    """The store as the shared contract (mypy checks here that VersionStore satisfies it)."""
    return store


__all__ = ["RefOrHash", "Validator", "VersionStore"]
