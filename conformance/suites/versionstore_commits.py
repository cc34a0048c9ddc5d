"""Version-store commits: building on the branch head, operations and their validation, content ids,
renames and re-creates, duplicate keys, commit metadata and validators.

The rules (Nessie's spec): new content carries no content id and gets one from the store; updating
existing content requires its content id; the id stays with the content across renames (a Delete of
the old key plus a Put of the new key with the same id); a key appears once per commit, except a
Delete followed by a Put without id (drop-and-create under the same name).
"""

from __future__ import annotations

import datetime
import re
import uuid

import pytest

from conformance.suites.versionstore_base import (
    MAIN,
    UNKNOWN_HASH,
    VersionStoreSuite,
    exactly,
    key,
    namespace,
    table,
    without_id,
)
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.versionstore import (
    CommitMeta,
    ContentKey,
    Delete,
    IcebergView,
    InvalidOperation,
    Operation,
    Put,
    ReferenceConflictError,
    ReferenceNotFoundError,
    Unchanged,
    VersionStore,
)
from persist_spi.versionstore.errors import ConflictType
from persist_spi.versionstore.refs import NamedRef, branch, tag


class VersionStoreCommitsSuite(VersionStoreSuite):
    area = "versionstore.commits"

    # --- committing to a branch ------------------------------------------------------------------

    def test_commit_to_branch_builds_on_head_even_with_a_stale_expected_hash(self, vs: VersionStore) -> None:
        """A new branch starts at the hash ``hash_on_reference`` reports. A commit's parent is the
        branch head; a commit with no operations against a stale expected hash touches no key, so it
        succeeds on top of the current head. Deleting with a wrong hash is a conflict; after a delete
        the branch is gone and deleting again is "not found"."""
        foo = branch("foo")
        created = vs.create_reference(foo).hash
        initial = vs.hash_on_reference(foo, None)
        assert created == initial == EMPTY_OBJ_ID

        first = vs.commit(foo, initial, CommitMeta("Some commit"), [])
        assert first.parent == initial
        assert vs.hash_on_reference(foo, None) == first.hash != initial

        second = vs.commit(foo, initial, CommitMeta("Another commit"), [])
        assert second.parent == first.hash
        log = list(vs.get_commits(foo))
        assert [(e.hash, e.meta.message, e.parent) for e in log] == [
            (second.hash, "Another commit", first.hash),
            (first.hash, "Some commit", initial),
        ]
        assert [e.hash for e in vs.get_commits(first.hash)] == [first.hash]

        with pytest.raises(ReferenceConflictError):
            vs.delete_reference(foo, initial)
        vs.delete_reference(foo, second.hash)
        with pytest.raises(ReferenceNotFoundError):
            vs.hash_on_reference(foo, None)
        assert [r.named_ref for r in vs.list_references()] == [MAIN]
        with pytest.raises(ReferenceNotFoundError):
            vs.delete_reference(foo, first.hash)

    def test_commit_some_operations_and_read_every_commit(self, vs: VersionStore) -> None:
        """Three commits with Put, Delete and Unchanged: keys and values read at each commit (and at
        the branch) reflect exactly that commit's state; deleted keys read as absent."""
        foo = branch("foo")
        base = vs.create_reference(foo).hash
        initial = self.first_commit(vs, foo, "Initial Commit")
        second, third = self.second_and_third_commits(vs, foo)

        assert [(e.hash, e.meta.message, e.parent) for e in vs.get_commits(foo)] == [
            (third, "Third Commit", second),
            (second, "Second Commit", initial),
            (initial, "Initial Commit", base),
        ]

        def keys_at(where: NamedRef | ObjId) -> set[str]:
            return {str(e.key) for e in vs.get_entries(where)}

        assert keys_at(foo) == {"t1", "t2", "t4"}
        assert keys_at(second) == {"t1", "t4"}
        assert keys_at(initial) == {"t1", "t2", "t3"}
        all_keys = ["t1", "t2", "t3", "t4"]
        assert self.values(vs, second, all_keys) == {"t1": table("v1_2"), "t4": table("v4_1")}
        assert self.values(vs, initial, all_keys) == {
            "t1": table("v1_1"),
            "t2": table("v2_1"),
            "t3": table("v3_1"),
        }
        expected_single: dict[NamedRef | ObjId, dict[str, str | None]] = {
            foo: {"t1": "v1_2", "t2": "v2_2", "t3": None, "t4": "v4_1"},
            second: {"t1": "v1_2", "t2": None, "t3": None, "t4": "v4_1"},
            initial: {"t1": "v1_1", "t2": "v2_1", "t3": "v3_1", "t4": None},
        }
        for where, expected in expected_single.items():
            for k, location in expected.items():
                value = without_id(vs.get_value(where, key(k)))
                assert value == (table(location) if location else None), (where, k)

    def test_commits_against_the_same_stale_hash_on_disjoint_keys_chain_linearly(
        self, vs: VersionStore
    ) -> None:
        """Several clients committing with the same old expected hash, each touching other keys, all
        succeed; each commit's parent is the head at that time, and the contents combine."""
        foo = branch("foo")
        base = vs.create_reference(foo).hash
        initial = self.first_commit(vs, foo, "Initial Commit")
        t1, t3 = self.content_id(vs, foo, "t1"), self.content_id(vs, foo, "t3")
        c1 = self.commit(vs, foo, Put(key("t1"), table("v1_2", t1)), expected=initial, message="T1")
        c2 = self.commit(vs, foo, Delete(key("t2")), expected=initial, message="T2")
        c3 = self.commit(vs, foo, Unchanged(key("t3")), expected=initial, message="T3")
        c4 = self.commit(
            vs,
            foo,
            Put(key("t1"), table("v1_3", t1)),
            Put(key("t3"), table("v3_2", t3)),
            expected=c1,
            message="Extra",
        )
        c5 = self.commit(vs, foo, Put(key("t2"), table("new_v2_1")), expected=c2, message="New T2")

        assert [(e.hash, e.parent) for e in vs.get_commits(foo)] == [
            (c5, c4),
            (c4, c3),
            (c3, c2),
            (c2, c1),
            (c1, initial),
            (initial, base),
        ]
        ks = ["t1", "t2", "t3"]
        assert self.values(vs, foo, ks) == {"t1": table("v1_3"), "t2": table("new_v2_1"), "t3": table("v3_2")}
        assert self.values(vs, c4, ks) == {"t1": table("v1_3"), "t3": table("v3_2")}
        assert self.values(vs, c3, ks) == {"t1": table("v1_2"), "t3": table("v3_1")}
        assert self.values(vs, c2, ks) == {"t1": table("v1_2"), "t3": table("v3_1")}
        assert self.values(vs, c1, ks) == {"t1": table("v1_2"), "t2": table("v2_1"), "t3": table("v3_1")}

    def test_commits_without_expected_hash_apply_on_head(self, vs: VersionStore) -> None:
        """Without an expected hash the head is the expected state: updates with the current ids,
        creates of deleted keys, Unchanged and Deletes of every key all succeed."""
        foo = branch("foo")
        vs.create_reference(foo)
        self.commit(vs, foo, Put(key("t1"), table("v1_1")), Put(key("t2"), table("v2_1")))
        t1 = self.content_id(vs, foo, "t1")
        self.commit(
            vs, foo, Put(key("t1"), table("v1_2", t1)), Delete(key("t2")), Put(key("t3"), table("v3_1"))
        )
        t3 = self.content_id(vs, foo, "t3")
        ks = ["t1", "t2", "t3"]

        put = self.commit(
            vs,
            foo,
            Put(key("t1"), table("v1_3", t1)),
            Put(key("t2"), table("v2_2")),
            Put(key("t3"), table("v3_2", t3)),
        )
        assert self.head(vs, foo) == put
        expected = {"t1": table("v1_3"), "t2": table("v2_2"), "t3": table("v3_2")}
        assert self.values(vs, foo, ks) == expected
        unchanged = self.commit(vs, foo, *(Unchanged(key(k)) for k in ks))
        assert self.head(vs, foo) == unchanged
        assert self.values(vs, foo, ks) == expected
        deleted = self.commit(vs, foo, *(Delete(key(k)) for k in ks))
        assert self.head(vs, foo) == deleted
        assert vs.get_values(foo, [key(k) for k in ks]) == {}

    def test_committing_to_a_tag_is_rejected(self, vs: VersionStore) -> None:
        """Only branches take commits."""
        vs.create_reference(tag("v1"))
        with pytest.raises(ValueError, match=exactly("Reference to commit into must be a branch.")):
            vs.commit(tag("v1"), None, CommitMeta("no"), [Put(key("t"), table("x"))])

    def test_commit_to_unknown_branch_or_hash_is_not_found(self, vs: VersionStore) -> None:
        """An unknown branch, an unknown expected hash, or an expected hash that exists but is not in
        the branch's history: all "not found", and nothing changes."""
        with pytest.raises(ReferenceNotFoundError, match="Named reference 'unknown' not found"):
            vs.commit(branch("unknown"), None, CommitMeta("x"), [Put(key("t"), table("t"))])
        foo, bar = branch("foo"), branch("bar")
        initial = vs.create_reference(foo).hash
        with pytest.raises(
            ReferenceNotFoundError, match=f"Could not find commit '{UNKNOWN_HASH}' in reference 'foo'"
        ):
            vs.commit(foo, UNKNOWN_HASH, CommitMeta("x"), [Put(key("t"), table("t"))])
        on_foo = self.commit(vs, foo, Put(key("t"), table("t")), expected=initial)
        vs.create_reference(bar)
        with pytest.raises(
            ReferenceNotFoundError, match=f"Could not find commit '{on_foo}' in reference 'bar'"
        ):
            vs.commit(bar, on_foo, CommitMeta("x"), [Put(key("t"), table("t"))])
        assert self.head(vs, bar) == EMPTY_OBJ_ID

    # --- content ids -----------------------------------------------------------------------------

    def test_new_content_gets_a_fresh_content_id_reported_by_the_commit(self, vs: VersionStore) -> None:
        """New content has no id; the store assigns a distinct UUID per key and reports it. Identical
        content under two keys is allowed and still gets two ids."""
        result = vs.commit(
            MAIN, None, CommitMeta("c"), [Put(key("a"), table("same")), Put(key("b"), table("same"))]
        )
        ids = {str(k): v for k, v in result.added_content_ids.items()}
        assert set(ids) == {"a", "b"}
        assert ids["a"] != ids["b"]
        for k, cid in ids.items():
            uuid.UUID(cid)
            assert self.content_id(vs, MAIN, k) == cid
        assert self.values(vs, MAIN, ["a", "b"]) == {"a": table("same"), "b": table("same")}

    def test_content_id_is_kept_by_updates_and_renames(self, vs: VersionStore) -> None:
        """Seed spec: content ids are immutable; an update keeps the id, a rename (Delete old key + Put
        new key with the same id) moves the id to the new key; updates report no new ids."""
        self.commit(vs, MAIN, Put(key("t"), table("v1")))
        cid = self.content_id(vs, MAIN, "t")
        update = vs.commit(MAIN, None, CommitMeta("u"), [Put(key("t"), table("v2", cid))])
        assert update.added_content_ids == {}
        assert self.content_id(vs, MAIN, "t") == cid
        content = vs.get_value(MAIN, key("t"))
        assert content is not None
        rename = vs.commit(MAIN, None, CommitMeta("r"), [Delete(key("t")), Put(key("renamed"), content)])
        assert rename.added_content_ids == {}
        assert vs.get_value(MAIN, key("t")) is None
        assert vs.get_value(MAIN, key("renamed")) == content
        assert self.content_id(vs, MAIN, "renamed") == cid

    def test_update_without_content_id_is_rejected(self, vs: VersionStore) -> None:
        """Updating existing content needs its content id; without it the Put would silently replace
        the content, so it is an invalid operation naming the key and current content."""
        self.commit(vs, MAIN, Put(key("t1"), table("v1")))
        current = vs.get_value(MAIN, key("t1"))
        with pytest.raises(
            InvalidOperation, match=exactly("New value to update existing key 't1' has no content ID")
        ) as e:
            self.commit(vs, MAIN, Put(key("t1"), table("v2")))
        assert isinstance(e.value, ValueError)
        assert [(c.conflict_type, c.current) for c in e.value.conflicts] == [
            (ConflictType.KEY_EXISTS, current)
        ]

    def test_update_with_another_content_id_is_rejected(self, vs: VersionStore) -> None:
        """A Put on an existing key must carry that key's content id, not another content's."""
        self.commit(vs, MAIN, Put(key("a"), table("a")), Put(key("b"), table("b")))
        a, b = self.content_id(vs, MAIN, "a"), self.content_id(vs, MAIN, "b")
        with pytest.raises(
            InvalidOperation,
            match=f"^Key 'a' already exists with content ID {a}, which is different from the content ID {b} "
            "in the operation$",
        ) as e:
            self.commit(vs, MAIN, Put(key("a"), table("x", b)))
        assert [c.conflict_type for c in e.value.conflicts] == [ConflictType.CONTENT_ID_DIFFERS]
        assert self.content_id(vs, MAIN, "a") == a

    def test_new_content_with_a_content_id_is_rejected(self, vs: VersionStore) -> None:
        """Seed spec: new content must not carry a content id (only a rename may, with the Delete of
        that id in the same commit) - neither a made-up id nor the id of content elsewhere."""
        self.commit(vs, MAIN, Put(key("a"), table("a")))
        a = self.content_id(vs, MAIN, "a")
        for content_id in (str(uuid.uuid4()), a):
            with pytest.raises(
                InvalidOperation, match=exactly("New value for key 'new' must not have a content ID")
            ):
                self.commit(vs, MAIN, Put(key("new"), table("n", content_id)))
        assert vs.get_value(MAIN, key("new")) is None

    def test_changing_the_content_type_is_rejected(self, vs: VersionStore) -> None:
        """Deliberate tightening (Nessie silently keeps the old payload): a Put whose content type
        differs from the existing content's is an InvalidOperation with a PAYLOAD_DIFFERS conflict
        naming the current content."""
        self.commit(vs, MAIN, Put(key("t"), table("v1")))
        current = vs.get_value(MAIN, key("t"))
        assert current is not None
        assert current.id is not None
        with pytest.raises(
            InvalidOperation,
            match=exactly("Key 't' holds content of another type; the type of content cannot change"),
        ) as e:
            self.commit(vs, MAIN, Put(key("t"), IcebergView(id=current.id, metadata_location="view")))
        assert [(c.conflict_type, c.current) for c in e.value.conflicts] == [
            (ConflictType.PAYLOAD_DIFFERS, current)
        ]
        assert vs.get_value(MAIN, key("t")) == current

    # --- duplicate keys, renames, re-creates -----------------------------------------------------

    @pytest.mark.parametrize(
        ("first", "second"),
        [
            ("put", "put"),
            ("put", "delete"),
            ("put", "unchanged"),
            ("delete", "delete"),
            ("delete", "unchanged"),
            ("unchanged", "put"),
            ("unchanged", "delete"),
            ("unchanged", "unchanged"),
        ],
    )
    def test_two_operations_on_one_key_are_rejected(self, vs: VersionStore, first: str, second: str) -> None:
        """A key may appear once per commit (Put then Delete is not a re-create): an argument error
        naming the key, and nothing is committed."""
        k = key("my.awesome.table")
        self.commit(vs, MAIN, Put(key("my"), namespace("my")))
        self.commit(vs, MAIN, Put(key("my.awesome"), namespace("my.awesome")))
        head = self.head(vs, MAIN)

        def op(kind: str) -> Operation:
            ops: dict[str, Operation] = {
                "put": Put(k, table("v")),
                "delete": Delete(k),
                "unchanged": Unchanged(k),
            }
            return ops[kind]

        with pytest.raises(ValueError, match=r"Duplicate key in commit operations: my\.awesome\.table"):
            vs.commit(MAIN, None, CommitMeta("dup"), [op(first), op(second)])
        assert self.head(vs, MAIN) == head

    @pytest.mark.parametrize("delete_first", [True, False], ids=["delete-then-put", "put-then-delete"])
    @pytest.mark.parametrize("same_key", [True, False], ids=["same-key", "other-key"])
    @pytest.mark.parametrize("reuse_id", [True, False], ids=["with-id", "without-id"])
    def test_delete_and_put_in_one_commit(
        self, vs: VersionStore, delete_first: bool, same_key: bool, reuse_id: bool
    ) -> None:
        """Delete + Put of the same key without id re-creates the content (new id); with the old id,
        or Put before Delete, it is a duplicate key. To another key it is a rename with the old id,
        and a drop-and-create without it."""
        original = key("original")
        self.commit(vs, MAIN, Put(original, table("loc")))
        old_id = self.content_id(vs, MAIN, "original")
        target = original if same_key else key("renamed")
        put = Put(target, table("loc", old_id if reuse_id else None))
        ops: list[Operation] = [Delete(original), put] if delete_first else [put, Delete(original)]
        if same_key and not (delete_first and not reuse_id):
            with pytest.raises(ValueError, match="Duplicate key"):
                vs.commit(MAIN, None, CommitMeta("rename"), ops)
            assert self.content_id(vs, MAIN, "original") == old_id
            return
        result = vs.commit(MAIN, None, CommitMeta("rename"), ops)
        present = {str(k) for k in vs.get_values(MAIN, [original, key("renamed")])}
        assert present == {str(target)}
        new_id = self.content_id(vs, MAIN, str(target))
        assert (new_id == old_id) == reuse_id
        assert result.added_content_ids == ({} if reuse_id else {target: new_id})

    def test_renaming_one_content_to_two_keys_is_rejected(self, vs: VersionStore) -> None:
        """A content id can live under one key only: renaming it to two keys in one commit is an
        argument error. The deleted id serves the first rename; the second Put is new content that
        carries an id (Nessie's message)."""
        self.commit(vs, MAIN, Put(key("a"), table("a")))
        content = vs.get_value(MAIN, key("a"))
        assert content is not None
        with pytest.raises(
            ValueError, match=exactly("New value for key 'c' must not have a content ID")
        ) as e:
            self.commit(vs, MAIN, Delete(key("a")), Put(key("b"), content), Put(key("c"), content))
        assert "\x00" not in str(e.value), "the message names the content key, not the internal store key"
        assert vs.get_value(MAIN, key("a")) == content

    @pytest.mark.parametrize("rename_first", [True, False], ids=["rename-then-re-add", "re-add-then-rename"])
    def test_rename_and_re_add_of_the_old_key_in_one_commit(
        self, vs: VersionStore, rename_first: bool
    ) -> None:
        """Delete of a key, a Put of its content id under a new key (a rename) and a Put without id
        at the old key (a re-add): the Puts count in their order. A deleted value serves either the
        rename or the re-add that comes first, so a re-add after the rename of its old value updates
        a live key without content id and is rejected (as Nessie does); a re-add before the rename
        creates new content and the rename still moves the old one."""
        self.commit(vs, MAIN, Put(key("t1"), table("old")))
        old_id = self.content_id(vs, MAIN, "t1")
        head = self.head(vs, MAIN)
        rename = Put(key("renamed"), table("old", old_id))
        re_add = Put(key("t1"), table("new"))
        puts: list[Operation] = [rename, re_add] if rename_first else [re_add, rename]
        ops: list[Operation] = [Delete(key("t1")), *puts]
        if rename_first:
            with pytest.raises(
                ValueError, match=exactly("New value to update existing key 't1' has no content ID")
            ):
                vs.commit(MAIN, None, CommitMeta("rename and re-add"), ops)
            assert self.head(vs, MAIN) == head
            return
        result = vs.commit(MAIN, None, CommitMeta("rename and re-add"), ops)
        assert self.content_id(vs, MAIN, "renamed") == old_id
        new_id = self.content_id(vs, MAIN, "t1")
        assert new_id != old_id
        assert result.added_content_ids == {key("t1"): new_id}

    def test_rename_twice_through_a_temporary_name(self, vs: VersionStore) -> None:
        """The backup/temp rename dance: create, create temp, rename original to backup, rename temp
        to original, drop backup - each step leaves exactly the expected key -> content map."""
        ks = ["table", "table_tmp", "table_backup"]
        self.commit(vs, MAIN, Put(key("table"), table("old")))
        old = vs.get_value(MAIN, key("table"))
        self.commit(vs, MAIN, Put(key("table_tmp"), table("new")))
        new = vs.get_value(MAIN, key("table_tmp"))
        assert old is not None
        assert new is not None
        assert vs.get_values(MAIN, [key(k) for k in ks]) == {key("table"): old, key("table_tmp"): new}
        self.commit(vs, MAIN, Delete(key("table")), Put(key("table_backup"), old))
        assert vs.get_values(MAIN, [key(k) for k in ks]) == {key("table_backup"): old, key("table_tmp"): new}
        self.commit(vs, MAIN, Delete(key("table_tmp")), Put(key("table"), new))
        assert vs.get_values(MAIN, [key(k) for k in ks]) == {key("table_backup"): old, key("table"): new}
        self.commit(vs, MAIN, Delete(key("table_backup")))
        assert vs.get_values(MAIN, [key(k) for k in ks]) == {key("table"): new}

    def test_drop_and_recreate_under_the_same_key(self, vs: VersionStore) -> None:
        """Put, Delete, Put again (in separate commits) works; each commit reads its own state and the
        re-created content has a new content id."""
        k = key("recreateTable")
        created = self.commit(vs, MAIN, Put(k, table("value")))
        first_id = self.content_id(vs, MAIN, "recreateTable")
        dropped = self.commit(vs, MAIN, Delete(k))
        assert vs.get_value(MAIN, k) is None
        assert vs.get_value(dropped, k) is None
        recreated = self.commit(vs, MAIN, Put(k, table("value")))
        assert without_id(vs.get_value(MAIN, k)) == table("value")
        assert without_id(vs.get_value(created, k)) == table("value")
        assert without_id(vs.get_value(recreated, k)) == table("value")
        assert self.content_id(vs, MAIN, "recreateTable") != first_id

    def test_same_key_created_independently_on_two_branches(self, vs: VersionStore) -> None:
        """Two branches from a common commit may each create the same key as new content."""
        ancestor = self.commit(vs, MAIN, Put(key("unrelated-table"), table("value")))
        b1, b2 = branch("branch1"), branch("branch2")
        assert vs.create_reference(b1, ancestor).hash == ancestor
        assert vs.create_reference(b2, ancestor).hash == ancestor
        self.commit(vs, b1, Put(key("some-table"), table("create table")))
        self.commit(vs, b2, Put(key("some-table"), table("create table")))
        assert self.values(vs, b1, ["some-table"]) == {"some-table": table("create table")}
        assert self.values(vs, b2, ["some-table"]) == {"some-table": table("create table")}
        assert self.content_id(vs, b1, "some-table") != self.content_id(vs, b2, "some-table")

    def test_content_keys_are_validated(self, vs: VersionStore) -> None:
        """A key has at least one element, no empty element, no U+0000/U+0001, and at most 500
        characters (elements plus separators); a key of exactly 500 characters can be committed."""
        for elements, message in (
            ((), "A content key needs at least one element"),
            (("a", ""), "Content key ['a', ''] has an empty element"),
            (("a\x00b",), "contains a control character"),
            (("x" * 501,), "Key too long, max allowed length: 500"),
            (("x" * 250, "y" * 250), "Key too long, max allowed length: 500"),
        ):
            with pytest.raises(ValueError, match=re.escape(message)):
                ContentKey(elements)
        longest = ContentKey(("x" * 250, "y" * 249))
        self.commit(vs, MAIN, Put(key("x" * 250), namespace("x" * 250)), Put(longest, table("long")))
        assert without_id(vs.get_value(MAIN, longest)) == table("long")
        assert [e.key for e in vs.get_entries(MAIN, prefix_key=key("x" * 250))] == [key("x" * 250), longest]
        single = ContentKey(("z" * 500,))  # one element of the full length
        self.commit(vs, MAIN, Put(single, table("single")))
        assert without_id(vs.get_value(MAIN, single)) == table("single")
        assert len(str(ContentKey(("a" * 100,) * 4 + ("b" * 96,)))) == 500  # 496 characters + 4 dots

    # --- metadata and validation -----------------------------------------------------------------

    def test_commit_metadata_round_trips(self, vs: VersionStore) -> None:
        """Message, authors (in order), committer, sign-offs, author time and properties come back from
        the log, with the commit time set by the store and the hash and parents filled in."""
        author_time = datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
        meta = CommitMeta(
            "first line\nsecond line",
            authors=("zed <z@example.com>", "amy <a@example.com>"),
            committer="bob",
            signed_off_by=("carl",),
            author_time=author_time,
            properties={"zz": "1", "aa": "2"},
        )
        before = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=5)
        result = vs.commit(MAIN, None, meta, [Put(key("t"), table("t"))])
        (entry,) = vs.get_commits(MAIN)
        got = entry.meta
        assert (got.message, got.authors, got.committer, got.signed_off_by) == (
            meta.message,
            meta.authors,
            meta.committer,
            meta.signed_off_by,
        )
        assert got.author_time == author_time
        assert dict(got.properties) == {"zz": "1", "aa": "2"}
        assert got.commit_time is not None
        assert got.commit_time >= before
        assert got.hash == str(result.hash)
        assert got.parent_hashes == (str(EMPTY_OBJ_ID),)

    def test_reserved_commit_properties_are_rejected(self, vs: VersionStore) -> None:
        """Properties may not shadow the headers the metadata itself uses."""
        with pytest.raises(ValueError, match="Commit property 'Author' is reserved"):
            vs.commit(
                MAIN, None, CommitMeta("x", properties={"Author": "someone"}), [Put(key("t"), table("t"))]
            )
        assert self.head(vs, MAIN) == EMPTY_OBJ_ID

    def test_validator_exception_propagates_and_nothing_is_committed(self, vs: VersionStore) -> None:
        """A commit validator sees the operations; the very exception it raises reaches the caller,
        and neither the branch nor its contents change."""
        head = self.head(vs, MAIN)
        failure = ArithmeticError("Whatever")
        seen: list[object] = []

        def validator(operations: object) -> None:
            seen.append(operations)
            assert vs.get_value(MAIN, key("table0")) is None
            raise failure

        ops = [Put(key("table0"), table("some value"))]
        with pytest.raises(ArithmeticError) as e:
            vs.commit(MAIN, None, CommitMeta("initial"), ops, validator)
        assert e.value is failure
        assert seen == [ops]
        assert self.head(vs, MAIN) == head
        assert vs.get_value(MAIN, key("table0")) is None
