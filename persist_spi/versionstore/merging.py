"""Merge (squashed into one commit on the target) and transplant (commits replayed one by one).

Both build their commits with the same conflict policy. Per key, a merge behaviour decides what
happens when target and source both changed it: NORMAL reports a conflict (nothing is applied),
FORCE takes the source's content, DROP keeps the target's. Identical changes on both sides, and
namespaces created on both sides, never conflict. A dry run builds everything in an overlay and
writes nothing.

The result's ``details`` are Nessie's: every key the commit touched (with its behaviour, and its
conflict if any), every key a DROP behaviour left out, and none of the keys resolved silently (the
same change on both sides, a namespace created on both sides). Checks run in Nessie's order:
conflicts, then namespaces, then unused key behaviours.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field

from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import IndexElement
from persist_spi.keys import StoreKey
from persist_spi.logic.commit_logic import CommitLogic, DiffEntry
from persist_spi.logic.conflicts import CommitConflict, ConflictResolution
from persist_spi.logic.conflicts import ConflictType as LogicConflict
from persist_spi.logic.create_commit import Add, CreateCommit, Remove
from persist_spi.logic.merge_base import NoCommonAncestor, find_merge_base
from persist_spi.objs import CommitObj, ContentValueObj, Obj, content_value
from persist_spi.persist import Persist
from persist_spi.versionstore.api import MergeValidator, RefOrHash
from persist_spi.versionstore.commit_helper import CommitHelper
from persist_spi.versionstore.content import NAMESPACE_PAYLOAD, Content, ContentKey
from persist_spi.versionstore.content_mapping import ContentMapping
from persist_spi.versionstore.errors import (
    Conflict,
    ConflictType,
    MergeConflictError,
    ReferenceConflictError,
    ReferenceNotFoundError,
)
from persist_spi.versionstore.key_hash_order import hash_map_order
from persist_spi.versionstore.keymap import from_store_key, to_store_key
from persist_spi.versionstore.meta import CommitMeta, with_commit_time
from persist_spi.versionstore.namespaces import namespace_conflicts
from persist_spi.versionstore.operations import MergeBehavior, MergeKeyBehavior
from persist_spi.versionstore.overlay import OverlayPersist
from persist_spi.versionstore.ref_mapping import RefMapping
from persist_spi.versionstore.refs import DETACHED, NamedRef, RefKind
from persist_spi.versionstore.results import KeyDetails, MergeResult
from persist_spi.versionstore.sources import StoreSources


@dataclass
class _Policy:
    """Merge behaviours by key, the conflicts they recorded, and the values they introduced."""

    contents: ContentMapping
    default: MergeBehavior
    by_key: dict[ContentKey, MergeKeyBehavior]
    details: dict[ContentKey, KeyDetails] = field(default_factory=dict)
    used: set[ContentKey] = field(default_factory=set)
    resolved_values: list[Obj] = field(default_factory=list)
    hard_conflicts: list[CommitConflict] = field(default_factory=list)
    #: Keys that went through the conflict handler: only the handler records their details.
    handled: set[ContentKey] = field(default_factory=set)

    def behavior(self, key: ContentKey) -> MergeKeyBehavior:
        found = self.by_key.get(key)
        if found is not None:
            self.used.add(key)
            return found
        return MergeKeyBehavior(key, self.default)

    def on_conflict(self, conflict: CommitConflict) -> ConflictResolution:
        key = from_store_key(conflict.key)
        if key is None:
            return ConflictResolution.ADD
        self.handled.add(key)
        existing, op = conflict.existing, conflict.op
        if conflict.conflict_type is LogicConflict.KEY_EXISTS and existing is not None and op is not None:
            if existing.payload == op.payload and existing.value == op.value:
                return ConflictResolution.DROP  # both sides made the same change
            if existing.payload == NAMESPACE_PAYLOAD and op.payload == NAMESPACE_PAYLOAD:
                return ConflictResolution.ADD
        spec = self.behavior(key)
        if spec.resolved_content is not None:
            self.hard_conflicts.append(conflict)  # the caller's own resolution no longer fits
            return ConflictResolution.CONFLICT
        behavior = spec.behavior
        if spec.expected_target_content is not None:
            behavior = MergeBehavior.NORMAL
        if behavior is MergeBehavior.FORCE:
            self.details[key] = KeyDetails(MergeBehavior.FORCE)
            return ConflictResolution.ADD
        if behavior is MergeBehavior.DROP:
            self.details[key] = KeyDetails(MergeBehavior.DROP)
            return ConflictResolution.DROP
        current = self.contents.contents_for_ops([existing])[0]
        self.details[key] = KeyDetails(
            spec.behavior, Conflict.of(ConflictType[conflict.conflict_type.name], key, current)
        )
        return ConflictResolution.ADD

    def on_op(self, store_key: StoreKey, _value: ObjId | None) -> None:
        """An operation went into the commit without a conflict: Nessie lists it in the details."""
        key = from_store_key(store_key)
        if key is not None and key not in self.handled:
            spec = self.by_key.get(key)
            self.details.setdefault(key, KeyDetails(spec.behavior if spec is not None else self.default))

    def details_in_nessie_order(self) -> dict[ContentKey, KeyDetails]:
        """The details as Nessie lists them: in the order of the hash map it records them in."""
        return {key: self.details[key] for key in hash_map_order(self.details)}

    def drops(self) -> bool:
        return self.default is MergeBehavior.DROP or any(
            s.behavior is MergeBehavior.DROP for s in self.by_key.values()
        )

    def keep_in_merge(self, store_key: StoreKey) -> bool:
        """Diff filter: a key whose behaviour is DROP stays out of the merge. As in Nessie, it is
        asked for every key on either side, changed or not, and each DROP key it meets counts as
        used and is listed as dropped."""
        key = from_store_key(store_key)
        if key is None:
            return True
        spec = self.by_key.get(key)
        if (spec.behavior if spec is not None else self.default) is not MergeBehavior.DROP:
            return True
        self.used.add(key)
        self.details[key] = KeyDetails(MergeBehavior.DROP)
        return False

    def expected_value(self, is_add: bool, store_key: StoreKey, value: ObjId | None) -> ObjId | None:
        key = from_store_key(store_key)
        spec = self.by_key.get(key) if key is not None else None
        if spec is None:
            return value
        self.used.add(spec.key)  # the key takes part in the commit, so its behaviour is used
        if spec.expected_target_content is None:
            return value
        return _value_obj(spec.expected_target_content).id

    def committed_value(self, is_add: bool, store_key: StoreKey, value: ObjId | None) -> ObjId | None:
        key = from_store_key(store_key)
        spec = self.by_key.get(key) if key is not None else None
        if spec is None or spec.resolved_content is None or not is_add:
            return value
        self.used.add(spec.key)
        resolved = _value_obj(spec.resolved_content)
        self.resolved_values.append(resolved)
        return resolved.id


def _value_obj(content: Content) -> ContentValueObj:
    if content.id is None:
        raise InputError("Merge key behaviour content must carry its content id")
    return content_value(content.id, content.PAYLOAD, content.to_bytes())


def _validate_behaviors(behaviors: Sequence[MergeKeyBehavior]) -> dict[ContentKey, MergeKeyBehavior]:
    by_key: dict[ContentKey, MergeKeyBehavior] = {}
    for spec in behaviors:
        if spec.resolved_content is not None:
            if spec.behavior is not MergeBehavior.NORMAL:
                raise InputError(
                    f"MergeKeyBehavior.resolvedContent must be null for MergeBehavior.{spec.behavior.value} "
                    f"for {spec.key}"
                )
            if spec.expected_target_content is None:
                raise InputError(
                    "MergeKeyBehavior.resolvedContent requires setting MergeKeyBehavior.expectedTarget as "
                    f"well for key {spec.key}"
                )
        by_key[spec.key] = spec
    return by_key


def _check_all_used(policy: _Policy) -> None:
    unused = sorted(str(k) for k in policy.by_key if k not in policy.used)
    if unused:
        raise InputError(
            "Not all merge key behaviors specified in the request have been used. The following keys were "
            f"not used: [{', '.join(unused)}]"
        )


def _ops_from_diff(entries: Sequence[DiffEntry]) -> tuple[list[Add], list[Remove]]:
    """Turn a diff (merge base -> source) into commit operations."""
    adds: list[Add] = []
    removes: list[Remove] = []
    for e in entries:
        base, source = e.from_op, e.to_op
        if base is None and source is not None and source.value is not None:
            adds.append(Add(e.key, source.payload, source.value, None, source.content_id))
        elif source is None and base is not None and base.value is not None:
            removes.append(Remove(e.key, base.payload, base.value, base.content_id))
        elif base is not None and source is not None and source.value is not None and base.value is not None:
            if base.content_id == source.content_id:
                adds.append(Add(e.key, source.payload, source.value, base.value, source.content_id))
            else:  # dropped and re-created under the same key
                removes.append(Remove(e.key, base.payload, base.value, base.content_id))
                adds.append(Add(e.key, source.payload, source.value, None, source.content_id))
    return _link_renames(adds, removes), removes


def _link_renames(adds: list[Add], removes: list[Remove]) -> list[Add]:
    """A merge diff or a replayed commit only knows that a renamed content's new key did not exist
    before. The commit logic recognises a rename (a remove and an add of the same content id) only
    when the add expects the removed value; without it the add conflicts with the removal (and an
    unchanged rename was dropped as "already there", losing the content). So give such adds the
    removed value as their expected value."""
    removed = {r.content_id: r.expected_value for r in removes if r.content_id is not None}
    return [
        dataclasses.replace(a, expected_value=removed[a.content_id])
        if a.expected_value is None and a.content_id in removed
        else a
        for a in adds
    ]


def _has_ops(commit: CommitObj, logic: CommitLogic) -> bool:
    return bool(logic.indexes.commit_operations(commit))


class Merger:
    """Merges and transplants onto a branch, with what the version store shares for it."""

    def __init__(
        self,
        helper: CommitHelper,
        refs: RefMapping,
        *,
        sources: StoreSources,
        transplant_commit_time: bool,
    ) -> None:
        self.helper = helper
        self.refs = refs
        self.sources = sources
        #: See :attr:`persist_spi.versionstore.store.VersionStore.transplant_commit_time`.
        self.transplant_commit_time = transplant_commit_time

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
        helper, refs = self.helper, self.refs
        by_key = _validate_behaviors(key_behaviors)
        if target.kind is not RefKind.BRANCH:
            raise InputError("Reference to merge into must be a branch.")

        def attempt(_: object) -> MergeResult:
            # Nessie resolves the source before the target, so a missing source is named first.
            from_id = (
                refs.hash_on_reference(source, source_hash)
                if isinstance(source, NamedRef)
                else refs.hash_on_reference(None, source)
            )
            ref = refs.row(target, for_update=True)
            head = ref.pointer
            if expected_hash is not None and expected_hash != head:
                refs.find_in_history(target, head, expected_hash)
            result = MergeResult(
                target, was_dry_run=dry_run, effective_target_hash=head, expected_hash=expected_hash
            )
            try:
                base = find_merge_base(self._load, head, from_id, respect_merge_parents=True)
            except NoCommonAncestor as e:
                raise ReferenceNotFoundError(str(e)) from None
            result.common_ancestor = base
            if from_id == base:
                result.successful = True
                result.resultant_target_hash = head
                _check_all_used(_Policy(helper.contents, default_behavior, by_key, used=set(by_key)))
                return result

            policy = _Policy(helper.contents, default_behavior, by_key)
            persist: Persist = OverlayPersist(helper.persist) if dry_run else helper.persist
            logic = CommitLogic(persist)
            base_index = logic.complete_index_of(base)
            source_index = logic.complete_index_of(from_id)
            entries = list(
                logic.diff(
                    base_index, source_index, key_filter=policy.keep_in_merge if policy.drops() else None
                )
            )
            adds, removes = _ops_from_diff(entries)
            message = (
                meta.message
                if meta is not None and meta.message
                else default_merge_message(source, from_id, target, expected_hash or head)
            )
            create = CreateCommit(
                parent_commit_id=head,
                message=message,
                headers=(meta or CommitMeta()).to_headers(self.sources.now()),
                secondary_parents=(from_id,),
                adds=tuple(adds),
                removes=tuple(removes),
            )
            commit = _build(helper, logic, create, policy)
            self._check_namespaces(logic, head, commit)
            _check_all_used(policy)
            result.details = policy.details_in_nessie_order()  # e.g. every change DROPped: say so
            if validator is not None:
                validator(result)
            if not _has_ops(commit, logic):
                result.successful = True
                # As Nessie: a dry run names no resulting hash, even when nothing would change.
                result.resultant_target_hash = None if dry_run else head
                return result
            if any(d.conflict is not None for d in policy.details.values()):
                if raise_on_conflict:
                    raise MergeConflictError(_conflict_message(policy), result)
                return result
            if dry_run:
                result.successful = True
                return result
            stored = logic.store_commit(commit, policy.resolved_values)
            if stored.commit is None:
                raise RuntimeError(f"Hash collision detected for commit {commit.id}")
            helper.move_branch(ref, commit.id)
            result.applied = result.successful = True
            result.resultant_target_hash = commit.id
            result.created_commits = [commit.id] if stored.stored else []
            return result

        return helper.with_retries(attempt)

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
        helper, refs = self.helper, self.refs
        by_key = _validate_behaviors(key_behaviors)
        if not sequence:
            raise InputError("No hashes to transplant")
        if message is not None and len(sequence) != 1:
            raise InputError(
                f"A message can replace the message of one transplanted commit, not of {len(sequence)}"
            )
        if target.kind is not RefKind.BRANCH:
            raise InputError("Reference to transplant into must be a branch.")

        def attempt(_: object) -> MergeResult:
            ref = refs.row(target, for_update=True)
            head = ref.pointer
            if expected_hash is not None and expected_hash != head:
                refs.find_in_history(target, head, expected_hash)
            sources = self._load_sequence(sequence)
            result = MergeResult(
                target, was_dry_run=dry_run, effective_target_hash=head, expected_hash=expected_hash
            )
            persist: Persist = OverlayPersist(helper.persist)
            logic = CommitLogic(persist)
            policy = _Policy(helper.contents, default_behavior, by_key)
            source_parent = logic.complete_index_of(sources[0].direct_parent)
            new_head = head
            created: list[ObjId] = []
            for source in sources:
                now = self.sources.now() if self.transplant_commit_time else None
                create = self._replay(logic, source, source_parent, new_head, now)
                if message:
                    create = dataclasses.replace(create, message=message)
                commit = _build(helper, logic, create, policy)
                self._check_namespaces(logic, new_head, commit)
                source_parent = logic.indexes.build_complete_index(source)
                if not _has_ops(commit, logic):
                    continue
                stored = logic.store_commit(commit, policy.resolved_values)
                if stored.commit is None:
                    raise RuntimeError(f"Hash collision detected for commit {commit.id}")
                if stored.stored:
                    created.append(commit.id)
                new_head = commit.id
            _check_all_used(policy)
            result.details = policy.details_in_nessie_order()
            if validator is not None:
                validator(result)
            if any(d.conflict is not None for d in policy.details.values()):
                if raise_on_conflict:
                    raise MergeConflictError(_conflict_message(policy), result)
                return result
            result.successful = True
            if dry_run or new_head == head:
                # As Nessie: a dry run names no resulting hash; a transplant that changed nothing, the head.
                result.resultant_target_hash = None if dry_run else head
                return result
            # Write what the overlay buffered, then move the branch once.
            assert isinstance(persist, OverlayPersist)
            persist.flush()
            helper.move_branch(ref, new_head)
            result.applied = True
            result.resultant_target_hash = new_head
            result.created_commits = created
            return result

        return helper.with_retries(attempt)

    # --- helpers ---------------------------------------------------------------------------------

    def _load(self, commit_id: ObjId) -> CommitObj | None:
        # Only a missing commit ends the walk as "not found"; backend errors must surface as they are.
        return self.helper.commits.fetch_commit_if_exists(commit_id)

    def _load_sequence(self, sequence: Sequence[ObjId]) -> list[CommitObj]:
        # Missing commits read as None (not ObjNotFound), so they are reported as "not found" below.
        commits = self.helper.persist.fetch_all_if_exist_as(list(sequence), CommitObj)
        loaded: list[CommitObj] = []
        for commit_id, commit in zip(sequence, commits, strict=True):
            if commit is None:
                raise ReferenceNotFoundError(f"Commit '{commit_id}' not found")
            if loaded and commit.direct_parent != loaded[-1].id:
                raise InputError("Sequence of hashes is not contiguous.")
            loaded.append(commit)
        return loaded

    def _replay(
        self,
        logic: CommitLogic,
        source: CommitObj,
        source_parent: StoreIndex,
        parent: ObjId,
        now: datetime.datetime | None,
    ) -> CreateCommit:
        """The source commit's operations on ``parent``, each expecting what the source saw. Its
        metadata is kept, but for the commit time when ``now`` is given (Nessie's REST API rewrites
        it, so replaying a commit always writes a new commit)."""
        ops: list[IndexElement] = logic.indexes.commit_operations(source)
        source_parent.load_if_necessary([e.key for e in ops])
        adds: list[Add] = []
        removes: list[Remove] = []
        for element in ops:
            before = source_parent.get(element.key)
            expected = before.op.value if before is not None and before.op.exists else None
            op = element.op
            if op.action is Action.ADD and op.value is not None:
                same = before is not None and before.op.exists and before.op.content_id == op.content_id
                if expected is not None and not same and before is not None:
                    removes.append(Remove(element.key, before.op.payload, expected, before.op.content_id))
                    expected = None
                adds.append(Add(element.key, op.payload, op.value, expected, op.content_id))
            elif op.action is Action.REMOVE and expected is not None and before is not None:
                removes.append(Remove(element.key, before.op.payload, expected, before.op.content_id))
        return CreateCommit(
            parent_commit_id=parent,
            message=source.message,
            headers=source.headers if now is None else with_commit_time(source.headers, now),
            adds=tuple(_link_renames(adds, removes)),
            removes=tuple(removes),
        )

    def _check_namespaces(self, logic: CommitLogic, parent: ObjId, commit: CommitObj) -> None:
        if not self.helper.persist.config.namespace_validation:
            return
        parent_index = logic.complete_index_of(parent)
        created: list[ContentKey] = []
        namespaces: list[ContentKey] = []
        deleted: dict[ContentKey, int] = {}
        for element in logic.indexes.commit_operations(commit):
            key = from_store_key(element.key)
            if key is None:
                continue
            if element.op.exists:
                before = parent_index.get(to_store_key(key))
                if before is None or not before.op.exists:
                    created.append(key)
                if element.op.payload == NAMESPACE_PAYLOAD:
                    namespaces.append(key)
            else:
                deleted[key] = element.op.payload
        conflicts = namespace_conflicts(parent_index, created, namespaces, deleted)
        if conflicts:
            raise ReferenceConflictError(conflicts)


def _build(helper: CommitHelper, logic: CommitLogic, create: CreateCommit, policy: _Policy) -> CommitObj:
    policy.handled.clear()  # per commit: a key resolved in one replayed commit may be plain in the next
    commit = helper.build(
        create,
        conflict_handler=policy.on_conflict,
        expected_value_replacement=policy.expected_value,
        committed_value_replacement=policy.committed_value,
        logic=logic,
        op_handler=policy.on_op,
    )
    if policy.hard_conflicts:
        raise ReferenceConflictError(helper.contents.conflicts(policy.hard_conflicts))
    return commit


def _conflict_message(policy: _Policy) -> str:
    # Nessie sorts the keys here (its details are in hash order).
    keys = ", ".join(f"'{k}'" for k in sorted(k for k, d in policy.details.items() if d.conflict is not None))
    return f"The following keys have been changed in conflict: {keys}"


def default_merge_message(source: RefOrHash, source_hash: ObjId, target: NamedRef, target_hash: ObjId) -> str:
    """Nessie's message for a merge commit the caller gave none for (a detached source is named
    DETACHED, Nessie's name for it)."""
    name = source.name if isinstance(source, NamedRef) else DETACHED
    return f"Merged {name} at {source_hash} into {target.name} at {target_hash}"


__all__ = ["Merger"]
