"""Version-store conflicts: a commit names the hash its client last saw (the expected hash); it is
built on the current head and rejected only when a key it touches changed since that hash.

Scenario used throughout (Nessie's ``commitConflictingOperations``): the initial commit creates t1
and t2; the second updates t1, deletes t2 and creates t3. Every operation below is committed against
the *initial* commit. Conflicts carry their type, the key, a lower-case message and the content the
key currently holds; a single conflict's exception message is capitalised with a trailing dot.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance.suites.versionstore_base import (
    MAIN,
    VersionStoreSuite,
    conflict_summary,
    exactly,
    key,
    table,
)
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.versionstore import (
    CommitMeta,
    Content,
    Delete,
    InvalidOperation,
    Put,
    ReferenceConflictError,
    Unchanged,
    VersionStore,
)
from persist_spi.versionstore.errors import ConflictType
from persist_spi.versionstore.refs import branch

FOO = branch("foo")


@dataclass
class Scenario:
    initial: ObjId
    second: ObjId
    t1: Content
    t2: Content
    t3: Content


class VersionStoreConflictsSuite(VersionStoreSuite):
    area = "versionstore.conflicts"

    @pytest.fixture
    def scenario(self, vs: VersionStore) -> Scenario:
        vs.create_reference(FOO)
        initial = self.commit(vs, FOO, Put(key("t1"), table("v1_1")), Put(key("t2"), table("v2_1")))
        t1, t2 = vs.get_value(FOO, key("t1")), vs.get_value(FOO, key("t2"))
        assert t1 is not None
        assert t2 is not None
        second = self.commit(
            vs,
            FOO,
            Put(key("t1"), table("v1_2", t1.id)),
            Delete(key("t2")),
            Put(key("t3"), table("v3_1")),
        )
        t1_now, t3 = vs.get_value(FOO, key("t1")), vs.get_value(FOO, key("t3"))
        assert t1_now is not None
        assert t3 is not None
        return Scenario(initial, second, t1_now, t2, t3)

    @staticmethod
    def rejected(vs: VersionStore, s: Scenario, *ops: Put | Delete | Unchanged) -> ReferenceConflictError:
        """Commit ``ops`` against the initial commit; return the conflict after checking that the
        branch did not move."""
        with pytest.raises(ReferenceConflictError) as e:
            VersionStoreSuite.commit(vs, FOO, *ops, expected=s.initial, message="Conflicting Commit")
        assert vs.reference(FOO).hash == s.second
        return e.value

    # --- a touched key changed since the expected hash -------------------------------------------

    def test_unchanged_on_a_key_deleted_since_is_key_does_not_exist(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """t2 was deleted after the expected hash: asserting it unchanged fails with KEY_DOES_NOT_EXIST
        (and the Put of a new key in the same commit is not applied)."""
        error = self.rejected(vs, scenario, Put(key("t4"), table("v4_1")), Unchanged(key("t2")))
        assert str(error) == "Key 't2' does not exist."
        assert conflict_summary(error.conflicts) == [
            (ConflictType.KEY_DOES_NOT_EXIST, "t2", "key 't2' does not exist")
        ]
        assert error.conflicts[0].current is None
        assert vs.get_value(FOO, key("t4")) is None

    @pytest.mark.parametrize("operation", ["unchanged", "put-with-id", "delete"])
    def test_touching_a_key_updated_since_is_value_differs(
        self, vs: VersionStore, scenario: Scenario, operation: str
    ) -> None:
        """t1 was updated after the expected hash: Unchanged, an update with its content id, and a
        Delete all fail with VALUE_DIFFERS, naming the content t1 holds now."""
        ops: dict[str, Put | Delete | Unchanged] = {
            "unchanged": Unchanged(key("t1")),
            "put-with-id": Put(key("t1"), table("v1_3", scenario.t1.id)),
            "delete": Delete(key("t1")),
        }
        op = ops[operation]
        extra = [Put(key("t4"), table("v4_1"))] if operation == "unchanged" else []
        error = self.rejected(vs, scenario, *extra, op)
        assert str(error) == "Values of existing and expected content for key 't1' are different."
        assert conflict_summary(error.conflicts) == [
            (
                ConflictType.VALUE_DIFFERS,
                "t1",
                "values of existing and expected content for key 't1' are different",
            )
        ]
        assert error.conflicts[0].current == scenario.t1

    def test_update_of_a_key_deleted_since_is_key_does_not_exist(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """t2 existed at the expected hash (so an update with its id is valid there) but is gone now."""
        error = self.rejected(vs, scenario, Put(key("t2"), table("v2_2", scenario.t2.id)))
        assert str(error) == "Key 't2' does not exist."
        assert conflict_summary(error.conflicts) == [
            (ConflictType.KEY_DOES_NOT_EXIST, "t2", "key 't2' does not exist")
        ]

    def test_create_of_a_key_created_since_is_key_exists(self, vs: VersionStore, scenario: Scenario) -> None:
        """t3 did not exist at the expected hash, so a Put without id is a create - but someone else
        created t3 since: KEY_EXISTS, naming the content t3 holds now."""
        error = self.rejected(vs, scenario, Put(key("t3"), table("v3_2")))
        assert str(error) == "Key 't3' already exists."
        assert conflict_summary(error.conflicts) == [
            (ConflictType.KEY_EXISTS, "t3", "key 't3' already exists")
        ]
        assert error.conflicts[0].current == scenario.t3

    def test_delete_of_a_key_created_since_is_payload_differs(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """t3 did not exist at the expected hash; deleting it there means "delete nothing", which
        differs from what t3 holds now: PAYLOAD_DIFFERS."""
        error = self.rejected(vs, scenario, Delete(key("t3")))
        assert str(error) == "Payload of existing and expected content for key 't3' are different."
        assert conflict_summary(error.conflicts) == [
            (
                ConflictType.PAYLOAD_DIFFERS,
                "t3",
                "payload of existing and expected content for key 't3' are different",
            )
        ]

    def test_unchanged_on_a_key_created_since_is_key_exists(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """Deliberate difference: lochkit's Unchanged on a key absent at the expected hash asserts that
        it is still absent, so t3 (created since) is KEY_EXISTS. Nessie reports KEY_DOES_NOT_EXIST."""
        error = self.rejected(vs, scenario, Unchanged(key("t3")))
        assert str(error) == "Key 't3' already exists."
        assert conflict_summary(error.conflicts) == [
            (ConflictType.KEY_EXISTS, "t3", "key 't3' already exists")
        ]

    def test_unchanged_on_a_key_absent_then_and_now_succeeds(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """Deliberate difference (see above): a key absent at the expected hash and still absent is
        unchanged, so the commit succeeds. Nessie reports KEY_DOES_NOT_EXIST."""
        head = self.commit(vs, FOO, Unchanged(key("never")), expected=scenario.initial)
        assert vs.reference(FOO).hash == head != scenario.second

    # --- invalid operations against the expected state -------------------------------------------

    def test_update_without_id_of_a_key_existing_at_the_expected_hash_is_invalid(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """Validation uses the expected commit's state: t1 existed there, so a Put without id is an
        update lacking its content id (an argument error, not a conflict to retry)."""
        with pytest.raises(
            InvalidOperation, match=exactly("New value to update existing key 't1' has no content ID")
        ):
            self.commit(vs, FOO, Put(key("t1"), table("v1_3")), expected=scenario.initial)
        assert vs.reference(FOO).hash == scenario.second

    def test_update_with_id_of_a_key_absent_at_the_expected_hash_is_invalid(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """t3 did not exist at the expected hash, so a Put with t3's id is new content carrying an id."""
        with pytest.raises(InvalidOperation, match="New value for key 't3' must not have a content ID"):
            self.commit(vs, FOO, Put(key("t3"), table("v3_2", scenario.t3.id)), expected=scenario.initial)
        assert vs.reference(FOO).hash == scenario.second

    # --- no touched key changed ------------------------------------------------------------------

    def test_stale_expected_hash_without_touched_key_change_succeeds(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """Seed spec: reject only when a touched key changed since the expected hash. Creating t4 and
        asserting nothing about t1..t3 against the initial commit succeeds on top of the head, and the
        later changes to t1/t2/t3 are kept."""
        result = vs.commit(FOO, scenario.initial, CommitMeta("t4"), [Put(key("t4"), table("v4_1"))])
        assert result.parent == scenario.second
        assert self.values(vs, FOO, ["t1", "t2", "t3", "t4"]) == {
            "t1": table("v1_2"),
            "t3": table("v3_1"),
            "t4": table("v4_1"),
        }

    def test_expected_hash_of_the_empty_commit_means_an_empty_expected_state(
        self, vs: VersionStore, scenario: Scenario
    ) -> None:
        """The empty ("no ancestor") hash is in every branch's history; against it every key is
        absent, so creating a key that exists now is KEY_EXISTS while creating a fresh one succeeds."""
        with pytest.raises(ReferenceConflictError, match=exactly("Key 't1' already exists.")):
            self.commit(vs, FOO, Put(key("t1"), table("again")), expected=EMPTY_OBJ_ID)
        self.commit(vs, FOO, Put(key("fresh"), table("f")), expected=EMPTY_OBJ_ID)
        assert self.values(vs, FOO, ["fresh"]) == {"fresh": table("f")}

    def test_several_conflicts_are_reported_together(self, vs: VersionStore, scenario: Scenario) -> None:
        """All conflicting keys of one commit are reported at once, in operation order, with the
        multi-conflict message."""
        error = self.rejected(vs, scenario, Delete(key("t1")), Put(key("t3"), table("v3_2")))
        assert [(c.conflict_type, str(c.key)) for c in error.conflicts] == [
            (ConflictType.VALUE_DIFFERS, "t1"),
            (ConflictType.KEY_EXISTS, "t3"),
        ]
        assert str(error) == (
            "There are multiple conflicts that prevent committing the provided operations: "
            "values of existing and expected content for key 't1' are different, "
            "key 't3' already exists."
        )

    def test_delete_of_a_key_that_never_existed_is_key_does_not_exist(self, vs: VersionStore) -> None:
        """Deleting an absent key on the head is a conflict, not a silent no-op."""
        with pytest.raises(ReferenceConflictError, match=exactly("Key 'nope' does not exist.")) as e:
            self.commit(vs, MAIN, Delete(key("nope")))
        assert [c.conflict_type for c in e.value.conflicts] == [ConflictType.KEY_DOES_NOT_EXIST]
        assert vs.reference(MAIN).hash == EMPTY_OBJ_ID
