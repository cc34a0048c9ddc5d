"""Version-store transplant: replaying a contiguous sequence of commits, one new commit each, on top
of a target branch (cherry-picking). Each replayed commit keeps its message and metadata and checks
its operations against the values the source commit saw; Unchanged operations are not replayed.
Commits that end up empty are skipped. When the target is at the sequence's base, the source
commits themselves become the target's history (a fast-forward: nothing is created). The branch
moves once, at the end; a conflict or a dry run writes nothing.

A NORMAL conflict raises ``MergeConflictError`` (carrying the result), a ``ReferenceConflictError``
as Nessie's MergeConflictException is.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance.suites.versionstore_base import (
    VersionStoreSuite,
    exactly,
    key,
    storage_snapshot,
    table,
    without_id,
)
from persist_spi.ids import ObjId
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
from persist_spi.versionstore.errors import ConflictType
from persist_spi.versionstore.refs import branch, tag
from persist_spi.versionstore.results import LogEntry

FOO = branch("foo")
ALL_KEYS = ["t1", "t2", "t3", "t4", "t5"]


@dataclass
class Source:
    """Nessie's ``AbstractTransplant`` setup on branch foo (from the empty commit): first creates
    t1, t2, t3; second updates t1, deletes t2 and t3, creates t4; third re-creates t2 and asserts t4
    unchanged."""

    initial: ObjId
    first: ObjId
    second: ObjId
    third: ObjId

    @property
    def all(self) -> list[ObjId]:
        return [self.first, self.second, self.third]


FINAL = {"t1": table("v1_2"), "t2": table("v2_2"), "t4": table("v4_1")}


def operations(entry: LogEntry) -> list[tuple[str, str, object]]:
    """(operation, key, content without id) of a log entry read with operations."""
    assert entry.operations is not None
    return [
        (type(op).__name__, str(op.key), without_id(op.content) if isinstance(op, Put) else None)
        for op in entry.operations
    ]


class VersionStoreTransplantSuite(VersionStoreSuite):
    area = "versionstore.transplant"

    @pytest.fixture
    def source(self, vs: VersionStore) -> Source:
        initial = vs.create_reference(FOO).hash
        author = CommitMeta("Initial Commit", authors=("ann",), properties={"origin": "foo"})
        first = vs.commit(
            FOO,
            None,
            author,
            [Put(key("t1"), table("v1_1")), Put(key("t2"), table("v2_1")), Put(key("t3"), table("v3_1"))],
        ).hash
        second, third = self.second_and_third_commits(vs, FOO)
        return Source(initial, first, second, third)

    def target_with_unrelated_commit(self, vs: VersionStore, name: str) -> ObjId:
        target = branch(name)
        vs.create_reference(target)
        return self.commit(vs, target, Put(key("t5"), table("v5_1")), message="Unrelated commit")

    # --- successful transplants ------------------------------------------------------------------

    def test_transplant_onto_the_same_base_writes_new_commits(self, vs: VersionStore, source: Source) -> None:
        """A target at the source's base gets three new commits, as Nessie's REST API writes them: the
        source's messages, authors and author times, a new commit time; the contents match."""
        target = branch("bar_1")
        vs.create_reference(target)
        result = vs.transplant(target, source.initial, source.all)
        assert (result.applied, result.successful) == (True, True)
        assert len(result.created_commits) == 3
        assert source.third not in result.created_commits
        assert result.resultant_target_hash == result.created_commits[-1] == self.head(vs, target)
        assert self.values(vs, target, ALL_KEYS) == FINAL
        replayed, original = list(vs.get_commits(target))[:3], list(vs.get_commits(FOO))[:3]
        for new, old in zip(replayed, original, strict=True):
            assert (new.meta.message, new.meta.authors, new.meta.author_time) == (
                old.meta.message,
                old.meta.authors,
                old.meta.author_time,
            )
            assert new.meta.commit_time is not None
            assert old.meta.commit_time is not None
            assert new.meta.commit_time >= old.meta.commit_time

    def test_transplant_keeping_commit_times_onto_the_same_base_is_a_fast_forward(
        self, vs: VersionStore, persist: Persist, source: Source
    ) -> None:
        """Nessie's version store called without a metadata rewriter keeps each commit's metadata
        whole (``transplant_commit_time=False``): a target at the source's base then gets the source
        commits themselves. Nothing is created, the logs and contents are the source's."""
        keeping = VersionStore(persist, transplant_commit_time=False)
        target = branch("bar_1")
        keeping.create_reference(target)
        result = keeping.transplant(target, source.initial, source.all)
        assert (result.applied, result.successful) == (True, True)
        assert result.created_commits == []
        assert result.resultant_target_hash == source.third == self.head(vs, target)
        assert self.values(vs, target, ALL_KEYS) == FINAL
        assert [e.meta for e in vs.get_commits(target)] == [e.meta for e in vs.get_commits(FOO)]

    def test_transplant_onto_a_diverged_target_replays_each_commit(
        self, vs: VersionStore, source: Source
    ) -> None:
        """A target with its own commit gets three new commits chained on its head, with the source's
        messages and metadata and the source's Puts and Deletes (the Unchanged is not replayed);
        content ids stay those of the source."""
        target_head = self.target_with_unrelated_commit(vs, "bar_2")
        target = branch("bar_2")
        result = vs.transplant(target, None, source.all)
        assert (result.applied, result.successful, result.effective_target_hash) == (True, True, target_head)
        assert len(result.created_commits) == 3
        assert result.resultant_target_hash == result.created_commits[-1] == self.head(vs, target)
        log = list(vs.get_commits(target, with_operations=True))
        created, previous = log[:3][::-1], log[3]
        assert previous.hash == target_head
        assert [e.hash for e in created] == result.created_commits
        assert [e.parent for e in created] == [target_head, *result.created_commits[:2]]
        assert [e.meta.message for e in created] == ["Initial Commit", "Second Commit", "Third Commit"]
        assert (created[0].meta.authors, dict(created[0].meta.properties)) == (("ann",), {"origin": "foo"})
        assert operations(created[0]) == [
            ("Put", "t1", table("v1_1")),
            ("Put", "t2", table("v2_1")),
            ("Put", "t3", table("v3_1")),
        ]
        assert operations(created[1]) == [  # deletes first, as Nessie lists them
            ("Delete", "t2", None),
            ("Delete", "t3", None),
            ("Put", "t1", table("v1_2")),
            ("Put", "t4", table("v4_1")),
        ]
        assert operations(created[2]) == [("Put", "t2", table("v2_2"))]
        assert self.values(vs, target, ALL_KEYS) == {**FINAL, "t5": table("v5_1")}
        for k in ("t1", "t2", "t4"):
            assert self.content_id(vs, target, k) == self.content_id(vs, FOO, k)

    def test_transplant_a_prefix_of_the_source(self, vs: VersionStore, source: Source) -> None:
        """Transplanting the first two commits creates two commits: t1 updated, t4 created, t2 and t3
        gone, the target's t5 kept."""
        target_head = self.target_with_unrelated_commit(vs, "bar_2")
        result = vs.transplant(branch("bar_2"), target_head, [source.first, source.second])
        assert len(result.created_commits) == 2
        log = list(vs.get_commits(branch("bar_2")))
        assert [(e.meta.message, e.parent) for e in log[:2]] == [
            ("Second Commit", result.created_commits[0]),
            ("Initial Commit", target_head),
        ]
        assert self.values(vs, branch("bar_2"), ALL_KEYS) == {
            "t1": table("v1_2"),
            "t4": table("v4_1"),
            "t5": table("v5_1"),
        }

    def test_transplant_a_later_part_onto_a_target_that_has_the_earlier_part(
        self, vs: VersionStore, source: Source
    ) -> None:
        """The sequence need not start at the source's root: [second, third] onto a branch at first
        replays just those two (here as a fast-forward)."""
        target = branch("at-first")
        vs.create_reference(target, source.first)
        result = vs.transplant(target, None, [source.second, source.third])
        assert result.applied
        assert self.values(vs, target, ALL_KEYS) == FINAL

    def test_transplant_after_the_target_deleted_a_key_it_created(
        self, vs: VersionStore, source: Source
    ) -> None:
        """The target created and deleted t1 on its own: no trace left, so the transplant succeeds."""
        target = branch("bar_4")
        vs.create_reference(target)
        self.commit(vs, target, Put(key("t1"), table("v1_4")))
        self.commit(vs, target, Delete(key("t1")))
        vs.transplant(target, None, source.all)
        assert self.values(vs, target, ALL_KEYS) == FINAL

    def test_transplant_without_expected_hash_ignores_other_target_changes(
        self, vs: VersionStore, source: Source
    ) -> None:
        """Without an expected hash the transplant applies on the current head; the target's own
        changes to keys the source does not touch stay."""
        target = branch("bar_7")
        vs.create_reference(target)
        self.commit(vs, target, Put(key("t5"), table("v5_1")))
        t5 = self.content_id(vs, target, "t5")
        self.commit(vs, target, Put(key("t5"), table("v1_4", t5)))
        vs.transplant(target, None, source.all)
        assert self.values(vs, target, ALL_KEYS) == {**FINAL, "t5": table("v1_4")}

    def test_transplant_carries_renames_with_their_content_ids(self, vs: VersionStore) -> None:
        """A transplanted rename (content unchanged, and content changed too) moves the content to
        its new key on the target with the same content id, without conflict."""
        vs.create_reference(FOO)
        base = self.commit(vs, FOO, Put(key("a"), table("a")), Put(key("z"), table("z")))
        ids = {k: self.content_id(vs, FOO, k) for k in ("a", "z")}
        target = branch("target")
        vs.create_reference(target, base)
        self.commit(vs, target, Put(key("other"), table("o")))
        a = vs.get_value(FOO, key("a"))
        assert a is not None
        r1 = self.commit(vs, FOO, Delete(key("a")), Put(key("b"), a))
        r2 = self.commit(vs, FOO, Delete(key("z")), Put(key("z2"), table("z-changed", ids["z"])))
        result = vs.transplant(target, None, [r1, r2])
        assert (result.applied, len(result.created_commits)) == (True, 2)
        assert self.values(vs, target, ["a", "b", "z", "z2", "other"]) == {
            "b": table("a"),
            "z2": table("z-changed"),
            "other": table("o"),
        }
        assert (self.content_id(vs, target, "b"), self.content_id(vs, target, "z2")) == (ids["a"], ids["z"])

    @pytest.mark.lochkit_requires("storage_access")
    def test_dry_run_computes_the_transplant_and_writes_nothing(
        self, vs: VersionStore, persist: Persist, source: Source
    ) -> None:
        """A clean dry run is successful, not applied, and leaves every object and reference as it was."""
        target_head = self.target_with_unrelated_commit(vs, "dry")
        before = storage_snapshot(persist, vs)
        result = vs.transplant(branch("dry"), None, source.all, dry_run=True)
        assert (result.applied, result.successful, result.was_dry_run) == (False, True, True)
        assert result.created_commits == []
        assert storage_snapshot(persist, vs) == before
        assert self.head(vs, branch("dry")) == target_head

    # --- conflicts and behaviours ----------------------------------------------------------------

    @pytest.mark.lochkit_requires("storage_access")
    @pytest.mark.parametrize("dry_run", [False, True], ids=["transplant", "dry-run"])
    def test_conflicting_transplant_writes_nothing(
        self, vs: VersionStore, persist: Persist, source: Source, dry_run: bool
    ) -> None:
        """The target created its own t1, so replaying the creation of t1 conflicts (KEY_EXISTS):
        MergeConflictError naming t1 and the target's content; no object or reference is written."""
        target = branch("bar_3")
        vs.create_reference(target)
        self.commit(vs, target, Put(key("t1"), table("v1_4")))
        current = vs.get_value(target, key("t1"))
        before = storage_snapshot(persist, vs)
        with pytest.raises(
            MergeConflictError, match=exactly("The following keys have been changed in conflict: 't1'")
        ) as e:
            vs.transplant(target, source.initial, source.all, dry_run=dry_run)
        assert isinstance(e.value, ReferenceConflictError)
        details = e.value.result.details[key("t1")]
        assert details.conflict is not None
        assert (details.behavior, details.conflict.conflict_type, details.conflict.current) == (
            MergeBehavior.NORMAL,
            ConflictType.KEY_EXISTS,
            current,
        )
        assert storage_snapshot(persist, vs) == before

    def test_conflict_resolved_with_force_or_drop(self, vs: VersionStore, source: Source) -> None:
        """With FORCE for t1 the source's t1 replaces the target's; with DROP the target's t1 stays
        (and the later update of the source's t1 is dropped too, as it conflicts as well)."""
        for name, behavior, t1 in (
            ("forced", MergeBehavior.FORCE, "v1_2"),
            ("dropped", MergeBehavior.DROP, "v1_4"),
        ):
            target = branch(name)
            vs.create_reference(target)
            self.commit(vs, target, Put(key("t1"), table("v1_4")))
            result = vs.transplant(
                target, None, source.all, key_behaviors=[MergeKeyBehavior(key("t1"), behavior)]
            )
            assert (result.applied, result.successful) == (True, True), name
            assert self.values(vs, target, ["t1", "t4"]) == {"t1": table(t1), "t4": table("v4_1")}, name

    def test_key_behaviors_for_keys_without_conflict_count_as_used(
        self, vs: VersionStore, source: Source
    ) -> None:
        """A behaviour for a key the transplanted commits touch is used even when that key does not
        conflict; a behaviour for a key they never touch is reported as unused."""
        target_head = self.target_with_unrelated_commit(vs, "used")
        result = vs.transplant(
            branch("used"),
            target_head,
            source.all,
            key_behaviors=[MergeKeyBehavior(key("t4"), MergeBehavior.FORCE)],
        )
        assert result.applied
        with pytest.raises(
            ValueError,
            match=exactly(
                "Not all merge key behaviors specified in the request have been used. "
                "The following keys were not used: [not.used]"
            ),
        ):
            vs.transplant(
                branch("used"),
                None,
                [source.first],
                default_behavior=MergeBehavior.FORCE,
                key_behaviors=[MergeKeyBehavior(key("not.used"), MergeBehavior.DROP)],
                dry_run=True,
            )

    def test_transplant_that_drops_every_change_creates_no_commit(
        self, vs: VersionStore, source: Source
    ) -> None:
        """Both sides created key1 and key2; DROPping both leaves the replayed commits empty, so they
        are skipped and the target does not move."""
        src, target = branch("source"), branch("target")
        vs.create_reference(src, source.initial)
        vs.create_reference(target, source.initial)
        self.commit(vs, target, Put(key("key1"), table("v1_1")))
        target_head = self.commit(vs, target, Put(key("key2"), table("v2_1")))
        s1 = self.commit(vs, src, Put(key("key1"), table("v1_2")))
        s2 = self.commit(vs, src, Put(key("key2"), table("v2_2")))
        result = vs.transplant(
            target,
            target_head,
            [s1, s2],
            key_behaviors=[
                MergeKeyBehavior(key("key1"), MergeBehavior.DROP),
                MergeKeyBehavior(key("key2"), MergeBehavior.DROP),
            ],
        )
        assert (result.applied, result.successful) == (False, True)
        assert result.created_commits == []
        assert next(vs.get_commits(target)).hash == target_head
        assert self.values(vs, target, ["key1", "key2"]) == {"key1": table("v1_1"), "key2": table("v2_1")}

    # --- invalid requests ------------------------------------------------------------------------

    @pytest.mark.lochkit_requires("storage_access")
    @pytest.mark.parametrize("dry_run", [False, True], ids=["transplant", "dry-run"])
    def test_unknown_target_commit_or_expected_hash_is_not_found_without_writes(
        self, vs: VersionStore, persist: Persist, source: Source, dry_run: bool
    ) -> None:
        """Unknown target branch, unknown commit in the sequence, and an expected hash from an
        unrelated branch are all "not found"; nothing is written."""
        other = branch("bar")
        vs.create_reference(other)
        unrelated = self.commit(vs, other, Put(key("t1"), table("v1_1")))
        vs.create_reference(branch("bar_1"))
        before = storage_snapshot(persist, vs)
        with pytest.raises(ReferenceNotFoundError, match=exactly("Named reference 'bar_5' not found")):
            vs.transplant(branch("bar_5"), source.initial, source.all, dry_run=dry_run)
        missing = ObjId.from_hex("1234567890abcdef")
        with pytest.raises(ReferenceNotFoundError, match=exactly(f"Commit '{missing}' not found")):
            vs.transplant(branch("bar_1"), source.initial, [missing], dry_run=dry_run)
        with pytest.raises(
            ReferenceNotFoundError,
            match=exactly(f"Could not find commit '{unrelated}' in reference 'bar_1'."),
        ):
            vs.transplant(branch("bar_1"), unrelated, source.all, dry_run=dry_run)
        assert storage_snapshot(persist, vs) == before

    @pytest.mark.parametrize("dry_run", [False, True], ids=["transplant", "dry-run"])
    def test_sequence_must_be_contiguous_and_in_order(
        self, vs: VersionStore, source: Source, dry_run: bool
    ) -> None:
        """Each commit's parent must be the previous one: a reordered or gapped sequence is invalid."""
        target = branch("bar_8")
        vs.create_reference(target)
        for sequence in (
            [source.second, source.first, source.third],
            [source.first, source.third],
        ):
            with pytest.raises(ValueError, match=exactly("Sequence of hashes is not contiguous.")):
                vs.transplant(target, None, sequence, dry_run=dry_run)
        with pytest.raises(ValueError, match=exactly("No hashes to transplant")):
            vs.transplant(target, None, [], dry_run=dry_run)

    def test_transplant_into_a_tag_is_rejected(self, vs: VersionStore, source: Source) -> None:
        """Like commits and merges, transplants only go to branches; the tag does not move."""
        vs.create_reference(tag("release"), source.initial)
        with pytest.raises(ValueError, match=exactly("Reference to transplant into must be a branch.")):
            vs.transplant(tag("release"), None, source.all)
        assert vs.reference(tag("release")).hash == source.initial
