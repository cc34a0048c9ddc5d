"""The one place where the differential machine forgives a disagreement: each rule here recognises one
entry of :mod:`conformance.nessie_differences` and nothing else.

A rule sees the step (what was asked, and facts about it the machine read from lochkit before doing
it) and both outcomes; it answers the difference's id when that difference, and only it, explains
the disagreement. The machine then counts the id, and if either side changed its target reference,
resets it to the head before the step, so both sides continue from the same state.

Differences no generated operation can reach are not handled here: commit header and key order
(ids are never compared, keys are ASCII), reads during a delete (one client at a time), the retry
sleep, adapter repairs, and ``hash-on-reference`` (the REST client checks the history itself, as
lochkit does). Content type changes are never generated (``content-type-change`` and
``recreate-with-another-type``): Nessie answers 400 but writes them and cannot read the key any
more, which would end the comparison; ``tests/nessie`` shows both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.differential.observe import Outcome, merge_summary
from conformance.nessie_differences import BY_ID
from persist_spi.versionstore.results import MergeResult


@dataclass
class Step:
    """One operation of the machine, as the rules need to know it."""

    kind: str  # "commit", "empty-commit", "merge", "transplant", "entries", "diff", ...
    #: Facts about the step read from lochkit before it ran (see the machine's rules).
    facts: dict[str, Any] = field(default_factory=dict)


Rule = Callable[[Step, Outcome, Outcome], bool]
_RULES: list[tuple[str, Rule]] = []


def _rule(difference_id: str) -> Callable[[Rule], Rule]:
    assert difference_id in BY_ID, difference_id

    def register(rule: Rule) -> Rule:
        _RULES.append((difference_id, rule))
        return rule

    return register


def explain(step: Step, lochkit: Outcome, nessie: Outcome) -> str | None:
    """The id of the registered difference that explains why the outcomes differ, or None."""
    for difference_id, rule in _RULES:
        if rule(step, lochkit, nessie):
            return difference_id
    return None


def _without(conflicts: tuple[tuple[str, str | None], ...], drop: set[tuple[str, str]]) -> set[Any]:
    return {c for c in conflicts if c not in drop}


@_rule("unchanged-absent-key")
def _unchanged_absent(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """Unchanged on keys absent at a stale expected hash: lochkit passes (or says KEY_EXISTS if
    created since), Nessie says KEY_DOES_NOT_EXIST (or PAYLOAD_DIFFERS)."""
    keys: set[str] = step.facts.get("absent_unchanged", set())
    if step.kind != "commit" or not keys:
        return False
    nessie_rest = _without(
        nessie.conflicts, {("KEY_DOES_NOT_EXIST", k) for k in keys} | {("PAYLOAD_DIFFERS", k) for k in keys}
    )
    lochkit_rest = _without(lochkit.conflicts, {("KEY_EXISTS", k) for k in keys})
    if lochkit.ok:
        return nessie.kind == "conflict" and not nessie_rest
    return lochkit.kind == nessie.kind == "conflict" and lochkit_rest == nessie_rest


@_rule("namespace-deleted-with-new-content")
def _orphaned_content(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """A commit deletes a namespace and creates content in it: lochkit says NAMESPACE_NOT_EMPTY,
    Nessie accepts it (or reports only the commit's other conflicts)."""
    namespaces: set[str] = step.facts.get("orphaning", set())
    if step.kind != "commit" or not namespaces or lochkit.kind != "conflict":
        return False
    rest = _without(lochkit.conflicts, {("NAMESPACE_NOT_EMPTY", n) for n in namespaces})
    if rest == set(lochkit.conflicts):
        return False
    return (nessie.ok and not rest) or (nessie.kind == "conflict" and rest == set(nessie.conflicts))


def _summary(outcome: Outcome) -> tuple[bool, bool, tuple[tuple[str, str, str | None], ...]] | None:
    result = outcome.value if outcome.ok else getattr(outcome.value, "result", None)
    return merge_summary(result) if isinstance(result, MergeResult) else None


@_rule("transplant-recreated-key")
def _recreated(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """A transplanted commit re-created a key: lochkit replays a delete and a re-create, Nessie an
    update of the old content, so their conflicts on that key differ (Nessie: CONTENT_ID_DIFFERS or
    VALUE_DIFFERS; lochkit: none, VALUE_DIFFERS, CONTENT_ID_DIFFERS or KEY_EXISTS) and what they
    write for it too. They
    must agree on every other key."""
    return step.kind == "transplant" and _limited_to(step.facts.get("recreated", set()), lochkit, nessie)


def _limited_to(keys: set[str], lochkit: Outcome, nessie: Outcome) -> bool:
    """Both outcomes are merge results that differ only on ``keys``."""
    left, right = _summary(lochkit), _summary(nessie)
    if not keys or left is None or right is None:
        return False
    others_left = [d for d in left[2] if d[0] not in keys]
    others_right = [d for d in right[2] if d[0] not in keys]
    conflicting = {k for k, _, c in (*left[2], *right[2]) if c is not None}
    return others_left == others_right and conflicting <= keys


@_rule("renames-in-merges")
def _renames(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """A merged or transplanted rename: lochkit moves the content; Nessie drops it or says
    KEY_EXISTS. Both agree on every key the renames do not touch."""
    return step.kind in ("merge", "transplant") and _limited_to(
        step.facts.get("renamed", set()), lochkit, nessie
    )


@_rule("transplant-after-skipped-commit")
def _skipped(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """A transplanted commit before the last is already on the target, so it is skipped; Nessie
    then replays the following commits against the wrong parent: a delete fails with HTTP 500
    (NullPointerException), other operations conflict, are dropped or lose their details."""
    if step.kind != "transplant" or len(step.facts.get("sequence", ())) < 2:
        return False
    if nessie.kind == "server-error" and "NullPointerException" in nessie.message:
        return lochkit.kind in ("ok", "merge-conflict")
    return bool(step.facts.get("skips_before_last"))


@_rule("dry-run-transplant-sequence")
def _dry_run(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """Nessie builds every commit of a multi-commit dry run on the target's head, so what it says
    about the second and later commits (success, conflicts, details) is not what the real run does."""
    left, right = _summary(lochkit), _summary(nessie)
    return (
        step.kind == "transplant"
        and bool(step.facts.get("dry_run"))
        and len(step.facts.get("sequence", ())) > 1
        and left is not None
        and right is not None
    )


@_rule("merge-into-empty-branch")
def _merge_into_empty(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """A merge into a branch at the empty commit: lochkit merges from that commit, Nessie says "No
    common ancestor"."""
    return (
        step.kind == "merge"
        and bool(step.facts.get("target_empty"))
        and not step.facts.get("source_empty")
        and nessie.kind == "not-found"
        and nessie.message.startswith("No common ancestor")
        and lochkit.kind != "server-error"
    )


@_rule("merge-from-empty-branch")
def _merge_from_empty(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """A merge from a branch at the empty commit: lochkit has nothing to merge; Nessie merges the
    removal of every key of the target (or, for a target at the empty commit too, says "No common
    ancestor")."""
    return step.kind == "merge" and bool(step.facts.get("source_empty")) and lochkit.ok


@_rule("inverted-key-range")
def _inverted_range(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    """lochkit refuses min-key above max-key always, naming both keys after Nessie's words; Nessie
    refuses only when a key lies between them, and answers nothing otherwise."""
    nessie_text = "'to' must be greater than 'from'"
    if step.kind not in ("entries", "diff") or not step.facts.get("inverted") or lochkit.kind != "invalid":
        return False
    if not lochkit.message.startswith(nessie_text):
        return False
    return (nessie.ok and not nessie.value) or (nessie.kind == "invalid" and nessie.message == nessie_text)


@_rule("empty-commit")
def _empty_commit(step: Step, lochkit: Outcome, nessie: Outcome) -> bool:
    return (
        step.kind == "empty-commit"
        and lochkit.ok
        and nessie.kind == "invalid"
        and "size must be between 1" in nessie.message
    )


def handled() -> list[str]:
    """Ids of the differences this module can explain."""
    return [difference_id for difference_id, _ in _RULES]
