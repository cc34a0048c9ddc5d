"""The repository consistency checker behind ``lochkit check``.

It reads a live repository only through the Persist contract, as any lochkit process would:

1. ``int/refs``: its chain, its index (the registry of reference names) and every registration
   record (RefObj) the index points to; the names ever registered, from its commits' operations;
2. ``int/repo``: its chain and the repository description;
3. every reference row of a name ever registered, compared with the registry: a row for every live
   name and none for the others. Half-done creates and deletes are what a process that died between
   the steps of ``ReferenceLogic`` leaves; they are reported (and finished with ``repair``, through
   the same recovery every read performs). A row the registry does not list is an error;
4. each reference's commit chain (see :mod:`persist_spi.check.chains`);
5. the commit-target lease of each branch (``int/commit-lease/<branch>``, written by the
   ``coordinated`` commit policy) where there is one: its pointer is a ticket-lock state, not an
   object id, so it is decoded as a lease instead of walked as a chain.

A check of a repository others are writing to can see a create or delete in progress as half-done;
anything else it reports is re-checked against a newer ``int/refs`` before it is believed.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence
from dataclasses import dataclass

from persist_spi.check.chains import ChainVerifier
from persist_spi.check.findings import CheckReport, Finding, ReferenceSummary, Severity
from persist_spi.check.probe import Undecodable, probe_objects
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.store_index import deserialize_index
from persist_spi.logic.commit_lease import LEASE_PREFIX, LeaseState, lease_ref_name
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.internal_refs import REF_REFS, REF_REPO, REFS_HEADS, REFS_TAGS, is_internal
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.objs import CommitObj, RefObj, TagObj
from persist_spi.persist import Persist
from persist_spi.references import Reference

#: Reference rows per bulk read.
ROWS_BATCH = 50
#: How often a suspicious state is re-read against a newer int/refs before it is reported.
STALE_ROUNDS = 3


class RowState(enum.Enum):
    LIVE = "live"
    ABSENT = "absent"
    HALF_DONE_CREATE = "half-done-create"
    HALF_DONE_DELETE = "half-done-delete"
    UNREGISTERED_ROW = "unregistered-reference"


_MESSAGES = {
    RowState.HALF_DONE_CREATE: "registered in int/refs but has no row: a create stopped half-way",
    RowState.HALF_DONE_DELETE: "row marked deleted: a delete stopped half-way",
    RowState.UNREGISTERED_ROW: "has a row that int/refs does not list: listings miss it",
}


@dataclass(frozen=True)
class _Registry:
    """int/refs at one pointer: live name -> registration record id."""

    pointer: ObjId
    live: dict[str, ObjId]


def reference_kind(name: str) -> str:
    if name.startswith(REFS_HEADS):
        return "branch"
    if name.startswith(REFS_TAGS):
        return "tag"
    if name.startswith(LEASE_PREFIX):
        return "lease"
    return "internal" if is_internal(name) else "other"


class RepositoryChecker:
    def __init__(
        self,
        persist: Persist,
        *,
        backend: str,
        address: str,
        repair: bool = False,
        max_commits: int | None = None,
    ) -> None:
        self.persist = persist
        self.repair = repair
        self.report = CheckReport(persist.repository_id, backend, address)
        self.chains = ChainVerifier(persist, self.report, max_commits)
        self.commits = CommitLogic(persist)
        self._registrations: dict[str, RefObj] = {}

    def run(self) -> CheckReport:
        started = time.monotonic()
        try:
            self._run()
        finally:
            self.report.duration_seconds = time.monotonic() - started
        return self.report

    def _finding(
        self,
        severity: Severity,
        check: str,
        message: str,
        reference: str | None = None,
        subject: object = None,
    ) -> None:
        self.report.findings.append(
            Finding(severity, check, message, reference, None if subject is None else str(subject))
        )

    def _run(self) -> None:
        refs_row, repo_row = self.persist.fetch_references([REF_REFS, REF_REPO])
        if refs_row is None:
            self.report.initialised = False
            self._finding(
                Severity.ERROR,
                "no-repository",
                f"repository '{self.persist.repository_id}' has no {REF_REFS}: it was never initialised "
                "here; check the repository id (--repository) and the address",
            )
            return
        ever = self._walk_int_refs(refs_row)
        registry = self._registry(refs_row.pointer)
        self._check_int_repo(repo_row)
        if registry is not None:
            self._check_registrations(registry)
            names = sorted(set(ever) | set(registry.live))
            self._check_rows(names, registry)
            self._check_leases([n for n in names if n.startswith(REFS_HEADS)])
        self.chains.verify_collected()

    # --- internal references ---------------------------------------------------------------------

    def _walk_int_refs(self, row: Reference) -> dict[str, None]:
        ever: dict[str, None] = {}

        def note(commit: CommitObj) -> None:
            try:
                index = deserialize_index(commit.incremental_index)
            except Exception:  # reported by the chain walk already
                return
            for element in index:
                if element.op.action.current_commit:
                    ever.setdefault(element.key, None)

        summary = ReferenceSummary(REF_REFS, "internal", str(row.pointer))
        self.report.references.append(summary)
        self.chains.walk(summary, row.pointer, on_commit=note)
        return ever

    def _registry(self, pointer: ObjId) -> _Registry | None:
        try:
            index = self.commits.complete_index_of(pointer)
            live = {e.key: e.op.value for e in index if e.op.action.exists and e.op.value}
        except Exception as e:  # whatever is broken, the listing cannot be read
            self._finding(
                Severity.ERROR,
                "unreadable-registry",
                f"the index of {REF_REFS} at {pointer} cannot be read ({type(e).__name__}: {e}); no "
                "reference can be listed",
                REF_REFS,
                pointer,
            )
            return None
        return _Registry(pointer, {k: v for k, v in live.items() if v is not None})

    def _check_int_repo(self, row: Reference | None) -> None:
        if row is None:
            self._finding(
                Severity.ERROR,
                "missing-int-repo",
                f"{REF_REPO} is missing: the repository's initialisation stopped half-way; "
                "initialise it again (RepositoryLogic.initialize is idempotent)",
                REF_REPO,
            )
            return
        summary = ReferenceSummary(REF_REPO, "internal", str(row.pointer))
        self.report.references.append(summary)
        self.chains.walk(summary, row.pointer)
        try:
            description = RepositoryLogic(self.persist).fetch_repository_description()
        except Exception as e:  # a description that does not parse is a finding, whatever the error
            self._finding(
                Severity.ERROR,
                "undecodable-repository-description",
                f"the repository description cannot be read: {type(e).__name__}: {e}",
                REF_REPO,
            )
            return
        if description is None:
            self._finding(
                Severity.ERROR,
                "missing-repository-description",
                "the repository description is missing",
                REF_REPO,
            )

    def _check_registrations(self, registry: _Registry) -> None:
        probed = probe_objects(self.persist, list(registry.live.values()))
        for name, record_id in registry.live.items():
            found = probed[record_id]
            self.report.counters.registrations += 1
            if isinstance(found, RefObj) and found.name == name:
                self._registrations[name] = found
                continue
            if found is None:
                problem = "is missing"
            elif isinstance(found, Undecodable):
                problem = f"cannot be decoded ({found.reason})"
            elif isinstance(found, RefObj):
                problem = f"names another reference ({found.name})"
            else:
                problem = f"is a {found.obj_type.name}, not a registration record"
            self._finding(
                Severity.ERROR,
                "bad-registration",
                f"the registration record {record_id} {problem}",
                name,
                record_id,
            )

    # --- reference rows --------------------------------------------------------------------------

    def _classify(
        self, names: Sequence[str], registry: _Registry
    ) -> dict[str, tuple[RowState, Reference | None]]:
        states: dict[str, tuple[RowState, Reference | None]] = {}
        for start in range(0, len(names), ROWS_BATCH):
            batch = list(names[start : start + ROWS_BATCH])
            for name, row in zip(batch, self.persist.fetch_references(batch), strict=True):
                states[name] = (_state(name in registry.live, row), row)
        return states

    def _check_rows(self, names: Sequence[str], registry: _Registry) -> None:
        states = self._classify(names, registry)
        for _ in range(STALE_ROUNDS):
            suspicious = [n for n, (s, _row) in states.items() if s not in (RowState.LIVE, RowState.ABSENT)]
            current = self.persist.fetch_reference(REF_REFS)
            if not suspicious or current is None or current.pointer == registry.pointer:
                break
            newer = self._registry(current.pointer)
            if newer is None:
                break
            registry = newer
            states.update(self._classify(suspicious, registry))
        if self.repair:
            states = self._repair(states, registry)
        for name, (state, row) in states.items():
            self._report_row(name, state, row)

    def _repair(
        self, states: dict[str, tuple[RowState, Reference | None]], registry: _Registry
    ) -> dict[str, tuple[RowState, Reference | None]]:
        half_done = [
            n for n, (s, _) in states.items() if s in (RowState.HALF_DONE_CREATE, RowState.HALF_DONE_DELETE)
        ]
        if not half_done:
            return states
        logic = ReferenceLogic(self.persist)
        remaining = list(half_done)
        for _ in range(STALE_ROUNDS):
            logic.get_references(remaining)  # every read finishes what it finds half-done
            current = self.persist.fetch_reference(REF_REFS)
            newer = self._registry(current.pointer) if current is not None else None
            if newer is None:
                break
            registry = newer
            again = self._classify(remaining, registry)
            for name, (state, row) in again.items():
                if state in (RowState.LIVE, RowState.ABSENT):
                    was = states[name][0]
                    self._finding(
                        Severity.REPAIRED,
                        was.value,
                        f"{_MESSAGES[was]}; finished: the reference is now {state.value}",
                        name,
                        name,
                    )
                states[name] = (state, row)
            remaining = [n for n in remaining if states[n][0] not in (RowState.LIVE, RowState.ABSENT)]
            if not remaining:
                break
        return states

    def _report_row(self, name: str, state: RowState, row: Reference | None) -> None:
        if state is RowState.ABSENT:
            return
        if state is not RowState.LIVE:
            severity = Severity.ERROR if state is RowState.UNREGISTERED_ROW else Severity.HALF_DONE
            self._finding(severity, state.value, f"{name} {_MESSAGES[state]}", name, name)
        record = self._registrations.get(name)
        if (
            row is not None
            and record is not None
            and state is RowState.LIVE
            and (row.created_at_micros, row.extended_info_obj)
            != (record.created_at_micros, record.extended_info_obj)
        ):
            self._finding(
                Severity.ERROR,
                "registration-mismatch",
                f"{name}'s row (created at {row.created_at_micros}) is not the reference int/refs "
                f"registered (created at {record.created_at_micros})",
                name,
                name,
            )
        head = row.pointer if row is not None else (record.initial_pointer if record is not None else None)
        if head is None:
            return
        summary = ReferenceSummary(name, reference_kind(name), str(head))
        self.report.references.append(summary)
        if head != EMPTY_OBJ_ID:
            self.chains.walk(summary, head)
        extended = row.extended_info_obj if row is not None else None
        if extended is not None and not isinstance(probe_objects(self.persist, [extended])[extended], TagObj):
            summary.errors += 1
            self._finding(
                Severity.ERROR,
                "missing-tag-info",
                f"tag information {extended} of {name} is missing",
                name,
                extended,
            )

    # --- commit-target leases ----------------------------------------------------------------------

    def _check_leases(self, branches: Sequence[str]) -> None:
        """Each branch's lease row, where the ``coordinated`` policy left one. A lease in use when
        its branch was deleted outlives it (a delete removes only a free one), and a waiting count
        above zero is a lease in use (or one a crashed holder left: the next writer takes it over),
        so neither is a finding."""
        names = [lease_ref_name(b) for b in branches]
        for start in range(0, len(names), ROWS_BATCH):
            batch = names[start : start + ROWS_BATCH]
            for name, row in zip(batch, self.persist.fetch_references(batch), strict=True):
                if row is None or row.deleted:
                    continue
                summary = ReferenceSummary(name, "lease", row.pointer.hex())
                self.report.references.append(summary)
                try:
                    state = LeaseState.decode(row.pointer)
                except ValueError as e:
                    problem = str(e)
                else:
                    if state.serving <= state.next_ticket:
                        continue
                    problem = (
                        f"the lease serves ticket {state.serving} but has handed out only "
                        f"{state.next_ticket}: its state went backwards"
                    )
                summary.errors += 1
                self._finding(Severity.ERROR, "bad-commit-lease", problem, name, row.pointer.hex())


def _state(registered: bool, row: Reference | None) -> RowState:
    if row is None:
        return RowState.HALF_DONE_CREATE if registered else RowState.ABSENT
    if row.deleted:
        return RowState.HALF_DONE_DELETE
    return RowState.LIVE if registered else RowState.UNREGISTERED_ROW
