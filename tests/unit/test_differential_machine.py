"""The differential machine's own logic, without a Nessie server: id pairing, the normalisation
rules, and the machine itself on two lochkit stores (it must agree with itself, and it must catch a
store that misbehaves)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from conformance.differential.machine import Report
from conformance.differential.mapping import Pairing, PairingConflict, commit_pairing
from conformance.differential.normalise import Step, explain, handled
from conformance.differential.observe import Divergence, Outcome
from conformance.differential.runner import format_report, run_differential
from conformance.differential.sides import Side, lochkit_side
from conformance.nessie_differences import BY_ID
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.versionstore import CommitMeta, Delete, Operation
from persist_spi.versionstore.api import Validator
from persist_spi.versionstore.refs import NamedRef
from persist_spi.versionstore.results import CommitResult
from persist_spi.versionstore.store import VersionStore

#: Step kinds every fixed-seed run must reach, or the comparison proves little.
CORE_STEPS = {"commit", "merge", "transplant", "create-reference", "assign", "entries", "diff", "log"}


def test_pairing_refuses_a_second_partner() -> None:
    pairing = Pairing("c")
    assert pairing.pair("a" * 64, "b" * 64) == "c1"
    assert pairing.pair("a" * 64, "b" * 64) == "c1"
    with pytest.raises(PairingConflict):
        pairing.pair("a" * 64, "d" * 64)
    with pytest.raises(PairingConflict):
        pairing.pair("e" * 64, "b" * 64)


def test_pairing_relabels_ids_in_texts() -> None:
    commits = commit_pairing(str(EMPTY_OBJ_ID))
    commits.pair("a" * 64, "b" * 64)
    assert (
        commits.relabel(f"Merged x at {'a' * 64} into main at {EMPTY_OBJ_ID}")
        == "Merged x at c2 into main at c1"
    )
    assert commits.relabel(f"Merged x at {'b' * 64}") == "Merged x at c2"


def test_every_normalisation_rule_names_a_registered_difference() -> None:
    assert handled()
    assert all(difference in BY_ID for difference in handled())


def test_normalisation_explains_only_its_own_situation() -> None:
    lochkit = Outcome("invalid", message="'to' must be greater than 'from': the minimum key 'b' is above ...")
    nessie = Outcome("ok", value=[])
    assert explain(Step("entries", {"inverted": True}), lochkit, nessie) == "inverted-key-range"
    assert explain(Step("entries", {"inverted": False}), lochkit, nessie) is None
    assert explain(Step("entries", {"inverted": True}), lochkit, Outcome("ok", value=[("t1", 1)])) is None
    orphan = Outcome("conflict", (("NAMESPACE_NOT_EMPTY", "n1"),))
    assert explain(Step("commit", {"orphaning": {"n1"}}), orphan, Outcome("ok")) == (
        "namespace-deleted-with-new-content"
    )
    assert explain(Step("commit", {"orphaning": {"n2"}}), orphan, Outcome("ok")) is None
    assert (
        explain(Step("commit", {"orphaning": {"n1"}}), orphan, Outcome("conflict", (("KEY_EXISTS", "t1"),)))
        is None
    )


def test_merges_with_a_branch_without_commits_are_explained_only_as_such() -> None:
    no_ancestor = Outcome(
        "not-found", message=f"No common ancestor in parents of {EMPTY_OBJ_ID} and {'a' * 64}"
    )
    into_empty = Step("merge", {"target_empty": True, "source_empty": False})
    assert explain(into_empty, Outcome("ok"), no_ancestor) == "merge-into-empty-branch"
    assert explain(Step("merge", {"target_empty": False}), Outcome("ok"), no_ancestor) is None
    assert (
        explain(into_empty, Outcome("ok"), Outcome("not-found", message="Named reference 'x' not found"))
        is None
    )
    from_empty = Step("merge", {"target_empty": False, "source_empty": True})
    assert explain(from_empty, Outcome("ok"), Outcome("ok")) == "merge-from-empty-branch"
    assert explain(from_empty, Outcome("conflict", (("KEY_EXISTS", "t1"),)), Outcome("ok")) is None
    assert explain(Step("merge", {"source_empty": False}), Outcome("ok"), Outcome("ok")) is None


def test_two_lochkit_stores_agree(capsys: pytest.CaptureFixture[str]) -> None:
    """lochkit against itself: every step agrees, nothing needs a registered difference, and the
    run reaches every kind of step."""
    report = run_differential(lochkit_side, lochkit_side, examples=10, steps=20, seed_value=5)
    print(format_report(report))
    assert report.explained == {}
    assert {kind for kind, _ in report.outcomes} >= CORE_STEPS
    assert report.steps > 150


class ForgetsDeletes(VersionStore):
    """A store that silently drops Delete operations from commits with other operations."""

    def commit(
        self,
        branch: NamedRef,
        expected_hash: ObjId | None,
        meta: CommitMeta,
        operations: Sequence[Operation],
        validator: Validator | None = None,
    ) -> CommitResult:
        kept: list[Operation] = [op for op in operations if not isinstance(op, Delete)] or list(operations)
        return super().commit(branch, expected_hash, meta, kept, validator)


def forgetful_side() -> Side:
    side = lochkit_side()
    assert isinstance(side.api, VersionStore)
    side.api = ForgetsDeletes(side.api.persist)
    return side


def test_a_store_that_misbehaves_is_caught() -> None:
    with pytest.raises(Divergence):
        run_differential(lochkit_side, forgetful_side, examples=20, steps=20, seed_value=5, shrink=False)


def test_the_report_lists_what_ran() -> None:
    report = Report(examples=1, steps=2)
    report.outcomes[("commit", "ok")] += 2
    report.explained["empty-commit"] += 1
    text = format_report(report)
    assert "examples: 1, steps compared: 2" in text
    assert "commit" in text
    assert "empty-commit" in text
