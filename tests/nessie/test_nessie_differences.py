"""Each difference between lochkit and Nessie found in issue 13, reproduced on both: lochkit's version
store in-process and a real Nessie server over REST. Where lochkit keeps its own behaviour, the test
asserts each side's, as ``conformance/nessie_differences.py`` describes it (a change on either side
fails here first). Where lochkit now matches Nessie, the test asserts the one behaviour on both.

Every scenario starts from a commit that puts namespace ``n1`` and table ``t1`` on a fresh branch.
"""

from __future__ import annotations

import pytest
import requests

from conformance.differential.sides import Side, conflicts_of, key, namespace, outcome, table
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.versionstore import (
    CommitMeta,
    ContentKey,
    Delete,
    IcebergTable,
    IcebergView,
    InvalidOperation,
    MergeBehavior,
    MergeConflictError,
    MergeKeyBehavior,
    Put,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    Unchanged,
)
from persist_spi.versionstore.nessie_json import NessieServerError
from persist_spi.versionstore.refs import NamedRef, branch, tag
from persist_spi.versionstore.results import CommitResult, MergeResult


def start(side: Side) -> ObjId:
    """The common start: namespace n1 and table t1 on main."""
    return side.commit(Put(key("n1"), namespace("n1")), Put(key("t1"), table("t1")))


def details(result: MergeResult) -> dict[str, tuple[str, str | None]]:
    return {
        str(k): (d.behavior.name, None if d.conflict is None else d.conflict.conflict_type.name)
        for k, d in result.details.items()
    }


# --- Found 1: deleting a namespace and creating content in it in one commit ---------------------


def test_deleting_a_namespace_while_creating_content_in_it(side: Side) -> None:
    """Deliberate: lochkit rejects the orphan (NAMESPACE_NOT_EMPTY); Nessie accepts it and leaves
    n1.t3 without its namespace."""
    start(side)
    result = outcome(lambda: side.commit(Delete(key("n1")), Put(key("n1.t3"), table("t3"))))
    if side.name == "lochkit":
        assert conflicts_of(result) == [("NAMESPACE_NOT_EMPTY", "n1")]
        assert side.keys() == {"n1": 4, "t1": 1}
    else:
        assert isinstance(result, ObjId)
        assert side.keys() == {"n1.t3": 1, "t1": 1}


def test_deleting_a_non_empty_namespace_while_creating_content_in_it(side: Side) -> None:
    """Matched: with another child in n1, both report NAMESPACE_NOT_EMPTY once, and nothing else."""
    side.commit(Put(key("n1"), namespace("n1")), Put(key("n1.t1"), table("t1")))
    result = outcome(lambda: side.commit(Delete(key("n1")), Put(key("n1.t3"), table("t3"))))
    assert conflicts_of(result) == [("NAMESPACE_NOT_EMPTY", "n1")]


def test_deleting_a_missing_namespace_while_creating_content_in_it(side: Side) -> None:
    """Matched: n1 never existed, so the Put lacks its namespace (NAMESPACE_ABSENT, before the
    Delete of a missing key would be reported)."""
    side.commit(Put(key("t1"), table("t1")))
    result = outcome(lambda: side.commit(Delete(key("n1")), Put(key("n1.t3"), table("t3"))))
    assert conflicts_of(result) == [("NAMESPACE_ABSENT", "n1")]


def test_re_adding_a_namespace_with_new_content_in_it(side: Side) -> None:
    """Matched: deleting n1 and putting it back as a namespace in the same commit keeps new
    content under it valid."""
    start(side)
    side.commit(Delete(key("n1")), Put(key("n1"), namespace("n1")), Put(key("n1.t3"), table("t3")))
    assert side.keys() == {"n1": 4, "n1.t3": 1, "t1": 1}


# --- Found 6: a missing namespace needed twice --------------------------------------------------


def test_a_missing_namespace_is_reported_once(side: Side) -> None:
    """Matched: two new keys under the missing n1 report it once."""
    result = outcome(lambda: side.commit(Put(key("n1.m"), namespace("n1.m")), Put(key("n1.t3"), table("t3"))))
    assert conflicts_of(result) == [("NAMESPACE_ABSENT", "n1")]


