"""Verifying commit chains: every commit to the root readable and linked, every index, stripe and
segment present and decodable, every value an index points to present.

Commits shared by several references are verified once. Values are collected while walking and
checked at the end in bulk reads: a commit contributes the values of its own operations, a head
contributes every live value of its incremental index, and each reference-index segment (read
once, however many commits share it) every live value it holds. Together these cover every value a
reference's tree points to, without re-reading the incremental index carried by every commit.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from persist_spi.check.findings import CheckReport, Finding, ReferenceSummary, Severity
from persist_spi.check.probe import Undecodable, probe_objects
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.store_index import deserialize_index
from persist_spi.keys import key_order, orders_by_code_point
from persist_spi.objs import CommitObj, IndexObj, IndexSegmentsObj, IndexStripe
from persist_spi.persist import Persist


@dataclass(frozen=True)
class _Origin:
    """Where a value to check was found, for the message if it is missing."""

    reference: str
    commit: ObjId
    key: str


def _printable_key(key: str) -> str:
    return key.replace("\x00", "/").replace("\x01", ".")


def keys_ascend(keys: Sequence[str]) -> bool:
    """In Nessie's order (UTF-16 code units), the order lochkit's lookups expect: they can miss keys
    of an index in another order, such as code-point order, which earlier lochkit versions wrote for
    keys mixing characters above U+FFFF with U+E000..U+FFFF."""
    ordered = keys if orders_by_code_point("".join(keys)) else [key_order(k) for k in keys]
    return all(a < b for a, b in itertools.pairwise(ordered))


class ChainVerifier:
    def __init__(self, persist: Persist, report: CheckReport, max_commits: int | None = None) -> None:
        self.persist = persist
        self.report = report
        self.max_commits = max_commits
        self._seen_commits: set[ObjId] = set()
        #: Verified commits whose chain below is broken: a walk reaching one is incomplete too.
        self._broken_below: set[ObjId] = set()
        self._seen_segments: set[ObjId] = set()
        self._values: dict[ObjId, _Origin] = {}
        self._parents: dict[ObjId, _Origin] = {}

    def _error(self, check: str, message: str, reference: str | None, subject: object = None) -> None:
        self.report.findings.append(
            Finding(Severity.ERROR, check, message, reference, None if subject is None else str(subject))
        )

    # --- chains ----------------------------------------------------------------------------------

    def walk(
        self, summary: ReferenceSummary, head: ObjId, on_commit: Callable[[CommitObj], None] | None = None
    ) -> None:
        """Verify the first-parent chain from ``head`` down to the root (or to a commit already
        verified through another reference)."""
        ref = summary.name
        errors_before = self.report.count(Severity.ERROR)
        batch = [] if head == EMPTY_OBJ_ID else [head]
        child: CommitObj | None = None
        depth = 0
        walked: list[ObjId] = []
        while batch:
            probed = probe_objects(self.persist, batch)
            for commit_id in batch:
                if commit_id in self._seen_commits:
                    if commit_id in self._broken_below:
                        summary.complete = False
                    self._finish(summary, errors_before, walked)
                    return
                obj = probed[commit_id]
                where = "the head" if depth == 0 else f"{depth} commit(s) below the head"
                if obj is None:
                    self._error("missing-commit", f"commit {commit_id} ({where}) is missing", ref, commit_id)
                elif isinstance(obj, Undecodable):
                    self._error(
                        "undecodable-commit", f"commit {commit_id} ({where}): {obj.reason}", ref, commit_id
                    )
                elif not isinstance(obj, CommitObj):
                    self._error(
                        "not-a-commit",
                        f"{commit_id} ({where}) is a {obj.obj_type.name}, not a commit",
                        ref,
                        commit_id,
                    )
                if not isinstance(obj, CommitObj):
                    summary.complete = False
                    self._finish(summary, errors_before, walked)
                    return
                if child is not None:
                    self._check_link(ref, child, obj)
                self._verify_commit(ref, obj, is_head=depth == 0)
                self._seen_commits.add(obj.id)
                walked.append(obj.id)
                summary.commits_checked += 1
                self.report.counters.commits += 1
                depth += 1
                if on_commit is not None:
                    on_commit(obj)
                child = obj
                if self.max_commits is not None and summary.commits_checked >= self.max_commits:
                    summary.complete = False
                    self.report.findings.append(
                        Finding(
                            Severity.NOTE,
                            "walk-truncated",
                            f"stopped after {self.max_commits} commits (--max-commits)",
                            ref,
                            str(obj.id),
                        )
                    )
                    self._finish(summary, errors_before, walked)
                    return
            assert child is not None
            batch = []
            for ancestor in child.tail:
                if ancestor == EMPTY_OBJ_ID:
                    break
                batch.append(ancestor)
            if not batch and child.seq != 1:
                self._error(
                    "sequence-mismatch",
                    f"root commit {child.id} has sequence number {child.seq}, not 1",
                    ref,
                    child.id,
                )
        self._finish(summary, errors_before, walked)

    def _finish(self, summary: ReferenceSummary, errors_before: int, walked: list[ObjId]) -> None:
        summary.errors += self.report.count(Severity.ERROR) - errors_before
        if not summary.complete:
            self._broken_below.update(walked)

    def _check_link(self, ref: str, child: CommitObj, parent: CommitObj) -> None:
        if child.direct_parent != parent.id:
            self._error(
                "tail-mismatch",
                f"commit {child.id} names {child.direct_parent} as its parent, but the tail read "
                f"before it leads to {parent.id}",
                ref,
                child.id,
            )
        if child.seq != parent.seq + 1:
            self._error(
                "sequence-mismatch",
                f"commit {child.id} has sequence number {child.seq}, its parent {parent.id} {parent.seq}",
                ref,
                child.id,
            )
        carried = child.tail[1:]
        if tuple(parent.tail[: len(carried)]) != tuple(carried):
            self._error(
                "tail-mismatch",
                f"the ancestors listed by commit {child.id} differ from those of its parent {parent.id}",
                ref,
                child.id,
            )

    # --- one commit ------------------------------------------------------------------------------

    def _verify_commit(self, ref: str, commit: CommitObj, *, is_head: bool) -> None:
        try:
            incremental = deserialize_index(commit.incremental_index) if commit.incremental_index else None
        except Exception as e:  # a decoder fault must become a finding, whatever its type
            self._error(
                "undecodable-index",
                f"incremental index of commit {commit.id}: {type(e).__name__}: {e}",
                ref,
                commit.id,
            )
            incremental = None
        if incremental is not None:
            self._check_order(ref, f"the incremental index of commit {commit.id}", incremental, commit.id)
            self._collect(ref, commit.id, incremental, own_only=not is_head)
        for parent in commit.secondary_parents:
            self._parents.setdefault(parent, _Origin(ref, commit.id, ""))
        if commit.reference_index_stripes:
            self._verify_stripes(ref, commit.id, commit.reference_index_stripes)
        elif commit.reference_index is not None and commit.reference_index not in self._seen_segments:
            self._verify_reference_index(ref, commit)

    def _collect(self, ref: str, commit_id: ObjId, index: StoreIndex, *, own_only: bool) -> None:
        for element in index:
            op = element.op
            if op.action.exists and op.value and (not own_only or op.action.current_commit):
                self._values.setdefault(op.value, _Origin(ref, commit_id, element.key))

    def _verify_reference_index(self, ref: str, commit: CommitObj) -> None:
        index_id = commit.reference_index
        assert index_id is not None
        found = probe_objects(self.persist, [index_id])[index_id]
        self._seen_segments.add(index_id)
        if isinstance(found, IndexSegmentsObj):
            self._verify_stripes(ref, commit.id, found.stripes)
        elif isinstance(found, IndexObj):
            self._verify_segment(ref, commit.id, found, None)
        elif found is None:
            self._error(
                "missing-reference-index",
                f"reference index {index_id} of commit {commit.id} is missing",
                ref,
                index_id,
            )
        elif isinstance(found, Undecodable):
            self._error(
                "undecodable-reference-index", f"reference index {index_id}: {found.reason}", ref, index_id
            )
        else:
            self._error(
                "not-an-index",
                f"reference index {index_id} of commit {commit.id} is a {found.obj_type.name}",
                ref,
                index_id,
            )

    def _verify_stripes(self, ref: str, commit_id: ObjId, stripes: Sequence[IndexStripe]) -> None:
        todo = [s for s in stripes if s.segment not in self._seen_segments]
        probed = probe_objects(self.persist, [s.segment for s in todo])
        for stripe in todo:
            if stripe.segment in self._seen_segments:
                continue  # listed twice
            self._seen_segments.add(stripe.segment)
            found = probed[stripe.segment]
            if isinstance(found, IndexObj):
                self._verify_segment(ref, commit_id, found, stripe)
            elif found is None:
                self._error(
                    "missing-index-segment",
                    f"index segment {stripe.segment} (keys {_printable_key(stripe.first_key)} .. "
                    f"{_printable_key(stripe.last_key)}) of commit {commit_id} is missing",
                    ref,
                    stripe.segment,
                )
            elif isinstance(found, Undecodable):
                self._error(
                    "undecodable-index-segment",
                    f"index segment {stripe.segment}: {found.reason}",
                    ref,
                    stripe.segment,
                )
            else:
                self._error(
                    "not-an-index",
                    f"index segment {stripe.segment} of commit {commit_id} is a {found.obj_type.name}",
                    ref,
                    stripe.segment,
                )

    def _verify_segment(
        self, ref: str, commit_id: ObjId, segment: IndexObj, stripe: IndexStripe | None
    ) -> None:
        self.report.counters.index_segments += 1
        try:
            index = deserialize_index(segment.index)
        except Exception as e:  # a decoder fault must become a finding, whatever its type
            self._error(
                "undecodable-index-segment",
                f"index segment {segment.id}: {type(e).__name__}: {e}",
                ref,
                segment.id,
            )
            return
        if stripe is not None and (index.first(), index.last()) != (stripe.first_key, stripe.last_key):
            self._error(
                "stripe-range-mismatch",
                f"index segment {segment.id} holds keys {_printable_key(index.first() or '')} .. "
                f"{_printable_key(index.last() or '')}, but commit {commit_id} lists it for "
                f"{_printable_key(stripe.first_key)} .. {_printable_key(stripe.last_key)}",
                ref,
                segment.id,
            )
        self._check_order(ref, f"index segment {segment.id}", index, segment.id)
        self._collect(ref, commit_id, index, own_only=False)

    def _check_order(self, ref: str, what: str, index: StoreIndex, subject: ObjId) -> None:
        if not keys_ascend([e.key for e in index]):
            self._error("index-out-of-order", f"{what} lists its keys out of order", ref, subject)

    # --- values, checked in bulk -----------------------------------------------------------------

    def verify_collected(self) -> None:
        """Check every value and secondary parent collected so far; call once after all walks."""
        probed = probe_objects(self.persist, list(self._values))
        for value_id, origin in self._values.items():
            found = probed[value_id]
            self.report.counters.values += 1
            if found is None:
                self._error(
                    "missing-value",
                    f"value {value_id} of key {_printable_key(origin.key)} (commit {origin.commit}) "
                    "is missing",
                    origin.reference,
                    value_id,
                )
            elif isinstance(found, Undecodable):
                self._error(
                    "undecodable-value", f"value {value_id}: {found.reason}", origin.reference, value_id
                )
        self._values.clear()
        probed = probe_objects(self.persist, list(self._parents))
        for parent_id, origin in self._parents.items():
            if not isinstance(probed[parent_id], CommitObj):
                self._error(
                    "missing-secondary-parent",
                    f"merge parent {parent_id} of commit {origin.commit} is missing or not a commit",
                    origin.reference,
                    parent_id,
                )
        self._parents.clear()
