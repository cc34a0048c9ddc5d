"""What the differential machine compares, in a form both sides can agree on.

Outcomes: an exception becomes its kind (not found, conflict, ...), its conflicts as (type, key)
pairs in the order reported (lochkit's follows Nessie's: a commit's removes, then its unchanged
keys, then its adds; a merge's keys in the order of Nessie's hash map) and its message with ids
and reference prefixes replaced by labels. References: head, live entries with their contents
(content ids paired, not compared), and the first-parent log (commit ids paired position by
position, messages and authors compared).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from conformance.differential.mapping import Pairing
from conformance.differential.sides import Side
from persist_spi.versionstore.content import Content
from persist_spi.versionstore.errors import (
    InvalidOperation,
    MergeConflictError,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    ReferenceRetryFailureError,
)
from persist_spi.versionstore.nessie_json import NessieServerError
from persist_spi.versionstore.refs import NamedRef
from persist_spi.versionstore.results import MergeResult

T = TypeVar("T")

#: Outcome kinds whose message is compared.
MESSAGE_KINDS = frozenset({"not-found", "exists", "invalid", "conflict", "merge-conflict"})


class Divergence(AssertionError):
    """The two sides disagree in a way no registered difference explains."""


@dataclass(frozen=True)
class Outcome:
    kind: str  # "ok" or the kind of error
    conflicts: tuple[tuple[str, str | None], ...] = ()
    message: str = ""
    #: For "ok": the result (a commit hash, a MergeResult, ...); for errors: the exception.
    value: Any = None

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    def describe(self) -> str:
        if self.ok:
            return f"ok {self.value!r}"[:300]
        conflicts = f" {list(self.conflicts)}" if self.conflicts else ""
        return f"{self.kind}{conflicts}: {self.message}"[:400]


def attempt(call: Callable[[], T]) -> Outcome:
    try:
        return Outcome("ok", value=call())
    except Exception as e:
        return Outcome(
            error_kind(e),
            tuple(_conflicts(e)) if not isinstance(e, InvalidOperation) else (),
            str(e),
            e,
        )


def error_kind(error: BaseException) -> str:
    if isinstance(error, MergeConflictError):
        return "merge-conflict"
    if isinstance(error, InvalidOperation):
        return "invalid"  # lochkit's argument errors also name a conflict; Nessie's are plain 400s
    if isinstance(error, ReferenceConflictError):
        return "conflict"
    if isinstance(error, ReferenceNotFoundError):
        return "not-found"
    if isinstance(error, ReferenceAlreadyExistsError):
        return "exists"
    if isinstance(error, ReferenceRetryFailureError):
        return "retry"
    if isinstance(error, NessieServerError):
        return "server-error"
    if isinstance(error, ValueError):
        return "invalid"
    return f"unexpected {type(error).__name__}"


def _conflicts(error: BaseException) -> Iterable[tuple[str, str | None]]:
    for c in getattr(error, "conflicts", ()):
        yield c.conflict_type.name, None if c.key is None else str(c.key)


def without_id(content: Content | None) -> Content | None:
    return None if content is None else dataclasses.replace(content, id=None)


def merge_summary(result: MergeResult) -> tuple[bool, bool, tuple[tuple[str, str, str | None], ...]]:
    """(successful, applied, (key, behaviour, conflict type) in the order listed) of a merge or
    transplant."""
    details = tuple(
        (str(k), d.behavior.name, None if d.conflict is None else d.conflict.conflict_type.name)
        for k, d in result.details.items()
    )
    return result.successful, result.applied, details


@dataclass
class Labels:
    """Everything that turns one side's texts into the shared form."""

    commits: Pairing
    ids: Pairing

    def text(self, side: Side, text: str) -> str:
        return self.ids.relabel(self.commits.relabel(text.replace(side.prefix, "")))


def compare_outcomes(
    what: str, lochkit: Outcome, nessie: Outcome, labels: Labels, sides: tuple[Side, Side]
) -> None:
    """Same kind, same conflicts and, where comparable, the same message."""
    if lochkit.kind != nessie.kind or lochkit.conflicts != nessie.conflicts:
        raise Divergence(f"{what}:\n  lochkit: {lochkit.describe()}\n  nessie:  {nessie.describe()}")
    if lochkit.kind in MESSAGE_KINDS:
        left, right = labels.text(sides[0], lochkit.message), labels.text(sides[1], nessie.message)
        if left != right:
            raise Divergence(f"{what}: messages differ:\n  lochkit: {left}\n  nessie:  {right}")


def head_of(side: Side, ref: NamedRef) -> Outcome:
    """The reference's head on ``side`` (an outcome: the reference may not exist)."""
    return attempt(lambda: side.api.reference(ref).hash)


def compare_reference(logical: NamedRef, sides: tuple[Side, Side], labels: Labels) -> None:
    """The reference exists on both or neither; on both: the same head (paired), live entries and
    contents, and first-parent log."""
    lochkit, nessie = sides
    refs = (lochkit.ref(logical.name, logical.kind), nessie.ref(logical.name, logical.kind))
    heads = [head_of(s, r) for s, r in zip(sides, refs, strict=True)]
    if heads[0].ok != heads[1].ok:
        raise Divergence(
            f"reference {logical.name}: lochkit {heads[0].describe()}, nessie {heads[1].describe()}"
        )
    if not heads[0].ok:
        return
    log_l = list(lochkit.api.get_commits(refs[0]))
    log_n = list(nessie.api.get_commits(refs[1]))
    if len(log_l) != len(log_n):
        raise Divergence(
            f"log of {logical.name}: lochkit has {len(log_l)} commits, nessie {len(log_n)}:\n"
            f"  lochkit: {[e.meta.message for e in log_l[:8]]}\n"
            f"  nessie:  {[e.meta.message for e in log_n[:8]]}"
        )
    labels.commits.pair(heads[0].value, heads[1].value)
    for depth, (a, b) in enumerate(zip(log_l, log_n, strict=True)):
        labels.commits.pair(a.hash, b.hash)
        labels.commits.pair(a.parent, b.parent)
        left = (labels.text(lochkit, a.meta.message), a.meta.authors, dict(a.meta.properties))
        right = (labels.text(nessie, b.meta.message), b.meta.authors, dict(b.meta.properties))
        if left != right:
            raise Divergence(
                f"log of {logical.name}, commit {depth} from the head:\n  lochkit: {left}\n  nessie:  {right}"
            )
    entries_l = list(lochkit.api.get_entries(refs[0], with_content=True))
    entries_n = list(nessie.api.get_entries(refs[1], with_content=True))
    left_e = [(str(e.key), e.payload, without_id(e.content)) for e in entries_l]
    right_e = [(str(e.key), e.payload, without_id(e.content)) for e in entries_n]
    if left_e != right_e:
        raise Divergence(f"entries of {logical.name}:\n  lochkit: {left_e}\n  nessie:  {right_e}")
    for left_entry, right_entry in zip(entries_l, entries_n, strict=True):
        labels.ids.pair(left_entry.content_id, right_entry.content_id)