def test_missing_namespaces_are_reported_up_to_the_root(side: Side) -> None:
    """Matched: a.b.c without a.b and a reports both, nearest first."""
    result = outcome(lambda: side.commit(Put(key("a.b.c"), table("c"))))
    assert isinstance(result, ReferenceConflictError)
    assert [(c.conflict_type.name, str(c.key)) for c in result.conflicts] == [
        ("NAMESPACE_ABSENT", "a.b"),
        ("NAMESPACE_ABSENT", "a"),
    ]


# --- Found 2: transplanting a commit onto its own parent ----------------------------------------


def test_transplant_onto_the_commits_own_parent_writes_a_new_commit(side: Side) -> None:
    """Matched: the replayed commit is new (new commit time, so a new id), with the source's
    message, authors and author time."""
    start(side)
    feature = side.new_branch()
    source = side.api.commit(
        feature,
        None,
        CommitMeta("update t1", authors=("alice",)),
        [Put(key("t1"), table("t1b", side.content_id("t1")))],
    ).hash
    result = side.api.transplant(side.main, None, [source])
    assert (result.successful, result.applied) == (True, True)
    assert len(result.created_commits) == 1
    assert result.created_commits[0] != source == side.head(feature)
    assert side.head() == result.created_commits[0]
    new, original = next(iter(side.api.get_commits(side.main))), next(iter(side.api.get_commits(feature)))
    assert (new.meta.message, new.meta.authors, new.meta.author_time) == (
        original.meta.message,
        original.meta.authors,
        original.meta.author_time,
    )
    assert new.meta.commit_time is not None
    assert original.meta.commit_time is not None
    assert new.meta.commit_time > original.meta.commit_time


# --- Found 3: transplanting a re-created key ----------------------------------------------------


def test_transplanting_a_re_created_key(side: Side) -> None:
    """Deliberate: lochkit replays [Delete t1, Put t1 (new)] onto an unchanged t1; Nessie reports
    CONTENT_ID_DIFFERS and applies nothing. A merge of the same commit applies on both."""
    start(side)
    feature, merge_target = side.new_branch(), side.new_branch()
    source = side.commit(Delete(key("t1")), Put(key("t1"), table("t1-new")), on=feature)
    old_id = side.content_id("t1")
    result = side.api.transplant(side.main, None, [source], raise_on_conflict=False)
    value = side.value("t1")
    assert value is not None
    if side.name == "lochkit":
        assert (result.successful, result.applied) == (True, True)
        assert details(result) == {"t1": ("NORMAL", None)}
        assert (value, value.id != old_id) == (table("t1-new", value.id), True)
    else:
        assert (result.successful, result.applied) == (False, False)
        assert details(result) == {"t1": ("NORMAL", "CONTENT_ID_DIFFERS")}
        assert value == table("t1", old_id)
    merged = side.api.merge(feature, merge_target, raise_on_conflict=False)
    assert (merged.successful, merged.applied) == (True, True)
    assert side.value("t1", merge_target) == table("t1-new", side.content_id("t1", feature))


def test_transplanting_a_re_created_key_onto_a_changed_one(side: Side) -> None:
    """Both refuse when the target changed t1 too, with different conflict types: VALUE_DIFFERS
    (lochkit, from the replayed delete) and CONTENT_ID_DIFFERS (Nessie)."""
    start(side)
    feature = side.new_branch()
    side.commit(Put(key("t1"), table("t1-target", side.content_id("t1"))))
    source = side.commit(Delete(key("t1")), Put(key("t1"), table("t1-new")), on=feature)
    result = side.api.transplant(side.main, None, [source], raise_on_conflict=False)
    assert (result.successful, result.applied) == (False, False)
    expected = "VALUE_DIFFERS" if side.name == "lochkit" else "CONTENT_ID_DIFFERS"
    assert details(result) == {"t1": ("NORMAL", expected)}


def test_transplanting_a_re_created_key_onto_a_branch_that_has_it(side: Side) -> None:
    """Both refuse to transplant [Delete t1, Put t1 (new)] onto the branch that made that commit,
    with different conflict types: CONTENT_ID_DIFFERS (lochkit: the replayed delete expects the old
    content id, the key holds the new one) and VALUE_DIFFERS (Nessie: it replays only the new
    content, under the new content id, expecting the old value)."""
    start(side)
    feature = side.new_branch()
    source = side.commit(Delete(key("t1")), Put(key("t1"), table("t1-new")), on=feature)
    result = side.api.transplant(feature, source, [source], raise_on_conflict=False)
    assert (result.successful, result.applied, result.resultant_target_hash) == (False, False, None)
    expected = "CONTENT_ID_DIFFERS" if side.name == "lochkit" else "VALUE_DIFFERS"
    assert details(result) == {"t1": ("NORMAL", expected)}
    assert side.head(feature) == source


