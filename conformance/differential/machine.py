"""The differential state machine: the same random operations to lochkit's version store and to
another one (a real Nessie server), compared after every step.

Each rule draws one operation over a small world (branches ``main``, ``b1``, ``b2``, tag ``v1``;
namespaces ``n1``, ``n2``, ``n1.n3`` and a few tables in and out of them) so operations collide
often. The rule runs it on both sides and compares the outcomes (kind, conflicts, messages, merge
details, created commits); after every step the invariant compares every reference (head, log,
entries and contents). Commit and content ids are paired as they are met, never compared. A
disagreement is a failure unless :mod:`conformance.differential.normalise` recognises it as a
registered difference; then it is counted, and the side whose target reference moved is reset to
the head before the step.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from conformance.differential.mapping import Pairing, commit_pairing
from conformance.differential.normalise import Step, explain
from conformance.differential.observe import (
    Divergence,
    Labels,
    Outcome,
    attempt,
    compare_outcomes,
    compare_reference,
    head_of,
    merge_summary,
    without_id,
)
from conformance.differential.sides import Side
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.versionstore.content import (
    Content,
    ContentKey,
    DeltaLakeTable,
    IcebergTable,
    IcebergView,
    Namespace,
)
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import (
    Delete,
    MergeBehavior,
    MergeKeyBehavior,
    Operation,
    Put,
    Unchanged,
)
from persist_spi.versionstore.refs import NamedRef, RefKind
from persist_spi.versionstore.results import LogEntry, MergeResult

BRANCHES = ("main", "b1", "b2")
TAGS = ("v1",)
NAMESPACE_KEYS = ("n1", "n2", "n1.n3")
TABLE_KEYS = ("t1", "t2", "n1.t1", "n1.t2", "n2.t1", "n1.n3.t1")
ALL_KEYS = NAMESPACE_KEYS + TABLE_KEYS
KINDS = ("table", "view", "delta")
#: A content id neither side ever assigns: an update or rename of an absent key carries it.
FOREIGN_ID = "00000000-0000-4000-8000-00000000f00d"

keys = st.sampled_from(ALL_KEYS)
#: None: a key the branch holds (drawn when the rule runs), so most operations meet existing content.
some_key = st.one_of(st.none(), st.none(), st.none(), keys)
tags = st.integers(0, 3)  # few distinct values, so both sides of a merge often agree
stale = st.sampled_from([0, 0, 0, 1, 2, 3])  # 0: the head; n: n commits before it

OpSpec = tuple[Any, ...]
op_specs: st.SearchStrategy[OpSpec] = st.one_of(
    st.tuples(st.just("put"), keys, st.sampled_from(KINDS), tags),
    st.tuples(st.just("update"), some_key, tags),
    st.tuples(st.just("update"), some_key, tags),
    st.tuples(st.just("delete"), some_key),
    st.tuples(st.just("unchanged"), some_key),
    st.tuples(st.just("rename"), some_key, keys, st.booleans()),
    st.tuples(st.just("recreate"), some_key, st.sampled_from(KINDS)),
)


@dataclass
class Report:
    """What the runs did: operations by kind and outcome, disagreements explained, by difference."""

    examples: int = 0
    steps: int = 0
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    explained: Counter[str] = field(default_factory=Counter)


def new_content(k: ContentKey, kind: str, tag: int) -> Content:
    if str(k) in NAMESPACE_KEYS:
        return Namespace(elements=k.elements, properties={"tag": str(tag)})
    location = f"s3://b/{k}/{tag}.json"
    if kind == "view":
        return IcebergView(metadata_location=location, version_id=tag, sql_text="select 1")
    if kind == "delta":
        return DeltaLakeTable(metadata_location_history=(location,))
    return IcebergTable(metadata_location=location, snapshot_id=tag)


def changed(content: Content, tag: int) -> Content:
    """The same content (id and type) with a new value."""
    if isinstance(content, Namespace):
        return dataclasses.replace(content, properties={"tag": str(tag), "changed": "yes"})
    if isinstance(content, DeltaLakeTable):
        return dataclasses.replace(content, metadata_location_history=(f"changed-{tag}",))
    if isinstance(content, IcebergTable | IcebergView):
        return dataclasses.replace(content, metadata_location=f"changed-{tag}")
    return content


def kind_of(content: Content) -> str:
    return {IcebergView: "view", DeltaLakeTable: "delta"}.get(type(content), "table")


def make_machine(
    reference: Callable[[], Side],
    candidate: Callable[[], Side],
    report: Report,
) -> type[RuleBasedStateMachine]:
    """A machine class comparing fresh sides from ``reference`` (lochkit) and ``candidate``."""

    class DifferentialMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.lochkit = reference()
            self.nessie = candidate()
            self.sides = (self.lochkit, self.nessie)
            self.labels = Labels(commit_pairing(str(EMPTY_OBJ_ID)), Pairing("id"))
            self.counter = itertools.count(1)
            self.known_refs: list[NamedRef] | None = None
            report.examples += 1

        def teardown(self) -> None:
            for side in self.sides:
                for name in (*BRANCHES, *TAGS):
                    for kind in RefKind:
                        ref = side.ref(name, kind)
                        found = head_of(side, ref)
                        if found.ok:
                            attempt(functools.partial(side.api.delete_reference, ref, found.value))

        # --- the shared world -------------------------------------------------------------------

        def existing(self, kinds: Sequence[RefKind] = (RefKind.BRANCH, RefKind.TAG)) -> list[NamedRef]:
            """Logical references that exist (lochkit's view; the invariant keeps both equal)."""
            if self.known_refs is None:  # read once per step: only a step changes them
                names = [NamedRef(n, RefKind.BRANCH) for n in BRANCHES] + [
                    NamedRef(t, RefKind.TAG) for t in TAGS
                ]
                self.known_refs = [r for r in names if head_of(self.lochkit, self.actual(self.lochkit, r)).ok]
            return [r for r in self.known_refs if r.kind in kinds]

        def actual(self, side: Side, logical: NamedRef) -> NamedRef:
            return side.ref(logical.name, logical.kind)

        def commit_back(self, logical: NamedRef, depth: int) -> ObjId | None:
            """lochkit's commit ``depth`` commits before the head of ``logical`` (None: too short)."""
            log = list(
                itertools.islice(self.lochkit.api.get_commits(self.actual(self.lochkit, logical)), depth + 1)
            )
            return log[depth].hash if len(log) > depth else None

        def on(self, side: Side, commit: ObjId) -> ObjId:
            """``side``'s id for lochkit's ``commit``."""
            if side is self.lochkit:
                return commit
            paired = self.labels.commits.to_nessie(commit)
            if paired is None:
                raise Divergence(f"commit {commit} of lochkit has no counterpart yet")
            return ObjId.from_hex(paired)

        def per_side(self, call: Callable[[Side], Any]) -> tuple[Callable[[], Any], Callable[[], Any]]:
            return (lambda: call(self.lochkit)), (lambda: call(self.nessie))

        def heads(self, logical: NamedRef) -> list[ObjId | None]:
            out: list[ObjId | None] = []
            for side in self.sides:
                found = head_of(side, self.actual(side, logical))
                out.append(found.value if found.ok else None)
            return out

        def run(
            self,
            step: Step,
            calls: tuple[Callable[[], Any], Callable[[], Any]],
            target: NamedRef | None = None,
            what: str = "",
        ) -> tuple[Outcome, Outcome]:
            """Both calls, compared. ``target``: the reference the step may move (reset on both
            sides after a disagreement a registered difference explains)."""
            before = self.heads(target) if target is not None else []
            self.known_refs = None
            lochkit, nessie = attempt(calls[0]), attempt(calls[1])
            report.steps += 1
            report.outcomes[(step.kind, lochkit.kind)] += 1
            try:
                compare_outcomes(what or step.kind, lochkit, nessie, self.labels, self.sides)
                self.compare_results(step, lochkit, nessie)
            except Divergence as e:
                difference = explain(step, lochkit, nessie)
                if difference is None:
                    facts = {k: v for k, v in step.facts.items() if v}
                    raise Divergence(f"{e}\n  facts read from lochkit before the step: {facts}") from None
                report.explained[difference] += 1
                if target is not None:
                    self.reset(target, before)
                return lochkit, nessie
            return lochkit, nessie

        def reset(self, logical: NamedRef, before: list[ObjId | None]) -> None:
            for side, head in zip(self.sides, before, strict=True):
                now = self.heads(logical)[self.sides.index(side)]
                if head is not None and now is not None and now != head:
                    side.api.assign(self.actual(side, logical), now, head)

        def compare_results(self, step: Step, lochkit: Outcome, nessie: Outcome) -> None:
            left, right = lochkit.value, nessie.value
            if not lochkit.ok:
                left, right = getattr(left, "result", None), getattr(right, "result", None)
            if isinstance(left, MergeResult) and isinstance(right, MergeResult):
                summaries = merge_summary(left), merge_summary(right)
                if summaries[0] != summaries[1]:
                    raise Divergence(
                        f"{step.kind} result:\n  lochkit: {summaries[0]}\n  nessie:  {summaries[1]}"
                    )
                if (left.resultant_target_hash is None) != (right.resultant_target_hash is None):
                    raise Divergence(
                        f"{step.kind} resultant target hash: {left.resultant_target_hash} (lochkit), "
                        f"{right.resultant_target_hash} (nessie)"
                    )
                if step.kind == "transplant":
                    # Nessie's REST API does not list the commits a transplant created (a client
                    # can only infer them); the logs compared after the step show them on both sides.
                    return
                if len(left.created_commits) != len(right.created_commits):
                    raise Divergence(
                        f"{step.kind} created {len(left.created_commits)} commits on lochkit, "
                        f"{len(right.created_commits)} on nessie"
                    )
                for a, b in zip(left.created_commits, right.created_commits, strict=True):
                    self.labels.commits.pair(a, b)
                if left.resultant_target_hash is not None and right.resultant_target_hash is not None:
                    self.labels.commits.pair(left.resultant_target_hash, right.resultant_target_hash)
                if left.common_ancestor is not None and right.common_ancestor is not None:
                    self.labels.commits.pair(left.common_ancestor, right.common_ancestor)
            elif lochkit.ok and step.kind == "commit":
                self.labels.commits.pair(left.hash, right.hash)
                if set(left.added_content_ids) != set(right.added_content_ids):
                    raise Divergence(
                        f"new content ids for {sorted(map(str, left.added_content_ids))} (lochkit), "
                        f"{sorted(map(str, right.added_content_ids))} (nessie)"
                    )
                for k, cid in left.added_content_ids.items():
                    self.labels.ids.pair(cid, right.added_content_ids[k])
            elif lochkit.ok and isinstance(left, list) and left != right:
                raise Divergence(f"{step.kind}:\n  lochkit: {left}\n  nessie:  {right}")

        # --- the start: a first commit on main, and b1 and b2 branched from it ------------------

        @initialize()
        def first_commit(self) -> None:
            main = NamedRef("main", RefKind.BRANCH)
            puts = [
                Put(ContentKey.parse(k), new_content(ContentKey.parse(k), "table", 0))
                for k in ("n1", "n2", "n1.n3", "t1", "n1.t1")
            ]
            meta = CommitMeta("first commit")
            self.run(
                Step("commit"),
                self.per_side(lambda s: s.api.commit(self.actual(s, main), None, meta, puts)),
                what="first commit",
            )
            for name in BRANCHES[1:]:
                self.run(
                    Step("create-reference"),
                    self.per_side(functools.partial(self.branch_from_main, name)),
                    what=f"create {name}",
                )

        def branch_from_main(self, name: str, side: Side) -> ObjId:
            head = side.api.reference(side.ref("main")).hash
            return side.api.create_reference(side.ref(name), head).hash

        # --- commits ----------------------------------------------------------------------------

        def resolve(self, data: st.DataObject, on: NamedRef, specs: list[OpSpec]) -> list[OpSpec]:
            """Specs with their "existing key" slots (None) filled with keys the branch holds."""
            held = sorted(str(e.key) for e in self.lochkit.api.get_entries(self.actual(self.lochkit, on)))
            return [
                (
                    spec[0],
                    spec[1] if spec[1] is not None else data.draw(st.sampled_from(held or list(ALL_KEYS))),
                    *spec[2:],
                )
                for spec in specs
            ]

        def operations(self, side: Side, on: NamedRef, specs: Sequence[OpSpec]) -> list[Operation]:
            """The abstract operations as ``side`` must send them (its own content ids)."""
            ref = self.actual(side, on)
            ops: list[Operation] = []
            deleted: set[str] = set()
            for spec in specs:
                kind = spec[0]
                k = ContentKey.parse(spec[1])
                current = side.api.get_value(ref, k)
                if kind == "put":
                    type_ = kind_of(current) if current is not None and spec[1] in deleted else spec[2]
                    ops.append(Put(k, new_content(k, type_, spec[3])))
                elif kind == "update":
                    base = current if current is not None else new_content(k, "table", 0).with_id(FOREIGN_ID)
                    ops.append(Put(k, changed(base, spec[2])))
                elif kind == "delete":
                    ops.append(Delete(k))
                    deleted.add(spec[1])
                elif kind == "unchanged":
                    ops.append(Unchanged(k))
                elif kind == "rename":
                    dst = ContentKey.parse(spec[2])
                    moved = current if current is not None else new_content(k, "table", 0).with_id(FOREIGN_ID)
                    ops += [Delete(k), Put(dst, changed(moved, 9) if spec[3] else moved)]
                    deleted.add(spec[1])
                else:  # recreate, with the type it has (Nessie cannot change it, see normalise)
                    type_ = kind_of(current) if current is not None else spec[2]
                    ops += [Delete(k), Put(k, new_content(k, type_, 7))]
                    deleted.add(spec[1])
            return ops

        def commit_facts(self, on: NamedRef, expected: ObjId | None, ops: list[Operation]) -> dict[str, Any]:
            """Read from lochkit before the commit: Unchanged keys absent at a stale expected hash,
            and namespaces the commit deletes while creating content in them."""
            head_ref = self.actual(self.lochkit, on)
            facts: dict[str, Any] = {"absent_unchanged": set(), "orphaning": set()}
            unchanged = [op.key for op in ops if isinstance(op, Unchanged)]
            if expected is not None and unchanged:
                present = self.lochkit.api.get_values(expected, unchanged)
                facts["absent_unchanged"] = {str(k) for k in unchanged if k not in present}
            head = self.lochkit.api.get_values(head_ref, [op.key for op in ops])
            deleted_ns = {
                op.key for op in ops if isinstance(op, Delete) and isinstance(head.get(op.key), Namespace)
            }
            readded = {op.key for op in ops if isinstance(op, Put) and isinstance(op.content, Namespace)}
            for op in ops:
                if isinstance(op, Put) and (
                    op.key not in head or op.key in {o.key for o in ops if isinstance(o, Delete)}
                ):
                    for ns in deleted_ns - readded:
                        if op.key.starts_with(ns) and op.key != ns:
                            facts["orphaning"].add(str(ns))
            return facts

        @rule(
            data=st.data(),
            specs=st.lists(op_specs, min_size=1, max_size=3),
            depth=stale,
            empty=st.sampled_from([False] * 15 + [True]),
        )
        def commit(self, data: st.DataObject, specs: list[OpSpec], depth: int, empty: bool) -> None:
            """A commit of 1-3 operations; now and then one without any (``empty``)."""
            on = data.draw(st.sampled_from(self.existing([RefKind.BRANCH])))  # main always exists
            if empty:
                meta = CommitMeta(f"empty {next(self.counter)}")
                self.run(
                    Step("empty-commit"),
                    self.per_side(lambda s: s.api.commit(self.actual(s, on), None, meta, [])),
                    target=on,
                )
                return
            specs = self.resolve(data, on, specs)
            expected = self.commit_back(on, depth) if depth else None
            n = next(self.counter)
            meta = CommitMeta(f"commit {n}", authors=(f"author{n % 3}",), properties={"step": str(n)})
            ops = {id(side): self.operations(side, on, specs) for side in self.sides}
            facts = self.commit_facts(on, expected, ops[id(self.lochkit)])
            self.run(
                Step("commit", facts),
                self.per_side(
                    lambda s: s.api.commit(
                        self.actual(s, on),
                        None if expected is None else self.on(s, expected),
                        meta,
                        ops[id(s)],
                    )
                ),
                target=on,
                what=f"commit {specs} on {on.name} (expected {depth} back)",
            )

        # --- references -------------------------------------------------------------------------

        @rule(data=st.data(), name=st.sampled_from(BRANCHES[1:] + TAGS), depth=stale)
        def create_reference(self, data: st.DataObject, name: str, depth: int) -> None:
            kind = RefKind.TAG if name in TAGS else RefKind.BRANCH
            source = data.draw(st.sampled_from(self.existing([RefKind.BRANCH])))
            at = self.commit_back(source, depth) or self.heads(source)[0] or EMPTY_OBJ_ID
            self.run(
                Step("create-reference"),
                self.per_side(lambda s: s.api.create_reference(s.ref(name, kind), self.on(s, at)).hash),
                what=f"create {kind.name} {name} at {depth} back on {source.name}",
            )

        @rule(name=st.sampled_from(BRANCHES[1:] + TAGS), depth=st.sampled_from([0, 0, 1]))
        def delete_reference(self, name: str, depth: int) -> None:
            logical = NamedRef(name, RefKind.TAG if name in TAGS else RefKind.BRANCH)
            expected = self.commit_back(logical, depth) if self.heads(logical)[0] is not None else None
            at = expected or EMPTY_OBJ_ID
            self.run(
                Step("delete-reference"),
                self.per_side(
                    lambda s: s.api.delete_reference(self.actual(s, logical), self.on(s, at)) and None
                ),
                what=f"delete {name} expecting {depth} back",
            )

        @rule(data=st.data(), depth=stale, stale_expected=st.booleans())
        def assign(self, data: st.DataObject, depth: int, stale_expected: bool) -> None:
            logical = data.draw(st.sampled_from(self.existing()))
            source = data.draw(st.sampled_from(self.existing([RefKind.BRANCH])))
            to = self.commit_back(source, depth) or EMPTY_OBJ_ID
            expected = self.commit_back(logical, 1 if stale_expected else 0) or EMPTY_OBJ_ID
            self.run(
                Step("assign"),
                self.per_side(
                    lambda s: (
                        s.api.assign(self.actual(s, logical), self.on(s, expected), self.on(s, to)) and None
                    )
                ),
                what=f"assign {logical.name} to {depth} back on {source.name}",
            )

        # --- merge and transplant ---------------------------------------------------------------

        def changes(self, before: ObjId, after: ObjId) -> tuple[set[str], set[str]]:
            """(re-created keys, keys of renames) between two lochkit commits."""
            old = {str(e.key): e.content_id for e in self.lochkit.api.get_entries(before)}
            new = {str(e.key): e.content_id for e in self.lochkit.api.get_entries(after)}
            recreated = {k for k in old.keys() & new.keys() if old[k] != new[k]}
            by_id_old = {cid: k for k, cid in old.items()}
            renamed: set[str] = set()
            for k, cid in new.items():
                if cid in by_id_old and by_id_old[cid] != k:
                    renamed |= {k, by_id_old[cid]}
            return recreated, renamed

        @rule(
            data=st.data(),
            default=st.sampled_from([MergeBehavior.NORMAL] * 3 + [MergeBehavior.FORCE, MergeBehavior.DROP]),
            behaviors=st.lists(st.tuples(keys, st.sampled_from(list(MergeBehavior))), max_size=1),
            dry_run=st.booleans(),
            raise_on_conflict=st.booleans(),
            own_message=st.booleans(),
        )
        def merge(
            self,
            data: st.DataObject,
            default: MergeBehavior,
            behaviors: list[tuple[str, MergeBehavior]],
            dry_run: bool,
            raise_on_conflict: bool,
            own_message: bool,
        ) -> None:
            source = data.draw(st.sampled_from(self.existing()))
            target = data.draw(st.sampled_from(self.existing([RefKind.BRANCH])))
            key_behaviors = [MergeKeyBehavior(ContentKey.parse(k), b) for k, b in behaviors]
            meta = CommitMeta(f"merge {next(self.counter)}") if own_message else None
            facts: dict[str, Any] = {}
            heads = [self.heads(source)[0], self.heads(target)[0]]
            facts["source_empty"], facts["target_empty"] = (h == EMPTY_OBJ_ID for h in heads)
            if heads[0] is not None and heads[1] is not None:
                base = attempt(
                    lambda: (
                        self.lochkit.api.merge(
                            self.actual(self.lochkit, source),
                            self.actual(self.lochkit, target),
                            dry_run=True,
                            raise_on_conflict=False,
                            default_behavior=MergeBehavior.FORCE,
                        ).common_ancestor
                    )
                )
                if base.ok and base.value is not None:
                    facts["recreated"], facts["renamed"] = self.changes(base.value, heads[0])
            self.run(
                Step("merge", facts),
                self.per_side(
                    lambda s: s.api.merge(
                        self.actual(s, source),
                        self.actual(s, target),
                        default_behavior=default,
                        key_behaviors=key_behaviors,
                        dry_run=dry_run,
                        meta=meta,
                        raise_on_conflict=raise_on_conflict,
                    )
                ),
                target=target,
                what=f"merge {source.name} into {target.name} ({default.name}, {behaviors}, dry {dry_run})",
            )

        def skips_before_last(self, earlier: Sequence[LogEntry], target: NamedRef) -> bool:
            """Whether a transplanted commit before the last one would be skipped: the target
            already holds everything it changed (lochkit's view; ``earlier`` is newest first)."""
            head = self.actual(self.lochkit, target)
            for entry in earlier:
                before = {
                    str(e.key): e for e in self.lochkit.api.get_entries(entry.parent, with_content=True)
                }
                after = {str(e.key): e for e in self.lochkit.api.get_entries(entry.hash, with_content=True)}
                changed = [ContentKey.parse(k) for k in after if before.get(k) != after[k]]
                removed = [k for k in before if k not in after]
                if removed or not changed:
                    continue
                held = self.lochkit.api.get_values(head, changed)
                if all(held.get(k) == after[str(k)].content for k in changed):
                    return True
            return False

        @rule(data=st.data(), count=st.integers(1, 3), dry_run=st.booleans(), raise_on_conflict=st.booleans())
        def transplant(self, data: st.DataObject, count: int, dry_run: bool, raise_on_conflict: bool) -> None:
            branches = self.existing([RefKind.BRANCH])
            if len(branches) < 2:
                return
            source = data.draw(st.sampled_from(branches))
            target = data.draw(st.sampled_from([b for b in branches if b != source]))
            log = list(
                itertools.islice(self.lochkit.api.get_commits(self.actual(self.lochkit, source)), count)
            )
            if not log:
                return
            sequence = [e.hash for e in reversed(log)]
            recreated: set[str] = set()
            renamed: set[str] = set()
            for entry in log:
                more = self.changes(entry.parent, entry.hash)
                recreated |= more[0]
                renamed |= more[1]
            facts = {
                "recreated": recreated,
                "renamed": renamed,
                "sequence": sequence,
                "dry_run": dry_run,
                "skips_before_last": self.skips_before_last(log[1:], target),
            }
            self.run(
                Step("transplant", facts),
                self.per_side(
                    lambda s: s.api.transplant(
                        self.actual(s, target),
                        None,
                        [self.on(s, h) for h in sequence],
                        dry_run=dry_run,
                        raise_on_conflict=raise_on_conflict,
                    )
                ),
                target=target,
                what=f"transplant {len(sequence)} of {source.name} onto {target.name} (dry {dry_run})",
            )

        # --- reads ------------------------------------------------------------------------------

        @rule(data=st.data(), depth=st.integers(1, 3), wanted=st.lists(keys, min_size=1, max_size=4))
        def read_older_commit(self, data: st.DataObject, depth: int, wanted: list[str]) -> None:
            refs = self.existing()
            if not refs:
                return
            logical = data.draw(st.sampled_from(refs))
            at = self.commit_back(logical, depth)
            if at is None:
                return
            ks = [ContentKey.parse(k) for k in wanted]

            def read(side: Side) -> list[Any]:
                assert at is not None
                values = side.api.get_values(self.on(side, at), ks)
                return sorted((str(k), without_id(v)) for k, v in values.items())

            self.run(
                Step("read"),
                self.per_side(read),
                what=f"values at {depth} back on {logical.name}",
            )

        @rule(data=st.data(), low=st.none() | keys, high=st.none() | keys, prefix=st.none() | keys)
        def entries(self, data: st.DataObject, low: str | None, high: str | None, prefix: str | None) -> None:
            refs = self.existing()
            if not refs:
                return
            logical = data.draw(st.sampled_from(refs))
            if prefix is not None:
                low = high = None
            bounds = {
                "min_key": None if low is None else ContentKey.parse(low),
                "max_key": None if high is None else ContentKey.parse(high),
                "prefix_key": None if prefix is None else ContentKey.parse(prefix),
            }
            inverted = low is not None and high is not None and ContentKey.parse(low) > ContentKey.parse(high)

            def listing(side: Side) -> list[Any]:
                return [
                    (str(e.key), e.payload)
                    for e in side.api.get_entries(self.actual(side, logical), **bounds)  # type: ignore[arg-type]
                ]

            self.run(
                Step("entries", {"inverted": inverted}),
                self.per_side(listing),
                what=f"entries of {logical.name} {bounds}",
            )

        @rule(data=st.data())
        def diff(self, data: st.DataObject) -> None:
            refs = self.existing()
            if not refs:
                return
            a, b = data.draw(st.sampled_from(refs)), data.draw(st.sampled_from(refs))

            def listing(side: Side) -> list[Any]:
                return [
                    (str(d.key), without_id(d.from_content), without_id(d.to_content))
                    for d in side.api.get_diffs(self.actual(side, a), self.actual(side, b))
                ]

            self.run(
                Step("diff"),
                self.per_side(listing),
                what=f"diff {a.name} -> {b.name}",
            )

        @rule(data=st.data())
        def log_with_operations(self, data: st.DataObject) -> None:
            refs = self.existing()
            if not refs:
                return
            logical = data.draw(st.sampled_from(refs))

            def log(side: Side) -> list[Any]:
                entries = itertools.islice(
                    side.api.get_commits(self.actual(side, logical), with_operations=True), 4
                )
                return [
                    sorted(
                        (
                            type(op).__name__,
                            str(op.key),
                            without_id(op.content) if isinstance(op, Put) else None,
                        )
                        for op in (e.operations or ())
                    )
                    for e in entries
                ]

            self.run(
                Step("log"),
                self.per_side(log),
                what=f"log with operations of {logical.name}",
            )

        # --- after every step -------------------------------------------------------------------

        @invariant()
        def same_references(self) -> None:
            for name in BRANCHES:
                compare_reference(NamedRef(name, RefKind.BRANCH), self.sides, self.labels)
            for name in TAGS:
                compare_reference(NamedRef(name, RefKind.TAG), self.sides, self.labels)

    return DifferentialMachine
