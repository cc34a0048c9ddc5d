"""Commit logic on a real backend: building commits from operations, their ids, conflicts,
storing (with spilling and collision checks), reading back, log, diff and merge base."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable

import pytest

from conformance.suites.base import ConformanceSuite
from persist_spi.errors import ObjNotFound
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.indexes.action import Action
from persist_spi.indexes.elements import CommitOp
from persist_spi.keys import StoreKey, key
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.conflicts import CommitConflict, CommitConflictError, ConflictResolution, ConflictType
from persist_spi.logic.create_commit import Add, CreateCommit, Remove, Unchanged
from persist_spi.logic.errors import CommitNotFound
from persist_spi.logic.merge_base import NoCommonAncestor, find_merge_base
from persist_spi.objs import CommitObj, CommitType, content_value
from persist_spi.persist import Persist
from persist_spi.references import Reference


def _value(i: int | str) -> ObjId:
    return content_value(f"cid-{i}", 1, f"value {i}".encode()).id


def _commit(logic: CommitLogic, parent: ObjId, message: str = "", **ops: object) -> CommitObj:
    create = CreateCommit(parent_commit_id=parent, message=message, **ops)  # type: ignore[arg-type]
    stored = logic.store_commit(logic.build_commit_obj(create))
    assert stored.commit is not None
    return stored.commit


def _chain(logic: CommitLogic, n: int, parent: ObjId = EMPTY_OBJ_ID, prefix: str = "c") -> list[CommitObj]:
    commits = []
    for i in range(n):
        commit = _commit(
            logic, parent, f"{prefix}{i}", adds=(Add(key(f"{prefix}-k{i}"), 1, _value(f"{prefix}{i}")),)
        )
        commits.append(commit)
        parent = commit.id
    return commits


class LogicCommitsSuite(ConformanceSuite):
    area = "logic.commits"

    @pytest.fixture
    def logic(self, persist: Persist) -> CommitLogic:
        return CommitLogic(persist)

    # --- reading commits -------------------------------------------------------------------------

    def test_fetching_the_empty_commit_gives_none(self, logic: CommitLogic) -> None:
        assert logic.fetch_commit(EMPTY_OBJ_ID) is None
        assert logic.fetch_commits([EMPTY_OBJ_ID, EMPTY_OBJ_ID]) == [None, None]

    def test_fetch_commits_keeps_argument_order(self, logic: CommitLogic) -> None:
        a, b = _chain(logic, 2)
        assert logic.fetch_commits([a.id, b.id]) == [a, b]
        assert logic.fetch_commits([b.id, EMPTY_OBJ_ID, a.id]) == [b, None, a]
        assert logic.fetch_commits([a.id, a.id]) == [a, a]

    def test_head_commit_of_a_reference(self, logic: CommitLogic) -> None:
        (c,) = _chain(logic, 1)
        assert logic.head_commit(Reference("refs/heads/x", c.id)) == c
        assert logic.head_commit(Reference("refs/heads/y", EMPTY_OBJ_ID)) is None
        with pytest.raises(ObjNotFound):
            logic.head_commit(Reference("refs/heads/z", random_obj_id()))

    def test_commit_log_is_newest_first_with_tails_and_sequence_numbers(
        self, logic: CommitLogic, persist: Persist
    ) -> None:
        commits = _chain(logic, 101)
        log = list(logic.commit_log(commits[-1].id))
        assert [c.id for c in log] == [c.id for c in reversed(commits)]
        assert [c.seq for c in log] == list(range(101, 0, -1))
        assert commits[0].tail == (EMPTY_OBJ_ID,)
        limit = persist.config.parents_per_commit
        for i, commit in enumerate(commits):
            expected_tail = [c.id for c in reversed(commits[max(0, i - limit) : i])]
            if i < limit:
                expected_tail.append(EMPTY_OBJ_ID)
            assert list(commit.tail) == expected_tail[:limit]

    def test_commit_log_resumes_from_any_commit_and_stops_at_an_end(self, logic: CommitLogic) -> None:
        commits = _chain(logic, 30)
        for start in (0, 5, 19, 20, 21, 29):
            suffix = [c.id for c in logic.commit_log(commits[start].id)]
            assert suffix == [c.id for c in reversed(commits[: start + 1])]
        assert [c.id for c in logic.commit_log(commits[10].id, end=commits[10].id)] == [commits[10].id]
        assert list(logic.commit_id_log(commits[3].id)) == [c.id for c in reversed(commits[:4])]
        assert list(logic.commit_log(EMPTY_OBJ_ID)) == []

    def test_commit_log_from_a_missing_commit_fails(self, logic: CommitLogic) -> None:
        missing = random_obj_id()
        with pytest.raises(CommitNotFound, match=f"Commit '{missing}' not found"):
            list(logic.commit_log(missing))

    # --- ids -------------------------------------------------------------------------------------

    def test_commit_id_covers_parent_message_headers_and_operations(self, logic: CommitLogic) -> None:
        base = CreateCommit(
            EMPTY_OBJ_ID,
            "msg",
            CommitHeaders({"h": "1"}),
            adds=(Add(key("a"), 1, _value(1), None, uuid.UUID(int=1)),),
        )
        reference = logic.build_commit_obj(base).id
        assert logic.build_commit_obj(base).id == reference  # deterministic
        variants = [
            dataclasses.replace(base, message="other"),
            dataclasses.replace(base, headers=CommitHeaders({"h": "2"})),
            dataclasses.replace(base, headers=CommitHeaders([("h", "1"), ("h", "1")])),
            dataclasses.replace(base, adds=(Add(key("b"), 1, _value(1), None, uuid.UUID(int=1)),)),
            dataclasses.replace(base, adds=(Add(key("a"), 2, _value(1), None, uuid.UUID(int=1)),)),
            dataclasses.replace(base, adds=(Add(key("a"), 1, _value(2), None, uuid.UUID(int=1)),)),
            dataclasses.replace(base, adds=(Add(key("a"), 1, _value(1), None, uuid.UUID(int=2)),)),
            dataclasses.replace(base, adds=(Add(key("a"), 1, _value(1)),)),
        ]
        ids = {logic.build_commit_obj(v).id for v in variants}
        assert reference not in ids
        assert len(ids) == len(variants)

    def test_commit_id_ignores_expected_values_secondary_parents_and_type(self, logic: CommitLogic) -> None:
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("a"), 1, _value(1)),))
        update = CreateCommit(first.id, "u", adds=(Add(key("a"), 1, _value(2), _value(1)),))
        reference = logic.build_commit_obj(update).id
        assert (
            logic.build_commit_obj(dataclasses.replace(update, secondary_parents=(random_obj_id(),))).id
            == reference
        )
        assert (
            logic.build_commit_obj(dataclasses.replace(update, commit_type=CommitType.INTERNAL)).id
            == reference
        )
        replaced = logic.build_commit_obj(update, expected_value_replacement=lambda add, k, v: v).id
        assert replaced == reference

    # --- conflicts -------------------------------------------------------------------------------

    def test_adding_an_existing_key_is_key_exists_and_readd_works(self, logic: CommitLogic) -> None:
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("hello"), 1, _value(1)),))
        with pytest.raises(CommitConflictError, match="Commit conflict: KEY_EXISTS:hello") as e:
            logic.build_commit_obj(CreateCommit(first.id, adds=(Add(key("hello"), 1, _value(2)),)))
        assert e.value.conflicts[0].existing is not None
        assert e.value.conflicts[0].existing.value == _value(1)
        readd = _commit(
            logic,
            first.id,
            removes=(Remove(key("hello"), 1, _value(1)),),
            adds=(Add(key("hello"), 2, _value(3), None, uuid.UUID(int=9)),),
        )
        index = logic.indexes.build_complete_index(readd)
        assert index.element_count() == 1
        element = index.get(key("hello"))
        assert element is not None
        assert (element.op.payload, element.op.value, element.op.content_id) == (
            2,
            _value(3),
            uuid.UUID(int=9),
        )

    @pytest.mark.parametrize("kind", ["add", "remove", "unchanged"])
    def test_wrong_expectations_are_conflicts_of_their_type(self, logic: CommitLogic, kind: str) -> None:
        cid = uuid.UUID(int=5)
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("hello"), 1, _value(1), None, cid),))
        k = key("hello")

        def attempt(payload: int, expected: ObjId, content_id: uuid.UUID | None) -> CreateCommit:
            if kind == "add":
                return CreateCommit(first.id, adds=(Add(k, payload, _value(2), expected, content_id),))
            if kind == "remove":
                return CreateCommit(first.id, removes=(Remove(k, payload, expected, content_id),))
            return CreateCommit(first.id, unchanged=(Unchanged(k, payload, expected, content_id),))

        for create, expected_type in (
            (attempt(1, _value(99), cid), ConflictType.VALUE_DIFFERS),
            (attempt(1, _value(1), uuid.UUID(int=6)), ConflictType.CONTENT_ID_DIFFERS),
            (attempt(2, _value(1), cid), ConflictType.PAYLOAD_DIFFERS),
        ):
            with pytest.raises(CommitConflictError, match=f"Commit conflict: {expected_type.name}:hello"):
                logic.build_commit_obj(create)
        logic.build_commit_obj(attempt(1, _value(1), cid))  # the right expectation passes

    def test_changing_an_absent_key_is_key_does_not_exist(self, logic: CommitLogic) -> None:
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("there"), 1, _value(1)),))
        gone = _commit(logic, first.id, removes=(Remove(key("there"), 1, _value(1)),))
        for parent, k in ((first.id, key("absent")), (gone.id, key("there"))):
            for create in (
                CreateCommit(parent, adds=(Add(k, 1, _value(2), _value(1)),)),
                CreateCommit(parent, removes=(Remove(k, 1, _value(1)),)),
                CreateCommit(parent, unchanged=(Unchanged(k, 1, _value(1)),)),
            ):
                with pytest.raises(CommitConflictError, match=f"KEY_DOES_NOT_EXIST:{k}"):
                    logic.build_commit_obj(create)

    def test_all_conflicts_of_a_commit_are_reported_together(self, logic: CommitLogic) -> None:
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("a"), 1, _value(1)), Add(key("b"), 1, _value(2))))
        create = CreateCommit(first.id, adds=(Add(key("a"), 1, _value(3)), Add(key("b"), 1, _value(4))))
        with pytest.raises(CommitConflictError) as e:
            logic.build_commit_obj(create)
        assert [(c.key, c.conflict_type) for c in e.value.conflicts] == [
            (key("a"), ConflictType.KEY_EXISTS),
            (key("b"), ConflictType.KEY_EXISTS),
        ]

    def test_conflict_handler_can_keep_or_drop_conflicting_operations(self, logic: CommitLogic) -> None:
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("a"), 1, _value(1)),))
        create = CreateCommit(first.id, adds=(Add(key("a"), 1, _value(2)), Add(key("b"), 1, _value(3))))
        seen: list[CommitConflict] = []

        def keep(conflict: CommitConflict) -> ConflictResolution:
            seen.append(conflict)
            return ConflictResolution.ADD

        kept = logic.build_commit_obj(create, conflict_handler=keep)
        assert [c.key for c in seen] == [key("a")]
        assert {e.key for e in logic.indexes.commit_operations(kept)} == {key("a"), key("b")}
        dropped = logic.build_commit_obj(create, conflict_handler=lambda c: ConflictResolution.DROP)
        assert {e.key for e in logic.indexes.commit_operations(dropped)} == {key("b")}

    def test_value_callbacks_see_non_conflicting_operations(self, logic: CommitLogic) -> None:
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("a"), 1, _value(1)),))
        calls: list[tuple[StoreKey, ObjId | None]] = []
        create = CreateCommit(
            first.id, adds=(Add(key("b"), 1, _value(2)),), removes=(Remove(key("a"), 1, _value(1)),)
        )
        commit = logic.build_commit_obj(create, op_handler=lambda k, v: calls.append((k, v)))
        assert calls == [(key("a"), None), (key("b"), _value(2))]
        stored = logic.store_commit(commit)
        assert stored.stored
        assert logic.fetch_commit(commit.id) == commit

    def test_expected_value_replacement_can_break_or_fix_a_commit(self, logic: CommitLogic) -> None:
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("a"), 1, _value(1)),))
        good = CreateCommit(first.id, adds=(Add(key("a"), 1, _value(2), _value(1)),))
        with pytest.raises(CommitConflictError, match="VALUE_DIFFERS:a") as e:
            logic.build_commit_obj(good, expected_value_replacement=lambda add, k, v: _value(77))
        conflict = e.value.conflicts[0]
        assert conflict.existing is not None
        assert conflict.existing.value == _value(1)
        assert conflict.op is not None
        assert conflict.op.value == _value(2)
        wrong = CreateCommit(first.id, adds=(Add(key("a"), 1, _value(2), _value(55)),))
        fixed = logic.build_commit_obj(wrong, expected_value_replacement=lambda add, k, v: _value(1))
        element = logic.indexes.build_complete_index(fixed).get(key("a"))
        assert element is not None
        assert element.op.value == _value(2)

    def test_committed_value_replacement_changes_what_is_written(self, logic: CommitLogic) -> None:
        create = CreateCommit(EMPTY_OBJ_ID, adds=(Add(key("a"), 1, _value(1)),))
        commit = logic.build_commit_obj(create, committed_value_replacement=lambda add, k, v: _value(42))
        element = logic.indexes.build_complete_index(commit).get(key("a"))
        assert element is not None
        assert element.op.value == _value(42)

    @pytest.mark.parametrize("variant", ["add+add", "add+unchanged", "remove+unchanged", "remove+remove"])
    def test_a_key_appears_once_per_commit(self, logic: CommitLogic, variant: str) -> None:
        k = key("hello")
        ops = {
            "add+add": {"adds": (Add(k, 1, _value(1)), Add(k, 1, _value(2)))},
            "add+unchanged": {"adds": (Add(k, 1, _value(1)),), "unchanged": (Unchanged(k, 1),)},
            "remove+unchanged": {"removes": (Remove(k, 1, _value(1)),), "unchanged": (Unchanged(k, 1),)},
            "remove+remove": {"removes": (Remove(k, 1, _value(1)), Remove(k, 1, _value(1)))},
        }[variant]
        with pytest.raises(ValueError, match="Duplicate key: hello"):
            logic.build_commit_obj(CreateCommit(EMPTY_OBJ_ID, **ops))  # type: ignore[arg-type]

    def test_rename_moves_content_to_a_new_key(self, logic: CommitLogic) -> None:
        cid = uuid.UUID(int=3)
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("k1"), 1, _value(1), None, cid),))
        renamed = _commit(
            logic,
            first.id,
            removes=(Remove(key("k1"), 1, _value(1), cid),),
            adds=(Add(key("k2"), 1, _value(2), _value(1), cid),),
        )
        ops = {e.key: e.op.action for e in logic.indexes.commit_operations(renamed)}
        assert ops == {key("k1"): Action.REMOVE, key("k2"): Action.ADD}
        live = {e.key for e in logic.indexes.build_complete_index(renamed) if e.op.exists}
        assert live == {key("k2")}

    def test_rename_needs_both_content_id_and_expected_value(self, logic: CommitLogic) -> None:
        cid = uuid.UUID(int=3)
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("k1"), 1, _value(1), None, cid),))
        remove = (Remove(key("k1"), 1, _value(1), cid),)
        with pytest.raises(CommitConflictError, match="KEY_DOES_NOT_EXIST:k2"):
            logic.build_commit_obj(
                CreateCommit(first.id, removes=remove, adds=(Add(key("k2"), 1, _value(2), _value(1)),))
            )
        with pytest.raises(CommitConflictError, match="KEY_EXISTS:k2"):
            logic.build_commit_obj(
                CreateCommit(first.id, removes=remove, adds=(Add(key("k2"), 1, _value(2), None, cid),))
            )

    def test_rename_plus_readd_with_the_same_content_id_is_rejected(self, logic: CommitLogic) -> None:
        cid = uuid.UUID(int=3)
        first = _commit(logic, EMPTY_OBJ_ID, adds=(Add(key("k1"), 1, _value(1), None, cid),))
        create = CreateCommit(
            first.id,
            removes=(Remove(key("k1"), 1, _value(1), cid),),
            adds=(Add(key("k2"), 1, _value(2), _value(1), cid), Add(key("k1"), 1, _value(3), None, cid)),
        )
        with pytest.raises(ValueError, match="Duplicate content ID"):
            logic.build_commit_obj(create)

    def test_building_on_a_missing_parent_is_an_argument_error(self, logic: CommitLogic) -> None:
        with pytest.raises(ObjNotFound):
            logic.build_commit_obj(CreateCommit(random_obj_id()))

    # --- storing ---------------------------------------------------------------------------------

    def test_storing_an_equal_commit_again_counts_as_success(self, logic: CommitLogic) -> None:
        """A retry after an unknown outcome re-stores the same commit: not a hash collision."""
        commit = logic.build_commit_obj(CreateCommit(EMPTY_OBJ_ID, "m", adds=(Add(key("a"), 1, _value(1)),)))
        assert logic.store_commit(commit).stored is True
        again = logic.store_commit(dataclasses.replace(commit, created=commit.created + 5))
        assert again.stored is False
        assert again.commit == commit

    def test_a_different_commit_under_an_existing_id_is_a_collision(self, logic: CommitLogic) -> None:
        commit = logic.build_commit_obj(CreateCommit(EMPTY_OBJ_ID, "m"))
        logic.store_commit(commit)
        impostor = dataclasses.replace(commit, message="not the same")
        result = logic.store_commit(impostor)
        assert (result.commit, result.stored) == (None, False)

    def test_store_commit_writes_its_additional_objects(self, logic: CommitLogic, persist: Persist) -> None:
        value = content_value("cid", 1, b"payload")
        commit = logic.build_commit_obj(CreateCommit(EMPTY_OBJ_ID, adds=(Add(key("a"), 1, value.id),)))
        logic.store_commit(commit, [value])
        assert persist.fetch_obj(value.id) == value

    # --- diff ------------------------------------------------------------------------------------

    def test_diff_reports_keys_whose_value_differs(self, logic: CommitLogic) -> None:
        cid = [uuid.UUID(int=i) for i in range(6)]
        left = _commit(
            logic,
            EMPTY_OBJ_ID,
            adds=(
                Add(key("aaa"), 1, _value(1), content_id=cid[1]),
                Add(key("bbb"), 2, _value(2), content_id=cid[2]),
                Add(key("ccc"), 3, _value(3), content_id=cid[3]),
            ),
        )
        right = _commit(
            logic,
            EMPTY_OBJ_ID,
            adds=(
                Add(key("bbb"), 2, _value(2), content_id=cid[2]),
                Add(key("ccc"), 4, _value(4), content_id=cid[4]),
                Add(key("one"), 5, _value(5), content_id=cid[5]),
            ),
        )
        li, ri = logic.indexes.build_complete_index(left), logic.indexes.build_complete_index(right)

        def side(op: CommitOp | None) -> tuple[ObjId | None, int, uuid.UUID | None] | None:
            return None if op is None else (op.value, op.payload, op.content_id)

        diff = [(d.key, side(d.from_op), side(d.to_op)) for d in logic.diff(li, ri)]
        assert diff == [
            (key("aaa"), (_value(1), 1, cid[1]), None),
            (key("ccc"), (_value(3), 3, cid[3]), (_value(4), 4, cid[4])),
            (key("one"), None, (_value(5), 5, cid[5])),
        ]
        assert [d.key for d in logic.diff(li, ri, key_filter=lambda k: k != "ccc")] == [
            key("aaa"),
            key("one"),
        ]
        assert list(logic.diff(li, ri, end=key("000"))) == []
        assert list(logic.diff(li, ri, begin=key("zzz"))) == []
        assert [d.key for d in logic.diff(li, ri, end=key("bbb"))] == [key("aaa")]
        assert [d.key for d in logic.diff(li, ri, begin=key("o"))] == [key("one")]
        assert [d.key for d in logic.diff(li, ri, key("a"), key("bbb"))] == [key("aaa")]
        assert [d.key for d in logic.diff(li, ri, key("o"), key("p"))] == [key("one")]
        assert [d.key for d in logic.diff(li, ri, key("bbb"), key("nnn"))] == [key("ccc")]
        assert list(logic.diff(li, li)) == []

    # --- merge base ------------------------------------------------------------------------------

    def _load(self, logic: CommitLogic) -> Callable[[ObjId], CommitObj | None]:
        def load(commit_id: ObjId) -> CommitObj | None:
            try:
                return logic.fetch_commit(commit_id)
            except ObjNotFound:
                return None

        return load

    def test_common_ancestor_of_forked_branches_is_the_fork_commit(self, logic: CommitLogic) -> None:
        trunk = _chain(logic, 6, prefix="t")
        branches = [_chain(logic, 5, trunk[i].id, prefix=f"b{i}") for i in range(1, 6)]
        load = self._load(logic)
        root = trunk[0].id
        for i, branch in enumerate(branches, start=1):
            assert find_merge_base(load, branch[-1].id, root, False) == root
            assert find_merge_base(load, branch[-1].id, branch[-1].id, False) == branch[-1].id
            for j, other in enumerate(branches, start=1):
                if i != j:
                    assert find_merge_base(load, branch[-1].id, other[-1].id, False) == trunk[min(i, j)].id

    def test_unrelated_histories_have_no_common_ancestor(self, logic: CommitLogic) -> None:
        """Two histories that each have commits and share none (both start at the no-ancestor
        commit): no common ancestor, as in Nessie."""
        a = _chain(logic, 3, prefix="a")
        b = _chain(logic, 3, prefix="b")
        load = self._load(logic)
        with pytest.raises(NoCommonAncestor, match="No common ancestor in parents of "):
            find_merge_base(load, a[-1].id, b[-1].id)
        for x in a:
            for y in b:
                with pytest.raises(NoCommonAncestor, match="No common ancestor in parents of "):
                    find_merge_base(load, x.id, y.id)
        missing = random_obj_id()
        for pair in (
            (a[-1].id, missing),
            (missing, a[0].id),
            (EMPTY_OBJ_ID, missing),
            (missing, EMPTY_OBJ_ID),
        ):
            with pytest.raises(NoCommonAncestor, match=f"Commit '{missing}' not found"):
                find_merge_base(load, *pair)

    def test_the_no_ancestor_commit_is_the_base_of_every_history(self, logic: CommitLogic) -> None:
        """Every history starts at the no-ancestor commit (the parent of every first commit), so with
        it on either side it is the common ancestor: merging it brings nothing, and merging into it
        brings everything (Nessie: "No common ancestor" for a target there; for a source there, the
        target's head, which makes a merge delete every key)."""
        a = _chain(logic, 3, prefix="a")
        load = self._load(logic)
        for commit in (EMPTY_OBJ_ID, *(c.id for c in a)):
            assert find_merge_base(load, EMPTY_OBJ_ID, commit) == EMPTY_OBJ_ID
            assert find_merge_base(load, commit, EMPTY_OBJ_ID) == EMPTY_OBJ_ID
            for respect_merge_parents in (True, False):
                assert find_merge_base(load, commit, EMPTY_OBJ_ID, respect_merge_parents) == EMPTY_OBJ_ID

    def test_merge_base_follows_merge_parents(self, logic: CommitLogic) -> None:
        """After merging B into A, the next merge of B uses the merged B commit as its base."""
        root = _chain(logic, 1, prefix="r")[0]
        a1 = _chain(logic, 1, root.id, prefix="a")[0]
        b1 = _chain(logic, 1, root.id, prefix="b")[0]
        merge = _commit(
            logic, a1.id, "merge b1", secondary_parents=(b1.id,), adds=(Add(key("b-k0"), 1, _value("b0")),)
        )
        b2 = _chain(logic, 1, b1.id, prefix="bb")[0]
        load = self._load(logic)
        assert find_merge_base(load, merge.id, b2.id, respect_merge_parents=True) == b1.id
        assert find_merge_base(load, merge.id, b2.id, respect_merge_parents=False) == root.id