# --- Found 4: merge key behaviours --------------------------------------------------------------


def test_drop_behaviour_for_an_unchanged_key_counts_as_used(side: Side) -> None:
    """Matched: {n1: DROP} while merging n1.t3 is accepted; n1 is listed as dropped."""
    start(side)
    feature = side.new_branch()
    side.commit(Put(key("n1.t3"), table("t3")), on=feature)
    result = side.api.merge(
        feature, side.main, key_behaviors=[MergeKeyBehavior(key("n1"), MergeBehavior.DROP)]
    )
    assert (result.successful, result.applied) == (True, True)
    assert details(result) == {"n1": ("DROP", None), "n1.t3": ("NORMAL", None)}
    assert side.keys() == {"n1": 4, "n1.t3": 1, "t1": 1}


def test_default_drop_lists_every_key_it_met(side: Side) -> None:
    """Matched: a default DROP leaves the source's change out and lists every key on either side
    of the diff as dropped, changed or not."""
    start(side)
    feature = side.new_branch()
    side.commit(Put(key("t5"), table("t5")), on=feature)
    result = side.api.merge(feature, side.main, default_behavior=MergeBehavior.DROP)
    assert (result.successful, result.applied) == (True, False)
    assert details(result) == {"n1": ("DROP", None), "t1": ("DROP", None), "t5": ("DROP", None)}


def test_namespaces_are_checked_before_unused_behaviours(side: Side) -> None:
    """Matched: the source drops n1, the target created n1.t3; with an unused behaviour for t9 the
    merge reports NAMESPACE_NOT_EMPTY, not the unused behaviour."""
    start(side)
    feature = side.new_branch()
    side.commit(Delete(key("n1")), on=feature)
    side.commit(Put(key("n1.t3"), table("t3")))
    result = outcome(
        lambda: side.api.merge(
            feature, side.main, key_behaviors=[MergeKeyBehavior(key("t9"), MergeBehavior.DROP)]
        )
    )
    assert conflicts_of(result) == [("NAMESPACE_NOT_EMPTY", "n1")]


def test_an_unused_behaviour_is_an_argument_error(side: Side) -> None:
    """Matched: a behaviour for a key on neither side is an argument error naming it."""
    start(side)
    feature = side.new_branch()
    side.commit(Put(key("t5"), table("t5")), on=feature)
    result = outcome(
        lambda: side.api.merge(
            feature, side.main, key_behaviors=[MergeKeyBehavior(key("t9"), MergeBehavior.DROP)]
        )
    )
    assert isinstance(result, ValueError)
    assert str(result) == (
        "Not all merge key behaviors specified in the request have been used. The following keys were "
        "not used: [t9]"
    )


# --- Found 5: merge details and raised conflicts ------------------------------------------------


def conflicting_merge(side: Side) -> NamedRef:
    """Source and target both create n2 (no conflict) and change t1 (conflict); the source adds
    t5 (no conflict)."""
    start(side)
    feature = side.new_branch()
    t1 = side.content_id("t1")
    side.commit(
        Put(key("n2"), namespace("n2")),
        Put(key("t1"), table("src", t1)),
        Put(key("t5"), table("t5")),
        on=feature,
    )
    side.commit(Put(key("n2"), namespace("n2")), Put(key("t1"), table("tgt", t1)))
    return feature


def test_merge_details_name_every_key_the_merge_touched(side: Side) -> None:
    """Matched: the conflict on t1, t5 merged without one; n2 (created on both sides, resolved
    silently) is not listed."""
    feature = conflicting_merge(side)
    result = side.api.merge(feature, side.main, raise_on_conflict=False)
    assert (result.successful, result.applied) == (False, False)
    assert details(result) == {"t1": ("NORMAL", "VALUE_DIFFERS"), "t5": ("NORMAL", None)}


def test_forced_keys_are_listed_as_forced(side: Side) -> None:
    """Matched: FORCE on t1 merges; the details list t1 as FORCE and t5 as NORMAL."""
    feature = conflicting_merge(side)
    result = side.api.merge(
        feature, side.main, key_behaviors=[MergeKeyBehavior(key("t1"), MergeBehavior.FORCE)]
    )
    assert (result.successful, result.applied) == (True, True)
    assert details(result) == {"t1": ("FORCE", None), "t5": ("NORMAL", None)}


