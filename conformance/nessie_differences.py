"""Every known difference between lochkit's version store and a real Nessie server, in one place.

Each entry says what lochkit does, what Nessie (``NESSIE_VERSION`` of provisioning/servers/versions.py,
checked against the running server) does, and why lochkit keeps its own behaviour. The
documentation's short list (``docs/generated/nessie-differences-summary.md``, written by ``python -m
conformance.nessie_differences --summary-out FILE``) and ``docs/nessie-differences.md`` (``python -m
conformance.nessie_differences --markdown``) are rendered from this module, the differential state
machine normalises exactly these differences (it names the entry each time it does), and a
version-store suite test may fail against the real Nessie server only if an entry here names it.

Three kinds:

- ``deliberate``: lochkit chose another behaviour, for the reason given;
- ``nessie-bug``: a defect of Nessie's that lochkit does not copy (written down, not reproduced);
- ``rest-api``: Nessie's REST API and Nessie's own version store disagree, and lochkit's store
  follows Nessie's version store (the REST layer of ``lochkit serve`` may follow the REST API).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from conformance import snippets
from provisioning.servers.versions import NESSIE_VERSION as NESSIE_VERSION  # re-exported: checked on it

Kind = Literal["deliberate", "nessie-bug", "rest-api"]


@dataclass(frozen=True)
class Difference:
    #: Stable name, used by the differential machine's normalisation and in reports.
    id: str
    #: The short list's bold title for it.
    title: str
    #: The short list's one-sentence description: lochkit's behaviour, then Nessie's.
    summary: str
    kind: Kind
    lochkit: str
    nessie: str
    reason: str
    #: Tests that show it (``path::name``), against lochkit and, where REST shows it, Nessie.
    tests: tuple[str, ...] = ()
    #: Version-store suite tests that fail against the real Nessie server because of it.
    suite_tests: tuple[str, ...] = ()


_FOUND = "tests/nessie/test_nessie_differences.py"

_LISTED: Final[tuple[Difference, ...]] = (
    Difference(
        id="content-type-change",
        title="Content type",
        summary="an update that changes the content type is rejected (`PAYLOAD_DIFFERS`); Nessie answers "
        "400 yet writes the update, which leaves the key unreadable.",
        kind="deliberate",
        lochkit="An update that changes the content type is rejected: an InvalidOperation (a ValueError) "
        "naming PAYLOAD_DIFFERS and the current content.",
        nessie='Answers HTTP 400 ("Bad Request"), yet the update lands: the key keeps the old type\'s '
        "payload with the new content, and every read of it answers 400 from then on.",
        reason="The specification forbids changing a content's type, and a failed request must not "
        "change data.",
        tests=(f"{_FOUND}::test_changing_the_content_type_of_a_key",),
        suite_tests=("VersionStoreCommitsSuite::test_changing_the_content_type_is_rejected",),
    ),
    Difference(
        id="unchanged-absent-key",
        title="`Unchanged` on an absent key",
        summary="for a key absent at the expected hash, `Unchanged` asserts it is still absent (passes if so,"
        " `KEY_EXISTS` if created since); Nessie reports `KEY_DOES_NOT_EXIST` or `PAYLOAD_DIFFERS` "
        "once the head has moved.",
        kind="deliberate",
        lochkit="For a key absent at the expected hash, Unchanged asserts the key is still absent: it "
        "passes when it is, and reports KEY_EXISTS when the key was created since.",
        nessie="Ignores Unchanged when the expected hash is the head; otherwise reports "
        "KEY_DOES_NOT_EXIST for a key still absent and PAYLOAD_DIFFERS for a key created since.",
        reason="The answer should not depend on whether the branch moved: an absent key that stayed "
        "absent is unchanged.",
        tests=(
            f"{_FOUND}::test_unchanged_on_a_key_still_absent",
            f"{_FOUND}::test_unchanged_on_a_key_created_since",
        ),
        suite_tests=("VersionStoreConflictsSuite::test_unchanged_on_a_key_absent_then_and_now_succeeds",),
    ),
    Difference(
        id="argument-errors-name-a-conflict",
        title="Invalid operations name their conflict",
        summary="an operation no commit may carry (an update without or with another content id, new "
        "content with an id) is a `ValueError` that also names its conflict and the current content; "
        "Nessie answers a plain 400 message.",
        kind="deliberate",
        lochkit="InvalidOperation: a ValueError with Nessie's message that is also a "
        "ReferenceConflictError naming KEY_EXISTS, CONTENT_ID_DIFFERS or KEY_DOES_NOT_EXIST and the "
        "key's current content.",
        nessie="BAD_REQUEST with the message only.",
        reason="The conflict type and the current content let a client decide how to retry without "
        "reading the key again.",
        tests=(f"{_FOUND}::test_update_with_another_content_id_message",),
        suite_tests=(
            "VersionStoreCommitsSuite::test_update_without_content_id_is_rejected",
            "VersionStoreCommitsSuite::test_update_with_another_content_id_is_rejected",
            "VersionStoreCommitsSuite::test_new_content_with_a_content_id_is_rejected",
            "VersionStoreConflictsSuite::test_update_without_id_of_a_key_existing_at_the_expected_hash_is_invalid",
            "VersionStoreConflictsSuite::test_update_with_id_of_a_key_absent_at_the_expected_hash_is_invalid",
            "VersionStoreNamespacesSuite::test_namespace_cannot_be_overwritten_by_a_table",
        ),
    ),
    Difference(
        id="conflicts-carry-current-content",
        title="Conflicts carry the current content",
        summary="every conflict of a commit, merge or transplant carries the key's current content; "
        "Nessie's name the type, the key and a message only.",
        kind="deliberate",
        lochkit="Conflict.current holds the content the key has on the target (None when absent).",
        nessie="Its conflicts have no content.",
        reason="A client resolving a conflict needs the current content; reading it again races with "
        "other writers.",
        tests=(f"{_FOUND}::test_conflicts_carry_the_current_content",),
        suite_tests=(
            "VersionStoreConflictsSuite::test_touching_a_key_updated_since_is_value_differs",
            "VersionStoreConflictsSuite::test_create_of_a_key_created_since_is_key_exists",
            "VersionStoreConflictsSuite::test_unchanged_on_a_key_created_since_is_key_exists",
        ),
    ),
    Difference(
        id="reserved-properties",
        title="Commit properties named like metadata",
        summary="a commit property named like a metadata header (`author`, `date`, `committer`, ...) is "
        "a `ValueError`; Nessie accepts it and it silently becomes that metadata.",
        kind="deliberate",
        lochkit="ValueError \"Commit property 'Author' is reserved\".",
        nessie="Accepts it: a property 'author' becomes an author of the commit, and is no longer a "
        "property.",
        reason="A property must not change who or when a commit says it was made.",
        tests=(f"{_FOUND}::test_a_property_named_like_metadata",),
        suite_tests=("VersionStoreCommitsSuite::test_reserved_commit_properties_are_rejected",),
    ),
    Difference(
        id="reference-names",
        title="Reference names",
        summary="any non-empty name that is not an internal reference's is a valid branch or tag "
        "name; Nessie requires a letter first, then letters, digits and `./_-` only.",
        kind="deliberate",
        lochkit="Names are free text (Unicode, slashes), as Nessie's storage model allows.",
        nessie="Its REST API refuses other names, also when one is looked up (a 400, not 'not found'): "
        '"Reference name must start with a letter, followed '
        "by letters, digits, one of the ./_- characters, not end with a slash or dot, not contain "
        "'..'\".",
        reason="The storage model has no such rule; lochkit serve addresses any name the store takes.",
        tests=(f"{_FOUND}::test_reference_names",),
        suite_tests=(
            "VersionStoreReferencesSuite::test_reference_names_may_use_unicode_and_slashes",
            "VersionStoreReferencesSuite::test_named_ref_lookup",
            "VersionStoreInputLimitsSuite::test_longest_reference_name_is_created_listed_and_deleted",
        ),
    ),
    Difference(
        id="unused-behaviours-in-transplants",
        title="Unused merge key behaviours in transplants",
        summary="a transplant, like a merge, refuses key behaviours for keys it never met; Nessie "
        "checks that for merges only.",
        kind="deliberate",
        lochkit='ValueError "Not all merge key behaviors specified in the request have been used. '
        'The following keys were not used: [k]" for merges and transplants.',
        nessie="Checks it for merges; a transplant ignores a behaviour for a key it never touches.",
        reason="A behaviour for a key the operation never meets is almost always a mistyped key.",
        tests=(f"{_FOUND}::test_an_unused_behaviour_in_a_transplant",),
        suite_tests=(
            "VersionStoreTransplantSuite::test_key_behaviors_for_keys_without_conflict_count_as_used",
        ),
    ),
    Difference(
        id="namespace-deleted-with-new-content",
        title="Deleting a namespace while creating content in it",
        summary="a commit that deletes namespace `n1` and creates `n1.t3` is `NAMESPACE_NOT_EMPTY`; Nessie "
        "accepts it and leaves `n1.t3` without a namespace.",
        kind="deliberate",
        lochkit="A commit that deletes namespace n1 and puts new content n1.t3 is rejected: "
        "NAMESPACE_NOT_EMPTY for n1.",
        nessie="Accepts it (its namespace checks read only the head, where n1 still exists) and "
        "leaves n1.t3 without a namespace. When n1 has other children both report "
        "NAMESPACE_NOT_EMPTY.",
        reason="Content without its namespace breaks the rule namespace validation exists for.",
        tests=(
            f"{_FOUND}::test_deleting_a_namespace_while_creating_content_in_it",
            f"{_FOUND}::test_deleting_a_non_empty_namespace_while_creating_content_in_it",
        ),
    ),
    Difference(
        id="transplant-recreated-key",
        title="Transplanting a re-created key",
        summary="a transplanted delete-and-re-create of a key applies like the same merge; Nessie reports "
        "`CONTENT_ID_DIFFERS` and applies nothing.",
        kind="deliberate",
        lochkit="A transplanted commit that deleted and re-created a key (new content id) replays as "
        "that delete and re-create: it applies when the target still holds what the source's "
        "parent held, else VALUE_DIFFERS; on a target that holds the re-created content already "
        "(e.g. the branch that made the commit), CONTENT_ID_DIFFERS, as the replayed delete "
        "expects the old content id.",
        nessie="Replays only the new content, expecting the old value under the new content id: "
        "CONTENT_ID_DIFFERS and nothing applied, also on a target where the key is unchanged; on a "
        "target that holds the re-created content already, VALUE_DIFFERS. A merge of the same "
        "change applies.",
        reason="The commit applies cleanly; merge and transplant should agree on it.",
        tests=(
            f"{_FOUND}::test_transplanting_a_re_created_key",
            f"{_FOUND}::test_transplanting_a_re_created_key_onto_a_branch_that_has_it",
            "tests/rest/test_answer_shapes.py::test_each_answer_is_shaped_exactly_like_nessies",
        ),
    ),
    Difference(
        id="renames-in-merges",
        title="Renames in merged or transplanted commits",
        summary="merges and transplants move renamed content; Nessie loses it (unchanged content) or reports "
        "`KEY_EXISTS` (changed content).",
        kind="deliberate",
        lochkit="A rename (Delete of a key plus Put of its content id under a new key) is merged and "
        "transplanted as a rename: the content moves, keeping its content id.",
        nessie="Loses the renamed content when its value is unchanged (the old key is deleted, the "
        "new one never written, no conflict), and reports KEY_EXISTS (nothing applied) when the "
        "content changed too.",
        reason="Losing content silently is a defect; lochkit repairs it.",
        tests=(
            f"{_FOUND}::test_merging_a_rename",
            f"{_FOUND}::test_transplanting_a_rename",
            f"{_FOUND}::test_merging_a_rename_with_a_change",
        ),
        suite_tests=(
            "VersionStoreMergeSuite::test_merge_carries_renames_with_their_content_ids",
            "VersionStoreTransplantSuite::test_transplant_carries_renames_with_their_content_ids",
        ),
    ),
    Difference(
        id="inverted-key-range",
        title="Key range with the minimum above the maximum",
        summary="entries and diffs with the minimum key above the maximum are always a `ValueError`; Nessie "
        "refuses them only when a key lies between the bounds.",
        kind="deliberate",
        lochkit="Entries and diffs with min-key above max-key are a ValueError with Nessie's words and "
        "both keys (\"'to' must be greater than 'from': the minimum key 'z' is above the maximum key "
        "'a'\").",
        nessie="Rejects it (BAD_REQUEST, \"'to' must be greater than 'from'\") only when a key lies "
        "between the two bounds; otherwise it returns nothing.",
        reason="Whether a request is valid should not depend on the data.",
        tests=(f"{_FOUND}::test_entries_with_the_minimum_above_the_maximum",),
    ),
    Difference(
        id="key-length-units",
        title="Content key length",
        summary="the 500-character limit on a content key counts code points; Nessie counts UTF-16 code "
        "units, so a key with characters above U+FFFF reaches Nessie's limit at half as many characters.",
        kind="deliberate",
        lochkit="A content key (its elements and the dots between them) may hold 500 code points, "
        "whatever their UTF-8 size.",
        nessie='Counts Java chars: a character above U+FFFF counts twice ("Content key too long, max '
        'allowed length: 500" for 500 emoji).',
        reason="Python strings count code points; one rule for every character is easier to state, "
        "and keys within Nessie's limit are within lochkit's.",
        tests=(f"{_FOUND}::test_content_key_length",),
        suite_tests=("VersionStoreInputLimitsSuite::test_longest_content_key_is_committed_and_read",),
    ),
    Difference(
        id="merge-into-empty-branch",
        title="Merging into a branch without commits",
        summary="a branch still at the no-ancestor hash (a new repository's `main`) has that hash as "
        "common ancestor with any source, as both servers' reference metadata say, so a merge into it "
        'brings all of the source; Nessie answers 404 "No common ancestor".',
        kind="deliberate",
        lochkit="A merge whose target is at the no-ancestor hash merges from that hash: every key of "
        "the source arrives in a merge commit (parents: the no-ancestor hash and the source), and "
        "commonAncestor is the no-ancestor hash. Two histories that both have commits and share "
        'none still have no common ancestor ("No common ancestor in parents of ...", as in Nessie).',
        nessie='Answers 404 REFERENCE_NOT_FOUND "No common ancestor in parents of <no-ancestor hash> '
        'and <source>", while GET /trees/<source>?fetch=ALL reports the no-ancestor hash as '
        "commonAncestorHash, 0 commits behind.",
        reason="A branch forked from an empty main and merged back is a new user's first merge; the "
        "merge should do what the reference metadata says it can.",
        tests=(
            f"{_FOUND}::test_merging_into_a_branch_without_commits",
            "tests/rest/test_wire_against_nessie.py::test_merging_a_branch_forked_from_an_empty_main",
            "tests/rest/test_http_api.py::test_a_branch_forked_from_an_empty_main_merges_as_its_metadata_says",
        ),
        suite_tests=(
            "VersionStoreMergeSuite::test_merge_into_a_branch_at_the_empty_commit_applies_the_source",
        ),
    ),
    Difference(
        id="content-field-types",
        title="Content field types",
        summary="a content document's fields must have their JSON types (a string; a whole number in "
        "Java's `int` or `long` range; a list or object of strings); Nessie converts other scalars "
        '(`123` to `"123"`, `"12"` to 12, 1.5 to 1, `null` to 0) and stores them.',
        kind="deliberate",
        lochkit="lochkit serve answers 400 BAD_REQUEST naming the operation and the field, e.g. "
        "The content of the PUT operation on 't' (ICEBERG_TABLE): field 'snapshotId' must be a "
        'whole number (long), not the string "12". A required field that is null counts as not '
        "set. Nothing is stored.",
        nessie="Its JSON parser converts scalars: a number or boolean where a string is expected is "
        "stored as text, a numeric string or a fraction where a whole number is expected becomes "
        'that number (1.5 is stored as 1), and null or "" for a whole number becomes 0. What it '
        'cannot convert (an array or object for a scalar, "abc" for a number, a number out of '
        "range, a missing required field) is 400 BAD_REQUEST, as in lochkit.",
        reason="A converted value is one no client wrote (a truncated fraction, an invented 0); "
        "refusing it says what to fix, and Nessie's own clients never send such values.",
        tests=(
            "tests/rest/test_wire_against_nessie.py::test_values_nessie_converts_are_refused_by_lochkit",
            "tests/rest/test_content_validation.py::test_values_nessie_would_convert_are_refused",
        ),
    ),
    Difference(
        id="api-versions",
        title="API versions",
        summary="`lochkit serve` serves Nessie's REST API v2 only, and its `/config` says so "
        "(`minSupportedApiVersion` 2); Nessie 0.99 also serves v1 and says 1.",
        kind="deliberate",
        lochkit="GET /api/v2/config answers minSupportedApiVersion 2 and maxSupportedApiVersion 2; "
        "/api/v1 answers 404.",
        nessie="Serves the deprecated API v1 beside v2; its config answers minSupportedApiVersion 1.",
        reason="A client that reads the range must not be sent to an API that is not there; "
        "Nessie's and Iceberg's current clients speak v2.",
        tests=(
            "tests/rest/test_wire_against_nessie.py::test_each_server_serves_the_api_versions_its_config_advertises",
        ),
    ),
    Difference(
        id="empty-commit",
        title="Commits without operations",
        summary="a commit without operations is written, as Nessie's version store does; Nessie's REST API "
        "refuses it.",
        kind="rest-api",
        lochkit="A commit with no operations is written (an empty commit), as Nessie's version store does.",
        nessie='Its REST API rejects it (BAD_REQUEST, "operations: size must be between 1 and '
        '..."); its version store accepts it.',
        reason="lochkit's store follows Nessie's version store, whose own tests commit without operations.",
        tests=(f"{_FOUND}::test_commit_without_operations",),
        suite_tests=(
            "VersionStoreCommitsSuite::test_commit_to_branch_builds_on_head_even_with_a_stale_expected_hash",
        ),
    ),
    Difference(
        id="client-committer",
        title="The committer a caller names",
        summary="without authentication, a commit records the committer its metadata names, as Nessie's "
        "version store does; Nessie's REST API refuses it (the server sets the committer).",
        kind="rest-api",
        lochkit="CommitMeta.committer is recorded as given by the version store, and by lochkit serve "
        "when it runs without authentication. With authentication on, lochkit serve answers as "
        "Nessie does: a committer named by the client is refused, and the committer of a commit or "
        "merge is the authenticated principal (also its author when none is named). Transplanted "
        "commits keep their committers.",
        nessie='Its REST API answers 400 "Cannot set the committer on the client side. It is set by '
        'the server." with or without authentication (the committer is the principal, or empty); '
        "its version store records it.",
        reason="lochkit's store follows Nessie's version store; without authentication lochkit serve "
        "has no principal to name, and its own tests and clients name committers.",
        tests=(f"{_FOUND}::test_a_committer_named_by_the_client",),
        suite_tests=("VersionStoreCommitsSuite::test_commit_metadata_round_trips",),
    ),
    Difference(
        id="hash-on-reference",
        title="A hash given with a reference",
        summary="`ref@hash` requires the hash in the reference's history, as Nessie's version store does; "
        "Nessie's REST API reads any existing commit there.",
        kind="rest-api",
        lochkit="Reading at ref@hash or merging from ref@hash requires the hash in the reference's "
        "history: \"Could not find commit 'h' in reference 'r'.\" (the REST client checks this "
        "too).",
        nessie="Its REST API does not check the history: it reads any existing commit, and says "
        "\"Commit 'h' not found\" for an unknown one; its version store checks, as lochkit does.",
        reason="lochkit's store follows Nessie's version store; a hash that is not on the named "
        "reference is a caller's mistake worth reporting.",
        tests=(f"{_FOUND}::test_reading_at_a_hash_not_on_the_reference",),
    ),
    Difference(
        id="reads-during-delete",
        title="Reads during a delete",
        summary="a reference being deleted is invisible to readers, even while another process is still "
        "deleting it.",
        kind="deliberate",
        lochkit="A reference being deleted is invisible to readers, even while another process is "
        "still deleting it.",
        nessie="Returns a half-deleted reference to readers as it is while their view of the "
        "reference registry (int/refs) is stale.",
        reason="A delete that was acknowledged must not be undone by a reader's view.",
        tests=("conformance/suites/logic_references.py",),
    ),
    Difference(
        id="ahead-behind-across-merges",
        title="Commits ahead and behind after a merge",
        summary="a branch's commits ahead of and behind the default branch are counted along first "
        "parents from the merge base; Nessie subtracts sequence numbers, which counts wrong (even "
        "negative) once the common ancestor was reached through a merge parent.",
        kind="nessie-bug",
        lochkit="After the default branch merged dev, dev is 0 ahead and behind by the merge commit "
        "and whatever else the default branch got.",
        nessie="Derives ahead/behind from commit sequence numbers, so the counts are wrong (even "
        "negative) once the common ancestor was reached through a merge parent.",
        reason="A count of commits must count commits.",
        tests=("conformance/suites/versionstore_addressing.py::test_metadata_counts_commits_across_a_merge",),
        suite_tests=("VersionStoreAddressingSuite::test_metadata_counts_commits_across_a_merge",),
    ),
    Difference(
        id="merge-from-empty-branch",
        title="Merging from a branch without commits",
        summary="merging a branch still at the no-ancestor hash brings nothing; Nessie takes the "
        "target's head as the merge base and commits the removal of every key of the target.",
        kind="nessie-bug",
        lochkit="A successful merge that writes nothing (wasApplied false), commonAncestor the "
        "no-ancestor hash: that hash is an ancestor of every commit.",
        nessie="Takes the target's head as the merge base, so the merge commit deletes every key of "
        "the target (for example merging an empty main into a branch forked from it).",
        reason="Merging nothing must not delete data.",
        tests=(
            f"{_FOUND}::test_merging_from_a_branch_without_commits",
            "tests/rest/test_wire_against_nessie.py::test_merging_a_branch_forked_from_an_empty_main",
        ),
        suite_tests=("VersionStoreMergeSuite::test_merge_from_a_branch_at_the_empty_commit_changes_nothing",),
    ),
    Difference(
        id="retry-sleep",
        title="Retry sleep",
        summary="the retry sleep subtracts the attempt's duration; Nessie adds it.",
        kind="nessie-bug",
        lochkit="The retry sleep subtracts the attempt's duration.",
        nessie="Adds it (the sign is inverted).",
        reason="The intended backoff.",
        tests=("tests/unit/test_retry.py",),
    ),
    Difference(
        id="adapter-repairs",
        title="Repairs",
        summary="the DynamoDB adapter retries unprocessed keys and items and reads consistently, the "
        "Cassandra adapter sets consistency on every statement, and scans and erase avoid full-table "
        "scans on Cassandra and MongoDB.",
        kind="nessie-bug",
        lochkit="The DynamoDB adapter retries unprocessed keys and items and reads consistently, the "
        "Cassandra adapter sets consistency on every statement, and scans and erase avoid full-table "
        "scans on Cassandra and MongoDB.",
        nessie="The gaps the reference notes list in Nessie's adapters.",
        reason="Each is a defect of the original.",
        tests=("docs/backends",),
    ),
    Difference(
        id="recreate-with-another-type",
        title="Re-creating a key with another content type",
        summary="deleting and re-creating a key with another content type in one commit works; Nessie answers"
        " 400, writes it anyway, and the key cannot be read again.",
        kind="nessie-bug",
        lochkit="Delete and Put of a key with a content of another type in one commit re-creates it "
        "with the new type.",
        nessie='Answers HTTP 400 ("Bad Request"), yet the commit lands: the key keeps the old type\'s '
        "payload with the new content, and every read of it answers 400 from then on.",
        reason="A failed request must not change data, and data must stay readable.",
        tests=(f"{_FOUND}::test_re_creating_a_key_with_another_content_type",),
    ),
    Difference(
        id="transplant-after-skipped-commit",
        title="Transplant after a skipped commit",
        summary="a transplant replays the commits after one it skipped against what they saw; Nessie "
        "replays them against the wrong parent (HTTP 500 for a delete, wrong conflicts otherwise).",
        kind="nessie-bug",
        lochkit="A transplant whose earlier commit is already on the target (skipped as empty) "
        "replays the following commits against what they saw.",
        nessie="Does not move on past a skipped commit, so it replays the following ones against the "
        "wrong parent: a delete of a key the skipped commit created fails with HTTP 500 "
        "(NullPointerException: expectedId); other operations conflict or are dropped.",
        reason="A server error for a valid request is a defect.",
        tests=(f"{_FOUND}::test_transplant_after_a_skipped_commit",),
    ),
    Difference(
        id="dry-run-transplant-sequence",
        title="Dry-run transplant of several commits",
        summary="a dry-run transplant of several commits predicts the real one; Nessie builds each on the "
        "original head and reports conflicts the real run does not have.",
        kind="nessie-bug",
        lochkit="A dry run reports what the real transplant would do.",
        nessie="Builds every commit of a dry run on the target's head, not on the previous replayed "
        "commit, so a commit that touches a key an earlier one created reports a conflict "
        "(KEY_DOES_NOT_EXIST) the real transplant does not have.",
        reason="A dry run that disagrees with the real run is a defect.",
        tests=(f"{_FOUND}::test_dry_run_transplant_of_dependent_commits",),
    ),
)

_KIND_HEADINGS: Final[dict[Kind, str]] = {
    "deliberate": "Deliberate differences",
    "rest-api": "Where Nessie's REST API and its version store disagree (lochkit follows the version store)",
    "nessie-bug": "Nessie's defects, written down and not copied",
}
#: Grouped by kind, in the order of the headings above.
DIFFERENCES: Final = tuple(sorted(_LISTED, key=lambda d: list(_KIND_HEADINGS).index(d.kind)))
BY_ID: Final = {d.id: d for d in DIFFERENCES}
assert len(BY_ID) == len(DIFFERENCES), "difference ids must be unique"


def suite_deviations() -> dict[str, str]:
    """Version-store suite test name -> reason, for a target that is a real Nessie server."""
    return {test: f"{d.title} ({d.id}): {d.nessie}" for d in DIFFERENCES for test in d.suite_tests}


def summary_list() -> str:
    """The short list of differences, one bullet each, grouped by kind."""
    lines: list[str] = []
    for kind, heading in _KIND_HEADINGS.items():
        lines += ["", f"{heading}:", ""]
        lines += [
            textwrap.fill(
                f"- **{d.title}:** {d.summary}", width=100, subsequent_indent="  ", break_on_hyphens=False
            )
            for d in DIFFERENCES
            if d.kind == kind
        ]
    return "\n".join(lines[1:]) + "\n"


def render_markdown() -> str:
    """``docs/nessie-differences.md``."""
    lines = [
        "# Where lochkit differs from Nessie",
        "",
        "<!-- Rendered from conformance/nessie_differences.py: edit there, then run",
        "     python -m conformance.nessie_differences --markdown > docs/nessie-differences.md -->",
        "",
        f"Checked against a real Nessie {NESSIE_VERSION} server (the `nessie-quarkus` runner, in-memory",
        "store) over its REST API v2, and against Nessie's source for the version store. Everything",
        "else lochkit's version store does the way Nessie does; the differential state machine",
        "(`lochkit compare-nessie`) checks that with random operations on both.",
        "",
    ]
    for kind, heading in _KIND_HEADINGS.items():
        lines += [f"## {heading}", ""]
        for d in DIFFERENCES:
            if d.kind != kind:
                continue
            lines += [
                f"### {d.title}",
                "",
                f"- **lochkit:** {d.lochkit}",
                f"- **Nessie:** {d.nessie}",
                f"- **Why:** {d.reason}",
                f"- **Id:** `{d.id}`"
                + (f"; **tests:** {', '.join(f'`{t}`' for t in d.tests)}" if d.tests else ""),
            ]
            if d.suite_tests:
                lines.append(
                    "- **Declared deviations against the real server:** "
                    + ", ".join(f"`{t}`" for t in d.suite_tests)
                )
            lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.nessie_differences")
    parser.add_argument("--markdown", action="store_true", help="print docs/nessie-differences.md")
    parser.add_argument("--summary", action="store_true", help="print the short list of differences")
    snippets.add_option(parser, "the short list", "--summary-out")
    args = parser.parse_args(argv)
    snippets.refuse_unwritable(parser, args, "--summary-out")
    if args.summary_out:
        command = snippets.invocation(["python", "-m", "conformance.nessie_differences"], argv)
        snippets.write(
            args.summary_out, summary_list(), command, source="input: conformance/nessie_differences.py"
        )
    if args.markdown:
        sys.stdout.write(render_markdown())
    elif args.summary:
        sys.stdout.write(summary_list())
    elif not args.summary_out:
        for d in DIFFERENCES:
            print(f"{d.id:<36} {d.kind:<11} {d.title}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
