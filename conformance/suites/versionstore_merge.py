"""Version-store merge: the source's changes since the merge base, squashed into one new commit on the
target branch (parents: the target head and the source commit). There is no fast-forward.

Per key, a merge behaviour decides what happens when the target changed a key the source changed too:
NORMAL records a conflict (nothing is applied; ``MergeConflictError`` unless ``raise_on_conflict``
is off), FORCE takes the source's content, DROP keeps the target's. DROP keys are left out of the
merge altogether. ``expected_target_content`` makes a key behave as NORMAL and checks the target
against it; ``resolved_content`` (NORMAL only, with an expected target) commits the caller's
resolution. A dry run computes the result and writes nothing.

As in Nessie, ``MergeConflictError`` is a ``ReferenceConflictError`` whose conflicts list every key
of the result, and the result's ``details`` name every key the merge touched or dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from conformance.suites.versionstore_base import (
    MAIN,
    VersionStoreSuite,
    exactly,
    key,
    namespace,
    storage_snapshot,
    table,
)
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.persist import Persist
from persist_spi.versionstore import (
    CommitMeta,
    Delete,
    MergeBehavior,
    MergeConflictError,
    MergeKeyBehavior,
    Put,
    ReferenceConflictError,
    ReferenceNotFoundError,
    VersionStore,
)
from persist_spi.versionstore.errors import Conflict, ConflictType
from persist_spi.versionstore.refs import branch, tag
from persist_spi.versionstore.results import KeyDetails, MergeResult

FOO = branch("foo")
NORMAL, FORCE, DROP = MergeBehavior.NORMAL, MergeBehavior.FORCE, MergeBehavior.DROP


@dataclass
class FooHistory:
    """Nessie's ``AbstractMerge`` setup on branch foo: an empty common-ancestor commit, then
    first (t1, t2, t3), second (t1 updated, t2 and t3 deleted, t4 created), third (t2 re-created,
    t4 unchanged)."""

    initial: ObjId
    first: ObjId
    second: ObjId
    third: ObjId


@dataclass
class Graph:
    """Builds Nessie's ``AbstractMergeScenarios`` graphs: each commit creates a table named after the
    commit's letter; merges use the target's known head as expected hash."""

    vs: VersionStore
    heads: dict[str, ObjId] = field(default_factory=dict)
    names: dict[ObjId, str] = field(default_factory=dict)
    count: int = 0

    def _letter(self) -> str:
        letter = chr(ord("a") + self.count)
        self.count += 1
        return letter

    def commit(self, target: str, fork: tuple[str, ObjId] | None = None) -> ObjId:
        """Commit to ``target``; with ``fork`` create it first at (source branch, commit)."""
        if target not in self.heads:
            start = fork[1] if fork is not None else None
            self.heads[target] = self.vs.create_reference(branch(target), start).hash
        letter = self._letter()
        result = self.vs.commit(
            branch(target),
            self.heads[target],
            CommitMeta(letter),
            [Put(key(f"table created on {letter}"), table(letter))],
        )
        self.heads[target] = result.hash
        self.names[result.hash] = letter
        return result.hash

    def merge(self, source: str, target: str, at: ObjId | None = None, dry_run: bool = False) -> MergeResult:
        result = self.vs.merge(
            branch(source),
            branch(target),
            self.heads[target],
            source_hash=at if at is not None else self.heads[source],
            dry_run=dry_run,
        )
        if not dry_run:
            assert len(result.created_commits) == 1, "a merge is squashed into exactly one commit"
            (self.heads[target],) = result.created_commits
            self.names[self.heads[target]] = self._letter()
        return result

    def merge_base(self, source: str, target: str, at: ObjId | None = None, dry_run: bool = False) -> str:
        base = self.merge(source, target, at, dry_run).common_ancestor
        assert base is not None
        return self.names[base]


class VersionStoreMergeSuite(VersionStoreSuite):
    area = "versionstore.merge"

    @pytest.fixture
    def foo(self, vs: VersionStore) -> FooHistory:
        vs.create_reference(FOO)
        # Not empty, so the suite also runs against Nessie's REST API (it refuses empty commits).
        initial = self.commit(vs, FOO, Put(key("base"), table("base")), message="Default common ancestor")
        first = self.first_commit(vs, FOO, "First Commit")
        second, third = self.second_and_third_commits(vs, FOO)
        return FooHistory(initial, first, second, third)

    # --- plain merges ----------------------------------------------------------------------------

    def test_merge_squashes_source_changes_into_one_commit_with_two_parents(
        self, vs: VersionStore, foo: FooHistory
    ) -> None:
        """A target forked at the initial commit with its own change receives everything the source
        did since: one new commit whose parents are the old target head and the source head; the
        target keeps its own change; the result names the merge base and the old target head."""
        target = branch("target")
        vs.create_reference(target, foo.initial)
        own = self.commit(vs, target, Put(key("mine"), table("mine")))
        result = vs.merge(FOO, target, own, meta=CommitMeta("merge foo"))
        assert (result.applied, result.successful, result.was_dry_run) == (True, True, False)
        assert (result.common_ancestor, result.effective_target_hash, result.expected_hash) == (
            foo.initial,
            own,
            own,
        )
        assert result.created_commits == [result.resultant_target_hash]
        assert self.head(vs, target) == result.resultant_target_hash
        (merge_commit, previous, *_) = vs.get_commits(target)
        assert previous.hash == own
        assert merge_commit.meta.message == "merge foo"
        assert merge_commit.meta.parent_hashes == (str(own), str(foo.third))
        assert self.values(vs, target, ["t1", "t2", "t3", "t4", "mine"]) == {
            "t1": table("v1_2"),
            "t2": table("v2_2"),
            "t4": table("v4_1"),
            "mine": table("mine"),
        }
        assert [e.content_id for e in vs.get_entries(target) if str(e.key) == "t1"] == [
            self.content_id(vs, FOO, "t1")
        ], "merged content keeps its content id"

    def test_merge_into_the_fork_point_still_creates_a_commit(
        self, vs: VersionStore, foo: FooHistory
    ) -> None:
        """No fast-forward: even when the target is the merge base, the merge adds a commit with
        both parents."""
        target = branch("target")
        vs.create_reference(target, foo.first)
        result = vs.merge(FOO, target)
        assert result.applied
        assert result.resultant_target_hash not in (foo.first, foo.third)
        assert [e.hash for e in vs.get_commits(target)][1:] == [foo.first, foo.initial]

    def test_merge_sources_a_tag_a_detached_commit_or_a_commit_in_the_source_history(
        self, vs: VersionStore, foo: FooHistory
    ) -> None:
        """The source may be a tag, a bare commit hash, or a branch with ``source_hash`` naming a
        commit in its history; each merges exactly that commit's state."""
        vs.create_reference(tag("at-first"), foo.first)
        for name, source, source_hash, expected in (
            (
                "from-tag",
                tag("at-first"),
                None,
                {"t1": table("v1_1"), "t2": table("v2_1"), "t3": table("v3_1")},
            ),
            ("from-hash", foo.second, None, {"t1": table("v1_2"), "t4": table("v4_1")}),
            ("from-history", FOO, foo.second, {"t1": table("v1_2"), "t4": table("v4_1")}),
        ):
            target = branch(name)
            vs.create_reference(target, foo.initial)
            vs.merge(source, target, source_hash=source_hash)
            assert self.values(vs, target, ["t1", "t2", "t3", "t4"]) == expected, name

    def test_merge_into_a_tag_is_rejected(self, vs: VersionStore, foo: FooHistory) -> None:
        """Only branches take merges."""
        vs.create_reference(tag("t"), foo.initial)
        with pytest.raises(ValueError, match=exactly("Reference to merge into must be a branch.")):
            vs.merge(FOO, tag("t"))

    def test_merge_of_a_branch_into_itself_is_an_empty_success(
        self, vs: VersionStore, foo: FooHistory
    ) -> None:
        """Merging a branch's head into the same branch: nothing to merge, successful but not applied;
        result, merge base and effective target are all the head."""
        for dry_run in (False, True):
            result = vs.merge(FOO, FOO, foo.second, dry_run=dry_run)
            assert (result.applied, result.successful) == (False, True)
            assert (
                result.resultant_target_hash
                == result.common_ancestor
                == result.effective_target_hash
                == foo.third
            )
        assert self.head(vs, FOO) == foo.third

    def test_merging_an_already_merged_source_again_changes_nothing(
        self, vs: VersionStore, foo: FooHistory
    ) -> None:
        """After a merge the source head is the merge base of a second merge: nothing to do."""
        target = branch("target")
        vs.create_reference(target, foo.initial)
        first = vs.merge(FOO, target)
        again = vs.merge(FOO, target)
        assert (again.applied, again.successful, again.common_ancestor) == (False, True, foo.third)
        assert self.head(vs, target) == first.resultant_target_hash

    def test_content_already_on_the_target_and_namespaces_on_both_sides_do_not_conflict(
        self, vs: VersionStore
    ) -> None:
        """A key the target already holds with the very same content (here: transplanted from the
        source earlier) is no conflict, and neither is a namespace created independently on both
        sides. Nothing is reported and the merge applies."""
        base = self.commit(vs, MAIN, Put(key("base"), table("base")))
        source = branch("source")
        vs.create_reference(source, base)
        picked = self.commit(vs, source, Put(key("x"), table("x")))
        self.commit(vs, source, Put(key("ns"), namespace("ns")))
        self.commit(vs, MAIN, Put(key("ns"), namespace("ns")))
        vs.transplant(MAIN, None, [picked])
        result = vs.merge(source, MAIN)
        assert (result.applied, result.successful) == (True, True)
        assert result.details == {}
        assert self.values(vs, MAIN, ["x", "ns"]) == {"x": table("x"), "ns": namespace("ns")}
        assert self.content_id(vs, MAIN, "x") == self.content_id(vs, source, "x")

    def test_the_same_update_on_both_sides_is_a_conflict(self, vs: VersionStore) -> None:
        """Like Nessie, an update is checked against the merge base's value: when the target made the
        same update, the target no longer holds the base value, so NORMAL reports VALUE_DIFFERS."""
        base = self.commit(vs, MAIN, Put(key("t"), table("v1")))
        cid = self.content_id(vs, MAIN, "t")
        source = branch("source")
        vs.create_reference(source, base)
        self.commit(vs, source, Put(key("t"), table("v2", cid)))
        self.commit(vs, MAIN, Put(key("t"), table("v2", cid)))
        result = vs.merge(source, MAIN, raise_on_conflict=False)
        assert not result.successful
        conflict = result.details[key("t")].conflict
        assert conflict is not None
        assert conflict.conflict_type is ConflictType.VALUE_DIFFERS

    def test_merge_carries_renames_with_their_content_ids(self, vs: VersionStore) -> None:
        """The source renamed a to b (content unchanged) and z to z2 (content changed too): the merge
        moves both on the target, keeping the content ids, with no conflict."""
        base = self.commit(vs, MAIN, Put(key("a"), table("a")), Put(key("z"), table("z")))
        ids = {k: self.content_id(vs, MAIN, k) for k in ("a", "z")}
        source = branch("source")
        vs.create_reference(source, base)
        a = vs.get_value(source, key("a"))
        assert a is not None
        self.commit(vs, source, Delete(key("a")), Put(key("b"), a))
        self.commit(vs, source, Delete(key("z")), Put(key("z2"), table("z-changed", ids["z"])))
        self.commit(vs, MAIN, Put(key("other"), table("o")))
        result = vs.merge(source, MAIN)
        assert (result.applied, result.successful) == (True, True)
        assert result.details == {key(k): KeyDetails(NORMAL) for k in ("a", "b", "z", "z2")}
        assert self.values(vs, MAIN, ["a", "b", "z", "z2", "other"]) == {
            "b": table("a"),
            "z2": table("z-changed"),
            "other": table("o"),
        }
        assert (self.content_id(vs, MAIN, "b"), self.content_id(vs, MAIN, "z2")) == (ids["a"], ids["z"])

    def test_merged_rename_conflicts_with_a_target_change_of_the_old_key(self, vs: VersionStore) -> None:
        """The source renamed a to b while the target updated a: the removal of a conflicts
        (VALUE_DIFFERS), so the rename is not applied."""
        base = self.commit(vs, MAIN, Put(key("a"), table("a")))
        cid = self.content_id(vs, MAIN, "a")
        source = branch("source")
        vs.create_reference(source, base)
        self.commit(vs, source, Delete(key("a")), Put(key("b"), table("a", cid)))
        self.commit(vs, MAIN, Put(key("a"), table("a2", cid)))
        with pytest.raises(
            MergeConflictError, match=exactly("The following keys have been changed in conflict: 'a'")
        ):
            vs.merge(source, MAIN)
        assert self.values(vs, MAIN, ["a", "b"]) == {"a": table("a2")}

    # --- conflicts and merge behaviours ----------------------------------------------------------

    @pytest.mark.lochkit_requires("storage_access")
    def test_conflicting_change_is_reported_without_writing(
        self, vs: VersionStore, persist: Persist, foo: FooHistory
    ) -> None:
        """Target and source both created t1: a NORMAL merge reports "The following keys have been
        changed in conflict: 't1'" with the result (not applied, not successful, the conflict and the
        target's current content) and writes nothing - also as a dry run. As in Nessie, the details
        and the error's conflicts also name the keys merged without a conflict (t2, t4; in the error
        as KEY_CONFLICT). Without ``raise_on_conflict`` the same result is returned."""
        target = branch("bar_3")
        vs.create_reference(target, foo.initial)
        self.commit(vs, target, Put(key("t1"), table("v1_4")))
        current = vs.get_value(target, key("t1"))
        before = storage_snapshot(persist, vs)
        expected_details = {
            key("t1"): KeyDetails(
                NORMAL, Conflict(ConflictType.KEY_EXISTS, key("t1"), "key 't1' already exists", current)
            ),
            key("t2"): KeyDetails(NORMAL),
            key("t4"): KeyDetails(NORMAL),
        }
        for dry_run in (False, True):
            with pytest.raises(
                MergeConflictError, match=exactly("The following keys have been changed in conflict: 't1'")
            ) as e:
                vs.merge(FOO, target, foo.initial, source_hash=foo.third, dry_run=dry_run)
            result: MergeResult = e.value.result
            assert isinstance(e.value, ReferenceConflictError)
            assert sorted((c.conflict_type.name, str(c.key), c.message) for c in e.value.conflicts) == [
                ("KEY_CONFLICT", "t2", "UNKNOWN"),
                ("KEY_CONFLICT", "t4", "UNKNOWN"),
                ("KEY_EXISTS", "t1", "key 't1' already exists"),
            ]
            assert (result.applied, result.successful, result.was_dry_run) == (False, False, dry_run)
            assert result.details == expected_details
            assert storage_snapshot(persist, vs) == before
        returned = vs.merge(FOO, target, raise_on_conflict=False)
        assert (returned.applied, returned.successful) == (False, False)
        assert returned.details == expected_details
        assert storage_snapshot(persist, vs) == before

    @pytest.mark.lochkit_requires("storage_access")
    def test_merge_key_behavior_validation(self, vs: VersionStore, persist: Persist, foo: FooHistory) -> None:
        """Listed behaviours must be used ("Not all merge key behaviors ... [not.used, un.used]");
        DROP/FORCE must not carry resolved content; NORMAL or FORCE with a wrong expected target is a
        VALUE_DIFFERS conflict recorded under the given behaviour. Nothing is written, dry run or not."""
        target = branch("mergeKeyBehaviorValidation")
        vs.create_reference(target, foo.first)
        before = storage_snapshot(persist, vs)
        c11 = vs.get_value(foo.first, key("t1"))
        t3_now = vs.get_value(target, key("t3"))
        for dry_run in (False, True):

            def merge(*behaviors: MergeKeyBehavior, dry_run: bool = dry_run) -> MergeResult:
                return vs.merge(FOO, target, source_hash=foo.third, key_behaviors=behaviors, dry_run=dry_run)

            with pytest.raises(
                ValueError,
                match=exactly(
                    "Not all merge key behaviors specified in the request have been used. "
                    "The following keys were not used: [not.used, un.used]"
                ),
            ):
                merge(MergeKeyBehavior(key("not.used"), DROP), MergeKeyBehavior(key("un.used"), DROP))
            for behavior in (DROP, FORCE):
                with pytest.raises(
                    ValueError,
                    match=exactly(
                        "MergeKeyBehavior.resolvedContent must be null for "
                        f"MergeBehavior.{behavior.value} for t3"
                    ),
                ):
                    merge(MergeKeyBehavior(key("t3"), behavior, table("v3_1"), table("v1_1")))
            for behavior in (NORMAL, FORCE):
                with pytest.raises(
                    MergeConflictError,
                    match=exactly("The following keys have been changed in conflict: 't3'"),
                ) as e:
                    merge(MergeKeyBehavior(key("t3"), behavior, expected_target_content=c11))
                result: MergeResult = e.value.result
                assert (result.applied, result.successful) == (False, False)
                assert result.details[key("t3")] == KeyDetails(
                    behavior,
                    Conflict(
                        ConflictType.VALUE_DIFFERS,
                        key("t3"),
                        "values of existing and expected content for key 't3' are different",
                        t3_now,
                    ),
                )
            assert storage_snapshot(persist, vs) == before

    def test_resolving_a_conflict_with_resolved_content(self, vs: VersionStore, foo: FooHistory) -> None:
        """Both sides updated t2. A plain merge conflicts. Resolved content with a wrong expected
        target is a VALUE_DIFFERS ReferenceConflictError; resolved content without an expected target
        is invalid; with the right expected target the merge applies the resolution, reporting the
        fork as merge base and the previous target head as effective target."""
        source = branch("mergeResolveConflict")
        vs.create_reference(source, foo.third)
        t2 = self.content_id(vs, FOO, "t2")
        target_head = self.commit(vs, FOO, Put(key("t2"), table("v2_2-target", t2)))
        source_head = self.commit(vs, source, Put(key("t2"), table("v2_2-source", t2)))
        on_target = vs.get_value(FOO, key("t2"))
        assert on_target is not None
        resolved = table("resolved", t2)

        with pytest.raises(MergeConflictError):
            vs.merge(source, FOO, source_hash=source_head)
        with pytest.raises(ReferenceConflictError) as e:
            vs.merge(
                source,
                FOO,
                key_behaviors=[MergeKeyBehavior(key("t2"), NORMAL, table("wrong", t2), resolved)],
            )
        assert [(c.conflict_type, c.key, c.message) for c in e.value.conflicts] == [
            (
                ConflictType.VALUE_DIFFERS,
                key("t2"),
                "values of existing and expected content for key 't2' are different",
            )
        ]
        with pytest.raises(
            ValueError,
            match=exactly(
                "MergeKeyBehavior.resolvedContent requires setting MergeKeyBehavior.expectedTarget "
                "as well for key t2"
            ),
        ):
            vs.merge(source, FOO, key_behaviors=[MergeKeyBehavior(key("t2"), NORMAL, None, resolved)])
        assert self.head(vs, FOO) == target_head

        result = vs.merge(
            source, FOO, key_behaviors=[MergeKeyBehavior(key("t2"), NORMAL, on_target, resolved)]
        )
        assert (result.applied, result.successful) == (True, True)
        assert (result.resultant_target_hash, result.common_ancestor, result.effective_target_hash) == (
            self.head(vs, FOO),
            foo.third,
            target_head,
        )
        assert vs.get_value(FOO, key("t2")) == resolved

    def test_expected_target_content_with_force_is_checked(self, vs: VersionStore, foo: FooHistory) -> None:
        """FORCE with the right expected target content takes the source's content."""
        source = branch("source")
        vs.create_reference(source, foo.third)
        t2 = self.content_id(vs, FOO, "t2")
        self.commit(vs, FOO, Put(key("t2"), table("target", t2)))
        self.commit(vs, source, Put(key("t2"), table("source", t2)))
        on_target = vs.get_value(FOO, key("t2"))
        result = vs.merge(source, FOO, key_behaviors=[MergeKeyBehavior(key("t2"), FORCE, on_target)])
        assert result.applied
        assert self.values(vs, FOO, ["t2"]) == {"t2": table("source")}

    @pytest.mark.parametrize(
        ("behaviors", "default", "expected"),
        [
            ({"common1": DROP, "common2": DROP}, NORMAL, "s1 c1t c2t"),
            ({"common1": FORCE, "common2": FORCE}, NORMAL, "s1 c1s c2s"),
            ({"common1": DROP, "common2": FORCE}, NORMAL, "s1 c1t c2s"),
            ({"common1": DROP, "common2": FORCE, "source1": DROP}, NORMAL, "c1t c2s"),
            ({"common1": DROP, "common2": FORCE}, DROP, "c1t c2s"),
            ({}, FORCE, "s1 c1s c2s"),
            ({"source1": DROP}, FORCE, "c1s c2s"),
            ({"common1": DROP, "source1": FORCE, "common2": FORCE}, DROP, "s1 c1t c2s"),
        ],
        ids=lambda v: v if isinstance(v, str) else None,
    )
    def test_merge_key_behaviors(
        self, vs: VersionStore, behaviors: dict[str, MergeBehavior], default: MergeBehavior, expected: str
    ) -> None:
        """Target and source both created common1 and common2 (a conflict each), and one key only
        they have. Per-key DROP keeps the target's content, FORCE takes the source's, DROP on a
        source-only key leaves it out; the default applies to every key without its own behaviour.
        The merge applies and moves the target. ``expected``: s1 = source1 merged, cNt/cNs = commonN
        from target/source."""
        target, source = branch("target"), branch("source")
        initial = self.commit(vs, MAIN, Put(key("initial"), table("initial")))
        vs.create_reference(target, initial)
        vs.create_reference(source, initial)
        target_head = self.commit(
            vs,
            target,
            Put(key("target1"), table("target1")),
            Put(key("common1"), table("common1onTarget")),
            Put(key("common2"), table("common2onTarget")),
        )
        self.commit(
            vs,
            source,
            Put(key("source1"), table("source1")),
            Put(key("common1"), table("common1onSource")),
            Put(key("common2"), table("common2onSource")),
        )
        result = vs.merge(
            source,
            target,
            target_head,
            default_behavior=default,
            key_behaviors=[MergeKeyBehavior(key(k), b) for k, b in behaviors.items()],
        )
        assert (result.applied, result.successful) == (True, True)
        assert result.resultant_target_hash != target_head
        want = {"initial": table("initial"), "target1": table("target1")}
        codes = expected.split()
        if "s1" in codes:
            want["source1"] = table("source1")
        for n in ("1", "2"):
            side = "Target" if f"c{n}t" in codes else "Source"
            want[f"common{n}"] = table(f"common{n}on{side}")
        assert self.values(vs, target, ["initial", "target1", "source1", "common1", "common2"]) == want
        for k, b in behaviors.items():
            if b is DROP:
                assert result.details[key(k)] == KeyDetails(DROP)

    @pytest.mark.parametrize("dry_run", [False, True], ids=["merge", "dry-run"])
    def test_merge_that_drops_every_change_creates_no_commit(self, vs: VersionStore, dry_run: bool) -> None:
        """Both sides created key1 and key2; DROPping both leaves nothing to merge: successful, not
        applied, no new commit, and the details name both dropped keys."""
        initial = self.commit(vs, MAIN, Put(key("base"), table("base")), message="common ancestor")
        source, target = branch("source"), branch("target")
        vs.create_reference(source, initial)
        vs.create_reference(target, initial)
        self.commit(vs, target, Put(key("key1"), table("value1")))
        target_head = self.commit(vs, target, Put(key("key2"), table("value1")))
        self.commit(vs, source, Put(key("key1"), table("value2")))
        source_head = self.commit(vs, source, Put(key("key2"), table("value2")))
        for default, behaviors, also_listed in (
            (NORMAL, [MergeKeyBehavior(key("key1"), DROP), MergeKeyBehavior(key("key2"), DROP)], {}),
            # A default DROP applies to every key the merge meets, the unchanged base too (Nessie's).
            (DROP, [], {key("base"): KeyDetails(DROP)}),
        ):
            result = vs.merge(
                source,
                target,
                target_head,
                source_hash=source_head,
                default_behavior=default,
                key_behaviors=behaviors,
                dry_run=dry_run,
            )
            assert (result.applied, result.successful) == (False, True)
            assert result.created_commits == []
            assert result.details == {
                key("key1"): KeyDetails(DROP),
                key("key2"): KeyDetails(DROP),
                **also_listed,
            }
            assert next(vs.get_commits(target)).hash == target_head

    @pytest.mark.lochkit_requires("storage_access")
    def test_dry_run_computes_the_merge_and_writes_nothing(
        self, vs: VersionStore, persist: Persist, foo: FooHistory
    ) -> None:
        """A dry run of a clean merge is successful but not applied, and leaves every object and
        reference as it was; the real merge afterwards applies."""
        target = branch("target")
        vs.create_reference(target, foo.initial)
        self.commit(vs, target, Put(key("mine"), table("mine")))
        before = storage_snapshot(persist, vs)
        result = vs.merge(FOO, target, dry_run=True)
        assert (result.applied, result.successful, result.was_dry_run) == (False, True, True)
        assert result.common_ancestor == foo.initial
        assert result.created_commits == []
        assert storage_snapshot(persist, vs) == before
        assert vs.merge(FOO, target).applied

    @pytest.mark.lochkit_requires("storage_access")
    def test_merge_into_an_unknown_branch_or_from_an_unknown_commit_writes_nothing(
        self, vs: VersionStore, persist: Persist, foo: FooHistory
    ) -> None:
        """Unknown target branch or unknown source commit: "not found", dry run or not, no writes."""
        vs.create_reference(branch("bar_6"), foo.initial)
        before = storage_snapshot(persist, vs)
        for dry_run in (False, True):
            with pytest.raises(ReferenceNotFoundError):
                vs.merge(FOO, branch("bar_5"), foo.initial, source_hash=foo.third, dry_run=dry_run)
            with pytest.raises(ReferenceNotFoundError):
                vs.merge(ObjId.from_hex("1234567890abcdef"), branch("bar_6"), foo.initial, dry_run=dry_run)
        assert storage_snapshot(persist, vs) == before

    # --- merge base ------------------------------------------------------------------------------

    def test_unrelated_branches_have_no_merge_base(self, vs: VersionStore) -> None:
        """Two branches both started at the empty commit share no commit: "No common ancestor"."""
        g = Graph(vs)
        g.commit("b1")
        g.commit("b2")
        g.commit("b1")
        g.commit("b2")
        with pytest.raises(ReferenceNotFoundError, match=r"^No common ancestor"):
            g.merge("b1", "b2")

    def test_merge_base_of_a_simple_fork(self, vs: VersionStore) -> None:
        """``A - C`` (b1) with ``B`` forked at A (b2): merging B onto C has base A."""
        g = Graph(vs)
        a = g.commit("b1")
        g.commit("b2", ("b1", a))
        g.commit("b1")
        assert g.merge_base("b2", "b1") == "a"

    def test_merge_base_after_a_merge_is_the_last_merged_source(self, vs: VersionStore) -> None:
        """``A-B-E`` (b2) merged at B into b1 (``A-C-D``): merging b1 back into b2 has base B."""
        g = Graph(vs)
        a = g.commit("b1")
        g.commit("b2", ("b1", a))
        g.commit("b1")
        g.merge("b2", "b1")
        g.commit("b2")
        assert g.merge_base("b1", "b2") == "b"

    def test_merge_base_after_a_merge_of_a_later_commit(self, vs: VersionStore) -> None:
        """b2 ``A-B-D-F``, b1 ``A-C-E`` with E merging D: merging b1 into b2 has base D."""
        g = Graph(vs)
        a = g.commit("b1")
        g.commit("b2", ("b1", a))
        g.commit("b1")
        g.commit("b2")
        g.merge("b2", "b1")
        g.commit("b2")
        assert g.merge_base("b1", "b2") == "d"

    def test_merge_base_across_three_branches(self, vs: VersionStore) -> None:
        """b3 forks from b2 at B; b2 and b1 are merged around (G, H, I): merging b3 onto b1 has base F
        (b1's head, already merged into b3 by I)."""
        g = Graph(vs)
        a = g.commit("b1")
        b = g.commit("b2", ("b1", a))
        g.commit("b1")
        g.commit("b2")
        g.commit("b3", ("b2", b))
        g.commit("b1")
        g.merge("b2", "b3")
        g.merge("b1", "b2")
        g.merge("b1", "b3")
        assert g.merge_base("b3", "b1") == "f"

    def test_merge_base_with_merges_from_two_branches(self, vs: VersionStore) -> None:
        """b2 (B) merged into b1 (C); b3 (D) forked at A merged into b1 (G); b2 merged into b3 (H);
        J on b3: merging b3 onto b1 has base D."""
        g = Graph(vs)
        a = g.commit("b1")
        g.commit("b2", ("b1", a))
        g.merge("b2", "b1")
        g.commit("b3", ("b1", a))
        g.commit("b1")
        g.commit("b1")
        g.merge("b3", "b1")
        g.merge("b2", "b3")
        g.commit("b3")
        assert g.merge_base("b3", "b1") == "d"

    def test_merge_base_after_a_cross_merge(self, vs: VersionStore) -> None:
        """b1 merges b2's B while b2 merges b1's C (criss-cross), both then move on. B and C are
        equally good bases; like Nessie the store picks by the order it reaches them (never by commit
        id, which would make the answer random): b2 onto b1 has base B, b1 onto b2 has base C (dry
        runs, so the graph stays as it is)."""
        g = Graph(vs)
        a = g.commit("b1")
        b = g.commit("b2", ("b1", a))
        c = g.commit("b1")
        g.merge("b1", "b2", at=c)
        g.merge("b2", "b1", at=b)
        g.commit("b2")
        g.commit("b1")
        assert g.merge_base("b2", "b1", dry_run=True) == "b"
        assert g.merge_base("b1", "b2", dry_run=True) == "c"

    def test_merge_base_of_nested_branches(self, vs: VersionStore) -> None:
        """b3 (B) and b2 (F) fork at A; b1 moves C-D-E; E is merged into b2 (G); H on b1; b1 merged
        into b3 (I): merging b3 onto b2 has base E."""
        g = Graph(vs)
        a = g.commit("b1")
        g.commit("b3", ("b1", a))
        g.commit("b1")
        g.commit("b1")
        e = g.commit("b1")
        g.commit("b2", ("b1", a))
        g.merge("b1", "b2", at=e)
        g.commit("b1")
        g.merge("b1", "b3")
        assert g.merge_base("b3", "b2", dry_run=True) == "e"

    def test_merge_base_of_a_long_lived_feature_branch(self, vs: VersionStore) -> None:
        """A feature branch b2 repeatedly merges b1 (at C, then at F) while both move on: merging b2
        into b1 has base F."""
        g = Graph(vs)
        a = g.commit("b1")
        g.commit("b2", ("b1", a))
        c = g.commit("b1")
        g.commit("b1")
        g.merge("b1", "b2", at=c)
        f = g.commit("b1")
        g.commit("b2")
        g.commit("b1")
        g.merge("b1", "b2", at=f)
        g.commit("b1")
        g.commit("b2")
        assert g.merge_base("b2", "b1") == "f"

    def test_merge_into_a_branch_at_the_empty_commit_applies_the_source(self, vs: VersionStore) -> None:
        """A target at the empty commit (a new repository's main, say) has that commit as common
        ancestor with any source, as its reference metadata says: the merge brings all of the
        source, in a merge commit. (Nessie: "No common ancestor".)"""
        head = self.commit(vs, MAIN, Put(key("n"), namespace("n")), Put(key("n.t"), table("t")))
        target = branch("empty")
        vs.create_reference(target)
        result = vs.merge(head, target, EMPTY_OBJ_ID)
        assert (result.applied, result.successful, result.common_ancestor) == (True, True, EMPTY_OBJ_ID)
        merged = self.head(vs, target)
        assert result.created_commits == [merged]
        assert next(iter(vs.get_commits(merged))).meta.parent_hashes == (str(EMPTY_OBJ_ID), str(head))
        assert self.values(vs, target, ["n", "n.t"]) == self.values(vs, MAIN, ["n", "n.t"])

    def test_merge_from_a_branch_at_the_empty_commit_changes_nothing(self, vs: VersionStore) -> None:
        """The empty commit is an ancestor of every commit, so a source there has nothing to merge:
        a success that writes nothing. (Nessie takes the target's head as the merge base and commits
        the removal of every key of the target.)"""
        head = self.commit(vs, MAIN, Put(key("t"), table("t")))
        source = branch("empty")
        vs.create_reference(source)
        for dry_run in (True, False):
            result = vs.merge(source, MAIN, head, dry_run=dry_run)
            assert (result.applied, result.successful, result.created_commits) == (False, True, [])
            assert (result.common_ancestor, result.resultant_target_hash) == (EMPTY_OBJ_ID, head)
        assert self.head(vs, MAIN) == head
        assert self.values(vs, MAIN, ["t"]) == {"t": table("t")}