def test_a_raised_merge_conflict_lists_every_key(side: Side) -> None:
    """Matched: the raised error is a reference conflict; its conflicts are the conflicting key with
    its conflict and every other key of the result as KEY_CONFLICT "UNKNOWN" (Nessie's error body,
    asked for without isReturnConflictAsResult)."""
    feature = conflicting_merge(side)
    if side.name == "lochkit":
        error = outcome(lambda: side.api.merge(feature, side.main))
        assert isinstance(error, MergeConflictError)
        message = str(error)
        conflicts = sorted((c.conflict_type.name, str(c.key), c.message) for c in error.conflicts)
    else:
        assert side.raw_url is not None
        answer = requests.post(
            f"{side.raw_url}/trees/{side.main.name}@{side.head()}/history/merge",
            json={"fromRefName": feature.name, "fromHash": str(side.head(feature))},
            headers={"Nessie-Client-Spec": "2"},
            timeout=60,
        )
        assert answer.status_code == 409
        body = answer.json()
        message = body["message"]
        conflicts = sorted(
            (c["conflictType"], ".".join(c["key"]["elements"]), c["message"])
            for c in body["errorDetails"]["conflicts"]
        )
    assert message == "The following keys have been changed in conflict: 't1'"
    assert conflicts == [
        ("KEY_CONFLICT", "t5", "UNKNOWN"),
        ("VALUE_DIFFERS", "t1", "values of existing and expected content for key 't1' are different"),
    ]


def test_a_raised_transplant_conflict_lists_every_key(side: Side) -> None:
    """Matched, as for merges: transplanting the source's commit raises a reference conflict whose
    conflicts are the conflicting key with its conflict and every other key the transplant
    resolved as KEY_CONFLICT "UNKNOWN" (Nessie's error body, asked for without
    isReturnConflictAsResult)."""
    feature = conflicting_merge(side)
    source = side.head(feature)
    if side.name == "lochkit":
        error = outcome(lambda: side.api.transplant(side.main, None, [source]))
        assert isinstance(error, MergeConflictError)
        message = str(error)
        conflicts = sorted((c.conflict_type.name, str(c.key), c.message) for c in error.conflicts)
    else:
        assert side.raw_url is not None
        answer = requests.post(
            f"{side.raw_url}/trees/{side.main.name}@{side.head()}/history/transplant",
            json={"fromRefName": feature.name, "hashesToTransplant": [str(source)]},
            headers={"Nessie-Client-Spec": "2"},
            timeout=60,
        )
        assert answer.status_code == 409, answer.text
        body = answer.json()
        message = body["message"]
        conflicts = sorted(
            (c["conflictType"], ".".join(c["key"]["elements"]), c["message"])
            for c in body["errorDetails"]["conflicts"]
        )
    assert message == "The following keys have been changed in conflict: 't1'"
    assert conflicts == [
        ("KEY_CONFLICT", "t5", "UNKNOWN"),
        ("VALUE_DIFFERS", "t1", "values of existing and expected content for key 't1' are different"),
    ]


# --- Found 7: messages --------------------------------------------------------------------------


def test_update_with_another_content_id_message(side: Side) -> None:
    start(side)
    current = side.content_id("t1")
    other = "00000000-0000-0000-0000-000000000001"
    result = outcome(lambda: side.commit(Put(key("t1"), table("x", other))))
    assert isinstance(result, ValueError)
    assert str(result) == (
        f"Key 't1' already exists with content ID {current}, which is different from the content ID "
        f"{other} in the operation"
    )


@pytest.mark.parametrize("existing", ["branch", "tag"])
def test_creating_an_existing_name_message(side: Side, existing: str) -> None:
    start(side)
    name = side.main.name
    if existing == "tag":
        name = f"t{side.main.name}"
        side.api.create_reference(tag(name), side.head())

    def create(ref: NamedRef) -> object:
        return outcome(lambda: side.api.create_reference(ref, side.head()))

    for ref in (branch(name), tag(name)):
        result = create(ref)
        assert isinstance(result, ReferenceAlreadyExistsError)
        assert str(result) == f"Named reference '{name}' already exists."


