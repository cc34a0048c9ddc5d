"""Version-store references: creating, looking up, listing, assigning and deleting branches and tags,
and the "not found" answer every operation gives for an unknown reference or commit.

Branches and tags share one short-name space (``x`` cannot be both); lookup by short name prefers
the branch. A reference points at a commit or at the empty ("no ancestor") commit. Tags may carry a
message, headers and a signature.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from conformance.suites.versionstore_base import (
    MAIN,
    UNKNOWN_HASH,
    VersionStoreSuite,
    exactly,
    key,
    table,
)
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.objs import TagObj
from persist_spi.persist import Persist
from persist_spi.versionstore import (
    CommitMeta,
    Delete,
    Put,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    VersionStore,
)
from persist_spi.versionstore.errors import ConflictType
from persist_spi.versionstore.refs import RefKind, branch, tag

MISSING = "this-one-should-not-exist"
NAMED_NOT_FOUND = f"Named reference '{MISSING}' not found"
COMMIT_NOT_FOUND = f"Commit '{UNKNOWN_HASH}' not found"
NOT_IN_MAIN = f"Could not find commit '{UNKNOWN_HASH}' in reference 'main'."

#: (operation, expected message) for every version-store operation given an unknown reference or
#: commit, as in Nessie's ``AbstractReferenceNotFound``.
NOT_FOUND_CASES: dict[str, tuple[Callable[[VersionStore], Any], str]] = {
    "get_commits/branch": (lambda s: list(s.get_commits(branch(MISSING))), NAMED_NOT_FOUND),
    "get_commits/tag": (lambda s: list(s.get_commits(tag(MISSING))), NAMED_NOT_FOUND),
    "get_commits/hash": (lambda s: list(s.get_commits(UNKNOWN_HASH)), COMMIT_NOT_FOUND),
    "get_value/branch": (lambda s: s.get_value(branch(MISSING), key("foo")), NAMED_NOT_FOUND),
    "get_value/tag": (lambda s: s.get_value(tag(MISSING), key("foo")), NAMED_NOT_FOUND),
    "get_value/hash": (lambda s: s.get_value(UNKNOWN_HASH, key("foo")), COMMIT_NOT_FOUND),
    "get_values/branch": (lambda s: s.get_values(branch(MISSING), [key("foo")]), NAMED_NOT_FOUND),
    "get_values/tag": (lambda s: s.get_values(tag(MISSING), [key("foo")]), NAMED_NOT_FOUND),
    "get_values/hash": (lambda s: s.get_values(UNKNOWN_HASH, [key("foo")]), COMMIT_NOT_FOUND),
    "get_entries/branch": (lambda s: list(s.get_entries(branch(MISSING))), NAMED_NOT_FOUND),
    "get_entries/tag": (lambda s: list(s.get_entries(tag(MISSING))), NAMED_NOT_FOUND),
    "get_entries/hash": (lambda s: list(s.get_entries(UNKNOWN_HASH)), COMMIT_NOT_FOUND),
    "hash_on_reference/branch": (lambda s: s.hash_on_reference(branch(MISSING), None), NAMED_NOT_FOUND),
    "hash_on_reference/hash": (lambda s: s.hash_on_reference(None, UNKNOWN_HASH), COMMIT_NOT_FOUND),
    "hash_on_reference/branch+hash": (lambda s: s.hash_on_reference(MAIN, UNKNOWN_HASH), NOT_IN_MAIN),
    "named_ref": (lambda s: s.named_ref(MISSING), NAMED_NOT_FOUND),
    "reference/tag": (lambda s: s.reference(tag(MISSING)), NAMED_NOT_FOUND),
    "assign/branch": (lambda s: s.assign(branch(MISSING), EMPTY_OBJ_ID, EMPTY_OBJ_ID), NAMED_NOT_FOUND),
    "assign/tag": (lambda s: s.assign(tag(MISSING), EMPTY_OBJ_ID, EMPTY_OBJ_ID), NAMED_NOT_FOUND),
    "assign/hash": (lambda s: s.assign(MAIN, EMPTY_OBJ_ID, UNKNOWN_HASH), COMMIT_NOT_FOUND),
    "delete/branch": (lambda s: s.delete_reference(branch(MISSING), EMPTY_OBJ_ID), NAMED_NOT_FOUND),
    "delete/tag": (lambda s: s.delete_reference(tag(MISSING), EMPTY_OBJ_ID), NAMED_NOT_FOUND),
    "create/hash": (lambda s: s.create_reference(branch("foo"), UNKNOWN_HASH), COMMIT_NOT_FOUND),
    "commit/branch": (
        lambda s: s.commit(branch(MISSING), None, CommitMeta("meta"), [Delete(key("meep"))]),
        NAMED_NOT_FOUND,
    ),
    "commit/hash": (
        lambda s: s.commit(MAIN, UNKNOWN_HASH, CommitMeta("meta"), [Delete(key("meep"))]),
        NOT_IN_MAIN,
    ),
    "transplant/branch": (
        lambda s: s.transplant(branch(MISSING), None, [UNKNOWN_HASH]),
        NAMED_NOT_FOUND,
    ),
    "transplant/expected-hash": (
        lambda s: s.transplant(MAIN, UNKNOWN_HASH, [UNKNOWN_HASH]),
        NOT_IN_MAIN,
    ),
    "transplant/sequence-hash": (lambda s: s.transplant(MAIN, None, [UNKNOWN_HASH]), COMMIT_NOT_FOUND),
    "diff/from-hash": (lambda s: list(s.get_diffs(UNKNOWN_HASH, MAIN)), COMMIT_NOT_FOUND),
    "diff/to-hash": (lambda s: list(s.get_diffs(MAIN, UNKNOWN_HASH)), COMMIT_NOT_FOUND),
    "diff/from-branch": (lambda s: list(s.get_diffs(branch(MISSING), MAIN)), NAMED_NOT_FOUND),
    "diff/to-branch": (lambda s: list(s.get_diffs(MAIN, branch(MISSING))), NAMED_NOT_FOUND),
    "merge/from-hash": (lambda s: s.merge(UNKNOWN_HASH, MAIN), COMMIT_NOT_FOUND),
    "merge/from-branch": (lambda s: s.merge(branch(MISSING), MAIN), NAMED_NOT_FOUND),
    "merge/into-branch": (lambda s: s.merge(MAIN, branch(MISSING)), NAMED_NOT_FOUND),
    "merge/expected-hash": (lambda s: s.merge(EMPTY_OBJ_ID, MAIN, UNKNOWN_HASH), NOT_IN_MAIN),
    "merge/source-hash": (
        lambda s: s.merge(MAIN, branch("other"), source_hash=UNKNOWN_HASH),
        NOT_IN_MAIN,
    ),
}


_MARKERS = itertools.count(1)


class VersionStoreReferencesSuite(VersionStoreSuite):
    area = "versionstore.references"

    @staticmethod
    def marker() -> Put:
        """A Put of a key of its own: a commit that only makes history still carries an operation, so
        the suite also runs against Nessie's REST API (it refuses commits without operations)."""
        return Put(key(f"marker{next(_MARKERS)}"), table("marker"))

    # --- branches and tags -----------------------------------------------------------------------

    def test_create_and_delete_branches(self, vs: VersionStore) -> None:
        """Branches created from the empty commit or from a commit report that hash; listing shows
        them; their logs show their commits only (the empty commit is never listed); creating an
        existing name fails; delete returns the hash and a second delete is "not found"."""
        foo, bar, baz = branch("foo"), branch("bar"), branch("baz")
        created = vs.create_reference(foo)
        assert (created.named_ref, created.hash) == (foo, EMPTY_OBJ_ID)
        assert vs.hash_on_reference(foo, None) == EMPTY_OBJ_ID
        assert vs.create_reference(bar, EMPTY_OBJ_ID).hash == EMPTY_OBJ_ID
        on_bar = self.commit(vs, bar, self.marker(), message="Some Commit")
        assert vs.create_reference(baz, on_bar).hash == on_bar

        listed = {(r.named_ref, r.hash) for r in vs.list_references()}
        assert listed == {(MAIN, EMPTY_OBJ_ID), (foo, EMPTY_OBJ_ID), (bar, on_bar), (baz, on_bar)}
        assert list(vs.get_commits(foo)) == []
        assert list(vs.get_commits(EMPTY_OBJ_ID)) == []
        assert [e.hash for e in vs.get_commits(bar)] == [on_bar]
        assert [e.hash for e in vs.get_commits(baz)] == [on_bar]
        assert [e.hash for e in vs.get_commits(on_bar)] == [on_bar]

        for target in (None, EMPTY_OBJ_ID):
            with pytest.raises(
                ReferenceAlreadyExistsError, match=exactly("Named reference 'foo' already exists.")
            ):
                vs.create_reference(foo, target)
        assert vs.delete_reference(foo, EMPTY_OBJ_ID) == EMPTY_OBJ_ID
        with pytest.raises(ReferenceNotFoundError, match=exactly("Named reference 'foo' not found")):
            vs.hash_on_reference(foo, None)
        assert {r.named_ref for r in vs.list_references()} == {MAIN, bar, baz}
        with pytest.raises(ReferenceNotFoundError):
            vs.delete_reference(foo, EMPTY_OBJ_ID)

    def test_create_and_delete_tags(self, vs: VersionStore) -> None:
        """Tags at the empty commit and at a commit; duplicate creation fails; a tag's log is its
        commit's history; delete then lookup and a second delete are "not found"."""
        foo = branch("foo")
        vs.create_reference(foo)
        commit = self.commit(vs, foo, self.marker(), message="Some commit")
        t, another = tag("tag"), tag("another-tag")
        assert (vs.create_reference(t, EMPTY_OBJ_ID).named_ref, vs.hash_on_reference(t, None)) == (
            t,
            EMPTY_OBJ_ID,
        )
        assert vs.create_reference(another, commit).hash == commit
        with pytest.raises(ReferenceAlreadyExistsError):
            vs.create_reference(t, EMPTY_OBJ_ID)
        listed = {(r.named_ref, r.hash) for r in vs.list_references()}
        assert listed == {(MAIN, EMPTY_OBJ_ID), (foo, commit), (t, EMPTY_OBJ_ID), (another, commit)}
        assert list(vs.get_commits(t)) == []
        assert [e.hash for e in vs.get_commits(another)] == [commit]
        assert vs.delete_reference(t, EMPTY_OBJ_ID) == EMPTY_OBJ_ID
        with pytest.raises(ReferenceNotFoundError):
            vs.hash_on_reference(t, None)
        assert {r.named_ref for r in vs.list_references()} == {MAIN, foo, another}
        with pytest.raises(ReferenceNotFoundError):
            vs.delete_reference(t, EMPTY_OBJ_ID)

    def test_delete_with_a_wrong_expected_hash_is_a_conflict(self, vs: VersionStore) -> None:
        """Delete names the hash the caller saw; another hash is UNEXPECTED_HASH and the reference stays."""
        foo = branch("foo")
        vs.create_reference(foo)
        head = self.commit(vs, foo, self.marker())
        with pytest.raises(
            ReferenceConflictError,
            match=exactly(
                f"Named-reference 'foo' is not at expected hash '{EMPTY_OBJ_ID}', but at '{head}'."
            ),
        ) as e:
            vs.delete_reference(foo, EMPTY_OBJ_ID)
        assert [c.conflict_type for c in e.value.conflicts] == [ConflictType.UNEXPECTED_HASH]
        assert vs.reference(foo).hash == head

    @pytest.mark.parametrize("existing", [RefKind.BRANCH, RefKind.TAG])
    def test_branch_and_tag_cannot_share_a_name(self, vs: VersionStore, existing: RefKind) -> None:
        """``x`` as a branch blocks a tag ``x`` and the other way round."""
        first, second = (branch("x"), tag("x")) if existing is RefKind.BRANCH else (tag("x"), branch("x"))
        vs.create_reference(first)
        with pytest.raises(ReferenceAlreadyExistsError, match=exactly("Named reference 'x' already exists.")):
            vs.create_reference(second)
        assert [r.named_ref for r in vs.list_references() if r.named_ref.name == "x"] == [first]

    @pytest.mark.lochkit_requires("tag_metadata")
    def test_tag_carries_message_headers_and_signature(self, vs: VersionStore, persist: Persist) -> None:
        """A tag may carry a message, headers and a signature, kept in a tag object the reference
        names; assigning the tag keeps them. Branches carry none."""
        head = self.commit(vs, MAIN, self.marker())
        headers = CommitHeaders([("b", "1"), ("a", "2")])
        info = vs.create_reference(
            tag("v1"), head, message="release 1", headers=headers, signature=b"\x00sig"
        )
        assert info.tag_info is not None
        assert vs.reference(tag("v1")).tag_info == info.tag_info
        stored = persist.fetch_as(info.tag_info, TagObj)
        assert (stored.message, stored.headers, stored.signature) == ("release 1", headers, b"\x00sig")
        vs.assign(tag("v1"), head, EMPTY_OBJ_ID)
        assert vs.reference(tag("v1")).tag_info == info.tag_info
        assert vs.create_reference(tag("plain"), head).tag_info is None
        with pytest.raises(ValueError, match="Only tags carry a message, headers or a signature"):
            vs.create_reference(branch("b"), head, message="no")

    def test_named_ref_lookup(self, vs: VersionStore) -> None:
        """Lookup by short name finds branches and tags at their heads; unknown names and hash-like
        strings are "not found"; a branch wins over a tag of the same name."""
        foo = branch("getNamedRef")
        vs.create_reference(foo)
        first = self.commit(vs, foo, self.marker(), message="First")
        assert (vs.named_ref("getNamedRef").named_ref, vs.named_ref("getNamedRef").hash) == (foo, first)
        second = self.commit(vs, foo, self.marker(), message="Second")
        third = self.commit(vs, foo, self.marker(), message="Third")
        b, t = branch(f"branch_{second}"), tag(f"tag_{third}")
        vs.create_reference(b, second)
        vs.create_reference(t, third)
        assert (vs.named_ref(b.name).named_ref, vs.named_ref(b.name).hash) == (b, second)
        assert (vs.named_ref(t.name).named_ref, vs.named_ref(t.name).hash) == (t, third)
        for unknown in ("unknown-ref", "1234567890abcdef", str(third)):
            with pytest.raises(
                ReferenceNotFoundError, match=exactly(f"Named reference '{unknown}' not found")
            ):
                vs.named_ref(unknown)

    def test_reference_names_are_case_sensitive(self, vs: VersionStore) -> None:
        """ "Foo" and "foo" are two references."""
        upper, lower = branch("Foo"), branch("foo")
        vs.create_reference(upper)
        vs.create_reference(lower)
        self.commit(vs, lower, self.marker())
        assert vs.named_ref("Foo").named_ref == upper
        assert vs.named_ref("Foo").hash == EMPTY_OBJ_ID
        assert vs.named_ref("foo").named_ref == lower
        assert vs.named_ref("foo").hash != EMPTY_OBJ_ID

    def test_reference_names_may_use_unicode_and_slashes(self, vs: VersionStore) -> None:
        """Names are arbitrary Unicode text, including slashes: created, found, listed and deleted
        under exactly that name."""
        names = ["ünï/cödé-π", "feature/x", "日本語"]
        for name in names:
            vs.create_reference(branch(name))
        self.commit(vs, branch("日本語"), Put(key("t"), table("t")))
        assert {r.named_ref.name for r in vs.list_references()} == {"main", *names}
        for name in names:
            assert vs.named_ref(name).named_ref == branch(name)
        assert self.values(vs, branch("日本語"), ["t"]) == {"t": table("t")}
        vs.delete_reference(branch("feature/x"), EMPTY_OBJ_ID)
        with pytest.raises(ReferenceNotFoundError, match=exactly("Named reference 'feature/x' not found")):
            vs.named_ref("feature/x")

    def test_list_branches_tags_or_both(self, vs: VersionStore) -> None:
        """Ten branches and ten tags with interleaving names: branch-only lists the ten plus main,
        tag-only the ten tags, both lists 21."""
        branches = {branch(f"{chr(ord('a') + i)}-b") for i in range(10)}
        tags = {tag(f"{chr(ord('a') + i)}-t") for i in range(10)}
        for ref in sorted(branches | tags, key=str):
            vs.create_reference(ref)
        assert {r.named_ref for r in vs.list_references([RefKind.BRANCH])} == branches | {MAIN}
        assert {r.named_ref for r in vs.list_references([RefKind.TAG])} == tags
        both = [r.named_ref for r in vs.list_references()]
        assert len(both) == 21
        assert set(both) == branches | tags | {MAIN}

    # --- assign ----------------------------------------------------------------------------------

    def test_assign_moves_branches_and_tags(self, vs: VersionStore) -> None:
        """Assign returns the previous and new hash; an unknown branch or tag is "not found", a wrong
        expected hash is a conflict (even when the target equals the current hash), an unknown target
        commit is "not found"; logs follow the new heads."""
        foo = branch("foo")
        initial = vs.create_reference(foo).hash
        commit = self.commit(vs, foo, self.marker(), message="Some commit")
        vs.create_reference(branch("bar"), commit)
        for name in ("tag1", "tag2", "tag3"):
            vs.create_reference(tag(name), commit)
        another = self.commit(vs, foo, self.marker(), message="Another commit")

        for name in ("tag2", "tag3"):
            assigned = vs.assign(tag(name), commit, another)
            assert (assigned.named_ref, assigned.previous_hash, assigned.current_hash) == (
                tag(name),
                commit,
                another,
            )
        with pytest.raises(ReferenceNotFoundError):
            vs.assign(branch("baz"), commit, another)
        with pytest.raises(ReferenceNotFoundError):
            vs.assign(tag("unknown-tag"), commit, another)
        for target in (commit, another):
            with pytest.raises(ReferenceConflictError) as e:
                vs.assign(tag("tag1"), initial, target)
            assert [c.conflict_type for c in e.value.conflicts] == [ConflictType.UNEXPECTED_HASH]
        with pytest.raises(ReferenceNotFoundError, match=exactly(COMMIT_NOT_FOUND)):
            vs.assign(tag("tag1"), commit, UNKNOWN_HASH)

        assert [(e.hash, e.meta.message, e.parent) for e in vs.get_commits(foo)] == [
            (another, "Another commit", commit),
            (commit, "Some commit", initial),
        ]
        assert [e.hash for e in vs.get_commits(branch("bar"))] == [commit]
        assert [e.hash for e in vs.get_commits(tag("tag1"))] == [commit]
        assert [e.hash for e in vs.get_commits(tag("tag2"))] == [another, commit]

    def test_assign_without_expected_hash_and_to_any_commit(self, vs: VersionStore) -> None:
        """Without an expected hash assign moves unconditionally; the target need not be in the
        reference's history (a branch may be reset to another branch's commit)."""
        other = branch("other")
        vs.create_reference(other)
        on_other = self.commit(vs, other, self.marker(), message="on other")
        self.commit(vs, MAIN, self.marker(), message="on main")
        assigned = vs.assign(MAIN, None, on_other)
        assert assigned.current_hash == on_other
        assert self.head(vs, MAIN) == on_other

    def test_assign_to_the_empty_commit_of_a_fresh_main(self, vs: VersionStore) -> None:
        """On a fresh repository main is at the empty commit with no log; a new branch and a new tag
        can be assigned to that empty commit."""
        main = vs.named_ref("main")
        assert list(vs.get_commits(main.hash)) == []
        assert [r.named_ref for r in vs.list_references()] == [MAIN]
        for ref in (branch("testBranch"), tag("testTag")):
            created = vs.create_reference(ref).hash
            assigned = vs.assign(ref, created, main.hash)
            assert (assigned.previous_hash, assigned.current_hash) == (created, main.hash)
            assert vs.named_ref(ref.name).hash == main.hash

    def test_assign_a_branch_back_to_the_empty_commit(self, vs: VersionStore) -> None:
        """A branch with commits can be reset to the empty commit; it then lists no content."""
        head = self.commit(vs, MAIN, Put(key("t"), table("t")))
        vs.assign(MAIN, head, EMPTY_OBJ_ID)
        assert self.head(vs, MAIN) == EMPTY_OBJ_ID
        assert list(vs.get_entries(MAIN)) == []

    # --- not found -------------------------------------------------------------------------------

    @pytest.mark.parametrize("case", sorted(NOT_FOUND_CASES))
    def test_unknown_reference_or_commit_is_not_found(self, vs: VersionStore, case: str) -> None:
        """Every operation given an unknown branch, tag or commit raises ReferenceNotFoundError with
        Nessie's message: "Named reference 'x' not found", "Commit 'h' not found", or - for a hash that
        must be in a branch's history - "Could not find commit 'h' in reference 'main'."."""
        vs.create_reference(branch("other"))
        operation, message = NOT_FOUND_CASES[case]
        with pytest.raises(ReferenceNotFoundError, match=exactly(message)):
            operation(vs)