def test_writing_into_a_tag_messages(side: Side) -> None:
    head = start(side)
    release = tag(f"t{side.main.name}")
    side.api.create_reference(release, head)
    commit = outcome(lambda: side.api.commit(release, head, CommitMeta("m"), [Put(key("t9"), table("x"))]))
    merge = outcome(lambda: side.api.merge(side.main, release, head))
    transplant = outcome(lambda: side.api.transplant(release, head, [head]))
    # An input error on both sides: lochkit's own, and Nessie's 400 as the REST client raises it.
    assert [(type(e).__name__, str(e)) for e in (commit, merge, transplant)] == [
        ("InputError", "Reference to commit into must be a branch."),
        ("InputError", "Reference to merge into must be a branch."),
        ("InputError", "Reference to transplant into must be a branch."),
    ]


def test_a_missing_source_is_named_before_a_missing_target(side: Side) -> None:
    result = outcome(lambda: side.api.merge(branch("xnosuchsource"), branch("xnosuchtarget")))
    assert isinstance(result, ReferenceNotFoundError)
    assert str(result) == "Named reference 'xnosuchsource' not found"


def test_default_merge_message(side: Side) -> None:
    head = start(side)
    feature = side.new_branch()
    source = side.commit(Put(key("t5"), table("t5")), on=feature)
    side.api.merge(feature, side.main, head)
    entry = next(iter(side.api.get_commits(side.main)))
    assert entry.meta.message == f"Merged {feature.name} at {source} into {side.main.name} at {head}"


def test_unexpected_hash_names_no_key(side: Side) -> None:
    old = start(side)
    side.commit(Put(key("t5"), table("t5")))
    now = side.head()
    result = outcome(lambda: side.api.assign(side.main, old, EMPTY_OBJ_ID))
    assert isinstance(result, ReferenceConflictError)
    text = f"named-reference '{side.main.name}' is not at expected hash '{old}', but at '{now}'"
    assert [(c.conflict_type.name, c.key, c.message) for c in result.conflicts] == [
        ("UNEXPECTED_HASH", None, text)
    ]
    assert str(result) == "N" + text[1:] + "."


# --- Found 8: key ranges and empty commits ------------------------------------------------------


def test_entries_with_the_minimum_above_the_maximum(side: Side) -> None:
    """Both refuse min-key above max-key when a key lies between; with none between, Nessie answers
    nothing and lochkit still refuses."""
    side.commit(Put(key("a"), table("a")), Put(key("m"), table("m")), Put(key("z"), table("z")))
    with pytest.raises(ValueError, match=r"^'to' must be greater than 'from'"):
        list(side.api.get_entries(side.main, min_key=key("y"), max_key=key("b")))
    nothing_between = outcome(
        lambda: list(side.api.get_entries(side.main, min_key=key("c"), max_key=key("b")))
    )
    if side.name == "lochkit":
        assert isinstance(nothing_between, ValueError)
    else:
        assert nothing_between == []


def test_commit_without_operations(side: Side) -> None:
    """lochkit writes an empty commit, as Nessie's version store does; Nessie's REST API refuses."""
    head = start(side)
    result = outcome(lambda: side.api.commit(side.main, None, CommitMeta("empty"), []))
    if side.name == "lochkit":
        assert result.parent == head
        assert side.head() == result.hash != head
    else:
        assert isinstance(result, ValueError)
        assert "size must be between 1 and" in str(result)
        assert side.head() == head


def test_reading_at_a_hash_not_on_the_reference(side: Side) -> None:
    """lochkit (and the REST client, on its side) refuses ref@hash for a hash off the reference's
    history; Nessie's REST API reads it."""
    start(side)
    feature = side.new_branch()
    elsewhere = side.commit(Put(key("t5"), table("t5")), on=feature)
    result = outcome(lambda: side.api.hash_on_reference(side.main, elsewhere))
    assert isinstance(result, ReferenceNotFoundError)
    assert str(result) == f"Could not find commit '{elsewhere}' in reference '{side.main.name}'."
    if side.name == "nessie":
        assert side.raw_url is not None
        answer = requests.get(f"{side.raw_url}/trees/{side.main.name}@{elsewhere}/entries", timeout=60)
        assert answer.status_code == 200
        assert sorted(".".join(e["name"]["elements"]) for e in answer.json()["entries"]) == ["n1", "t1", "t5"]


# --- Found 9: Unchanged, renames ----------------------------------------------------------------


def test_unchanged_on_a_key_still_absent(side: Side) -> None:
    """With a stale expected hash, Unchanged on a key absent then and now: lochkit passes; Nessie
    reports KEY_DOES_NOT_EXIST. With the head as expected hash both pass."""
    old = start(side)
    side.commit(Put(key("t7"), table("t7")))
    stale = outcome(lambda: side.commit(Unchanged(key("t5")), Put(key("t6"), table("t6")), expected=old))
    if side.name == "lochkit":
        assert isinstance(stale, ObjId)
    else:
        assert conflicts_of(stale) == [("KEY_DOES_NOT_EXIST", "t5")]
    side.commit(Unchanged(key("t8")), Put(key("t9"), table("t9")))


def test_unchanged_on_a_key_created_since(side: Side) -> None:
    """t5 was created after the expected hash: lochkit reports KEY_EXISTS, Nessie PAYLOAD_DIFFERS."""
    old = start(side)
    side.commit(Put(key("t5"), table("t5")))
    result = outcome(lambda: side.commit(Unchanged(key("t5")), Put(key("t6"), table("t6")), expected=old))
    expected = "KEY_EXISTS" if side.name == "lochkit" else "PAYLOAD_DIFFERS"
    assert conflicts_of(result) == [(expected, "t5")]


def test_unchanged_on_a_key_deleted_since(side: Side) -> None:
    """Matched: t1 was deleted after the expected hash: KEY_DOES_NOT_EXIST."""
    old = start(side)
    side.commit(Delete(key("t1")))
    result = outcome(lambda: side.commit(Unchanged(key("t1")), Put(key("t6"), table("t6")), expected=old))
    assert conflicts_of(result) == [("KEY_DOES_NOT_EXIST", "t1")]


def renamed_on_a_branch(side: Side, changed: bool) -> tuple[NamedRef, ObjId, str]:
    start(side)
    feature = side.new_branch()
    t1 = side.content_id("t1")
    source = side.commit(
        Delete(key("t1")), Put(key("t1r"), table("t1-changed" if changed else "t1", t1)), on=feature
    )
    return feature, source, t1


def assert_rename_applied(side: Side, result: MergeResult, t1: str) -> None:
    """lochkit moved t1 to t1r (same content id); Nessie deleted t1 and never wrote t1r."""
    assert (result.successful, result.applied) == (True, True)
    if side.name == "lochkit":
        assert side.keys() == {"n1": 4, "t1r": 1}
        assert side.content_id("t1r") == t1
    else:
        assert side.keys() == {"n1": 4}


def test_merging_a_rename(side: Side) -> None:
    feature, _, t1 = renamed_on_a_branch(side, changed=False)
    assert_rename_applied(side, side.api.merge(feature, side.main), t1)


def test_transplanting_a_rename(side: Side) -> None:
    _, source, t1 = renamed_on_a_branch(side, changed=False)
    assert_rename_applied(side, side.api.transplant(side.main, None, [source]), t1)


def test_merging_a_rename_with_a_change(side: Side) -> None:
    """lochkit moves the changed content; Nessie reports KEY_EXISTS for the new key and applies
    nothing."""
    feature, _, t1 = renamed_on_a_branch(side, changed=True)
    result = side.api.merge(feature, side.main, raise_on_conflict=False)
    if side.name == "lochkit":
        assert (result.successful, result.applied) == (True, True)
        assert side.value("t1r") == table("t1-changed", t1)
    else:
        assert (result.successful, result.applied) == (False, False)
        assert details(result)["t1r"] == ("NORMAL", "KEY_EXISTS")
        assert side.keys() == {"n1": 4, "t1": 1}


# --- Nessie's own defects (written down, not copied) --------------------------------------------


def test_changing_the_content_type_of_a_key(side: Side) -> None:
    """lochkit refuses (PAYLOAD_DIFFERS); Nessie answers 400 yet writes it, and t1 becomes
    unreadable."""
    start(side)
    t1 = side.content_id("t1")
    result = outcome(lambda: side.commit(Put(key("t1"), IcebergView(id=t1, metadata_location="v"))))
    if side.name == "lochkit":
        assert isinstance(result, InvalidOperation)
        assert conflicts_of(result) == [("PAYLOAD_DIFFERS", "t1")]
        assert side.value("t1") == table("t1", t1)
    else:
        assert isinstance(result, ValueError)
        assert str(result) == "Bad Request"
        assert side.keys()["t1"] == 1
        unreadable = outcome(lambda: side.value("t1"))
        assert isinstance(unreadable, ValueError)


def test_re_creating_a_key_with_another_content_type(side: Side) -> None:
    """lochkit re-creates t1 as a view; Nessie answers 400, yet the commit lands and t1 cannot be
    read any more."""
    start(side)
    before = side.head()
    result = outcome(
        lambda: side.commit(Delete(key("t1")), Put(key("t1"), IcebergView(metadata_location="v")))
    )
    if side.name == "lochkit":
        assert isinstance(result, ObjId)
        assert side.keys() == {"n1": 4, "t1": 3}
        assert side.value("t1") == IcebergView(id=side.content_id("t1"), metadata_location="v")
    else:
        assert isinstance(result, ValueError)
        assert side.head() != before  # the "failed" commit landed
        assert side.keys() == {"n1": 4, "t1": 1}
        assert isinstance(outcome(lambda: side.value("t1")), ValueError)


def test_transplant_after_a_skipped_commit(side: Side) -> None:
    """[Put t5, Delete t5] onto a target that already has the Put: lochkit skips the first and
    replays the delete; Nessie fails with HTTP 500 (NullPointerException)."""
    start(side)
    feature = side.new_branch()
    put = side.commit(Put(key("t5"), table("t5")), on=feature)
    delete = side.commit(Delete(key("t5")), on=feature)
    side.api.transplant(side.main, None, [put])
    result = outcome(lambda: side.api.transplant(side.main, None, [put, delete]))
    if side.name == "lochkit":
        assert isinstance(result, MergeResult)
        assert (result.successful, result.applied) == (True, True)
        assert side.keys() == {"n1": 4, "t1": 1}
    else:
        assert isinstance(result, NessieServerError)
        assert result.status == 500
        assert "NullPointerException" in str(result)


def test_dry_run_transplant_of_dependent_commits(side: Side) -> None:
    """[Put t5, Delete t5] as a dry run: lochkit says it would succeed (as the real run does);
    Nessie reports KEY_DOES_NOT_EXIST for t5."""
    start(side)
    feature = side.new_branch()
    put = side.commit(Put(key("t5"), table("t5")), on=feature)
    delete = side.commit(Delete(key("t5")), on=feature)
    dry = side.api.transplant(side.main, None, [put, delete], dry_run=True, raise_on_conflict=False)
    if side.name == "lochkit":
        assert (dry.successful, dry.applied) == (True, False)
    else:
        assert (dry.successful, dry.applied) == (False, False)
        assert details(dry)["t5"] == ("NORMAL", "KEY_DOES_NOT_EXIST")
    real = side.api.transplant(side.main, None, [put, delete])
    assert (real.successful, real.applied) == (True, True)


def test_merging_unrelated_branches(side: Side) -> None:
    """Found by the differential machine: Nessie names the target's head first."""
    target_head = start(side)
    unrelated = side.ref("unrelated")
    side.api.create_reference(unrelated)
    source_head = side.commit(Put(key("t9"), table("t9")), on=unrelated)
    result = outcome(lambda: side.api.merge(unrelated, side.main))
    assert isinstance(result, ReferenceNotFoundError)
    assert str(result) == f"No common ancestor in parents of {target_head} and {source_head}"


def test_merging_into_a_branch_without_commits(side: Side) -> None:
    """Deliberate: the empty commit is the common ancestor of a branch still there and any source,
    so lochkit's merge brings everything; Nessie answers "No common ancestor" (while its reference
    metadata names the empty commit as the common ancestor)."""
    feature = side.new_branch()  # at main's head: the empty commit
    source_head = side.commit(Put(key("t1"), table("t1")), on=feature)
    result = outcome(lambda: side.api.merge(feature, side.main))
    if side.name == "lochkit":
        assert isinstance(result, MergeResult)
        assert (result.applied, result.common_ancestor) == (True, EMPTY_OBJ_ID)
        assert side.keys() == {"t1": 1}
    else:
        assert isinstance(result, ReferenceNotFoundError)
        assert str(result) == f"No common ancestor in parents of {EMPTY_OBJ_ID} and {source_head}"
        assert side.head() == EMPTY_OBJ_ID


def test_merging_from_a_branch_without_commits(side: Side) -> None:
    """Nessie's defect: merging a branch still at the empty commit commits the removal of every key
    of the target; lochkit has nothing to merge."""
    head = start(side)
    empty = side.ref("empty")
    side.api.create_reference(empty)
    result = outcome(lambda: side.api.merge(empty, side.main))
    assert isinstance(result, MergeResult)
    if side.name == "lochkit":
        assert (result.applied, result.successful, result.common_ancestor) == (False, True, EMPTY_OBJ_ID)
        assert side.head() == head
        assert side.keys() == {"n1": 4, "t1": 1}
    else:
        assert (result.applied, result.common_ancestor) == (True, head)
        assert side.keys() == {}


def test_conflicts_carry_the_current_content(side: Side) -> None:
    """lochkit's conflict names the key's current content; Nessie's has none."""
    old = start(side)
    t1 = side.content_id("t1")
    side.commit(Put(key("t1"), table("t1-new", t1)))
    result = outcome(lambda: side.commit(Put(key("t1"), table("t1-mine", t1)), expected=old))
    assert conflicts_of(result) == [("VALUE_DIFFERS", "t1")]
    assert isinstance(result, ReferenceConflictError)
    current = result.conflicts[0].current
    assert current == (table("t1-new", t1) if side.name == "lochkit" else None)


def test_a_property_named_like_metadata(side: Side) -> None:
    """lochkit refuses a property named 'author'; Nessie makes it the commit's author."""
    meta = CommitMeta("m", properties={"author": "someone"})
    result = outcome(lambda: side.api.commit(side.main, None, meta, [Put(key("t1"), table("t1"))]))
    if side.name == "lochkit":
        assert isinstance(result, ValueError)
        assert str(result) == "Commit property 'author' is reserved"
    else:
        entry = next(iter(side.api.get_commits(side.main)))
        assert (entry.meta.authors, dict(entry.meta.properties)) == (("someone",), {})


def test_reference_names(side: Side) -> None:
    """lochkit takes a name with Unicode and a slash; Nessie refuses it."""
    name = f"{side.prefix}dév/x"
    result = outcome(lambda: side.api.create_reference(branch(name)))
    if side.name == "lochkit":
        assert side.api.reference(branch(name)).hash == EMPTY_OBJ_ID
    else:
        assert isinstance(result, ValueError)
        assert "Reference name must start with a letter" in str(result)


def test_content_key_length(side: Side) -> None:
    """A key of 500 characters above U+FFFF: lochkit counts 500 and commits it; Nessie counts 1,000
    UTF-16 code units and refuses it."""
    wide = ContentKey.of("\U0001f600" * 500)
    result = outcome(lambda: side.api.commit(side.main, None, CommitMeta("m"), [Put(wide, table("w"))]))
    if side.name == "lochkit":
        assert isinstance(result, CommitResult)
        stored = side.api.get_value(side.main, wide)
        assert isinstance(stored, IcebergTable)
        assert stored.metadata_location == "w"
    else:
        assert isinstance(result, ValueError)
        assert "Content key too long, max allowed length: 500" in str(result)


def test_an_unused_behaviour_in_a_transplant(side: Side) -> None:
    """lochkit refuses a behaviour for a key the transplant never meets; Nessie ignores it."""
    start(side)
    feature = side.new_branch()
    source = side.commit(Put(key("t5"), table("t5")), on=feature)
    behaviours = [MergeKeyBehavior(key("t9"), MergeBehavior.DROP)]
    result = outcome(lambda: side.api.transplant(side.main, None, [source], key_behaviors=behaviours))
    if side.name == "lochkit":
        assert isinstance(result, ValueError)
        assert "The following keys were not used: [t9]" in str(result)
    else:
        assert isinstance(result, MergeResult)
        assert (result.successful, result.applied) == (True, True)


def test_a_committer_named_by_the_client(side: Side) -> None:
    """lochkit records the committer a commit names; Nessie's REST API refuses it."""
    meta = CommitMeta("m", committer="carol")
    result = outcome(lambda: side.api.commit(side.main, None, meta, [Put(key("t1"), table("t1"))]))
    if side.name == "lochkit":
        assert isinstance(result, CommitResult)
        assert next(iter(side.api.get_commits(side.main))).meta.committer == "carol"
    else:
        assert isinstance(result, ValueError)
        assert str(result) == "Cannot set the committer on the client side. It is set by the server."
