"""The shared-database scenario: a real Nessie server and lochkit (``layout=nessie``) take turns on
one database, and then write to it at the same time.

Each direction returns an :class:`Outcome` (passed or not, commits made, what was seen or what
differed), so the tests assert on them and ``lochkit shared-db`` prints them as a table:

- **Nessie -> lochkit**: Nessie writes over REST v2 (namespace, all content types, a branch merged
  back, a tag, a branch created and deleted) and is stopped; lochkit reads the same references,
  hashes, logs, contents and diffs, and its checker finds nothing wrong.
- **lochkit -> Nessie**: lochkit writes (commits, a branch merged back, Nessie's ``dev`` deleted, a
  tag); Nessie, restarted, reads the same, commits on top of lochkit's head, deletes ``lk``, merges
  a fresh branch and is stopped; Nessie's own deserialisation reads every stored object and
  reference (the full scan), and lochkit reads Nessie's final state.
- **reverse order**: lochkit initialises a fresh database; Nessie starts on it without
  initialising it again (``int/refs`` and ``int/repo`` unchanged, Nessie reports lochkit's creation
  time); then both directions above run on it.
- **concurrent**: both commit to one branch at the same time; afterwards the branch is one chain
  holding every acknowledged commit exactly once (:mod:`reliability.ledger`).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from loadgen.nessie_jvm import full_scan
from persist_spi.check.consistency import RepositoryChecker
from persist_spi.check.findings import ExitCode
from persist_spi.config import StoreConfig
from persist_spi.errors import LochkitError
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.opening import open_persist
from persist_spi.versionstore import CommitMeta, Put
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.errors import ReferenceConflictError, ReferenceRetryFailureError
from persist_spi.versionstore.refs import branch
from reliability.journal import Journal
from reliability.ledger import CommitLedger, message_for, read_ledgers, token_of, verify
from reliability.shared_db.database import SharedDatabase
from reliability.shared_db.facts import Facts, gather
from reliability.shared_db.names import CONCURRENT_COMMITS, DIRECTIONS
from reliability.shared_db.steps import (
    DIFFS,
    MAIN,
    key,
    lochkit_writes,
    nessie_continues,
    nessie_writes,
    table,
)


class ScenarioFailed(AssertionError):
    """What one side saw differs from the other, or a check failed; the message says what."""


PASSED: Final = "passed"
FAILED: Final = "FAILED"
NOT_APPLICABLE: Final = "n/a"


@dataclass
class Outcome:
    backend: str
    variant: str
    direction: str
    result: str
    commits: int = 0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.result != FAILED


@dataclass
class Run:
    """What one database's directions saw, handed from one direction to the next."""

    db: SharedDatabase
    variant: str
    classpath: Callable[[], str]
    outcomes: list[Outcome] = field(default_factory=list)
    nessie_facts: Facts | None = None

    def record(self, direction: str, body: Callable[[], tuple[int, str]]) -> Outcome:
        """Run one direction, turning its failure into a failed outcome (a direction that needs an
        earlier one's data fails with it)."""
        try:
            commits, detail = body()
            outcome = Outcome(self.db.backend, self.variant, direction, PASSED, commits, detail)
        except (ScenarioFailed, LochkitError, ReferenceConflictError) as e:
            outcome = Outcome(self.db.backend, self.variant, direction, FAILED, 0, f"{type(e).__name__}: {e}")
        self.outcomes.append(outcome)
        return outcome


def _same(what: str, expected: Facts, got: Facts) -> None:
    problems = expected.differences(got)
    if problems:
        raise ScenarioFailed(f"{what}: " + " | ".join(problems))


def _check_clean(db: SharedDatabase) -> str:
    """``lochkit check`` over the repository, read only, as the command opens it."""
    with db.adapter(read_only=True) as adapter:
        persist = open_persist(adapter, StoreConfig(), object_cache=False)
        report = RepositoryChecker(persist, backend=db.backend, address=adapter.address).run()
    if report.exit_code != ExitCode.CONSISTENT:
        shown = "; ".join(f"{f.check}: {f.message}" for f in report.findings[:5])
        raise ScenarioFailed(f"lochkit check is not clean: {report.summary_line()}: {shown}")
    return report.summary_line()


def nessie_to_lochkit(run: Run) -> Outcome:
    """Steps 1 and 2."""

    def body() -> tuple[int, str]:
        with run.db.nessie() as nessie:
            commits = nessie_writes(nessie)
            expected = gather(nessie, DIFFS)
        with run.db.lochkit() as lochkit:
            got = gather(lochkit, DIFFS)
        _same("lochkit read Nessie's repository differently", expected, got)
        if "tmp" in got.references:
            raise ScenarioFailed("branch tmp, deleted by Nessie, is visible to lochkit")
        run.nessie_facts = expected
        checked = _check_clean(run.db)
        return commits, f"{len(got.references)} refs, {got.commits} commits read alike; check: {checked}"

    return run.record(DIRECTIONS[0], body)


def lochkit_to_nessie(run: Run) -> Outcome:
    """Steps 3, 4 and 5 (after :func:`nessie_to_lochkit` on the same database)."""

    def body() -> tuple[int, str]:
        if run.nessie_facts is None:
            raise ScenarioFailed("needs Nessie's data from the direction before, which failed")
        with run.db.lochkit() as lochkit:
            commits = lochkit_writes(lochkit)
            written = gather(lochkit, DIFFS)
        with run.db.nessie() as nessie:
            seen = gather(nessie, DIFFS)
            _same("Nessie read lochkit's writes differently", written, seen)
            for gone in ("dev", "tmp"):
                if gone in seen.references:
                    raise ScenarioFailed(f"branch {gone} is back after lochkit deleted it")
            commits += nessie_continues(nessie)
            final = gather(nessie, DIFFS)
            values = _read_every_value(nessie, final)
        address = run.db.scan_address()
        scanned = (
            "no full scan (lochkit's full-scan program does not read this database yet)"
            if address is None
            else _scanned(full_scan(run.classpath(), address))
        )
        with run.db.lochkit() as lochkit:
            last = gather(lochkit, DIFFS)
        _same("lochkit read Nessie's final state differently", final, last)
        checked = _check_clean(run.db)
        return commits, (f"{values} values read back over REST; {scanned}; check: {checked}")

    return run.record(DIRECTIONS[1], body)


def _scanned(scan: dict[str, Any]) -> str:
    return f"Nessie's full scan read {scan['objects_total']} objects and {len(scan['references'])} refs"


def _read_every_value(api: VersionStoreApi, facts: Facts) -> int:
    """Every content value on every reference, read one by one."""
    count = 0
    for ref_name, contents in facts.contents.items():
        ref = api.named_ref(ref_name).named_ref
        for dotted, content in contents.items():
            if api.get_value(ref, key(dotted)) != content:
                raise ScenarioFailed(f"{dotted} on {ref_name} reads back differently over REST")
            count += 1
    return count


def reverse_order(run: Run) -> Outcome:
    """Step 6: lochkit initialises; Nessie starts on it without initialising again."""

    def body() -> tuple[int, str]:
        with run.db.lochkit(initialize=True) as lochkit:
            before = _internal_heads(lochkit)
            created = RepositoryLogic(lochkit.persist).fetch_repository_description()
        if created is None or created.repository_created_time is None:
            raise ScenarioFailed("lochkit initialised the repository but wrote no creation time")
        with run.db.nessie() as nessie:
            config = nessie.config()
        with run.db.lochkit() as lochkit:
            after = _internal_heads(lochkit)
        if before != after:
            raise ScenarioFailed(f"Nessie changed the internal references: {before} -> {after}")
        nessie_created = config.get("repositoryCreationTimestamp", "")
        lochkit_created = created.repository_created_time.isoformat().replace("+00:00", "Z")
        if _instant(nessie_created) != _instant(lochkit_created):
            raise ScenarioFailed(
                f"Nessie reports creation time {nessie_created}, lochkit wrote {lochkit_created}"
            )
        return 0, f"internal heads unchanged, creation time {nessie_created}"

    return run.record(DIRECTIONS[2], body)


def _instant(iso: str) -> str:
    """An ISO instant to the millisecond, whatever the precision it was written with."""
    import datetime

    parsed = datetime.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return parsed.astimezone(datetime.UTC).isoformat(timespec="milliseconds")


def _internal_heads(store: Any) -> dict[str, str]:
    heads = {}
    for name in ("int/refs", "int/repo"):
        ref = store.persist.fetch_reference(name)
        heads[name] = "missing" if ref is None else ref.pointer.hex()
    return heads


def concurrent(run: Run, commits_each: int = CONCURRENT_COMMITS) -> Outcome:
    """Step 7: Nessie (over REST) and lochkit (in-process) commit to one branch at the same time,
    retrying on conflict; the branch must hold every acknowledged commit exactly once, in one chain."""

    def body() -> tuple[int, str]:
        conc = branch("concurrent")
        journals = run.db.workdir / f"journals-{run.variant}"
        journals.mkdir(parents=True, exist_ok=True)
        with run.db.lochkit(initialize=True) as lochkit:
            lochkit.create_reference(conc, lochkit.reference(MAIN).hash)
            with run.db.nessie() as nessie:
                errors: list[str] = []
                retries: dict[str, int] = {}
                # Lockstep: both read the head and commit at the same moment in every round, so
                # every round is a race the databases' compare-and-swap decides.
                rounds = threading.Barrier(2, timeout=_ROUND_TIMEOUT_S)
                writers = [
                    threading.Thread(
                        target=_writer,
                        args=(api, name, conc.name, commits_each, journals, errors, retries, rounds),
                    )
                    for api, name in ((nessie, "nessie"), (lochkit, "lochkit"))
                ]
                for w in writers:
                    w.start()
                for w in writers:
                    w.join()
            log = list(lochkit.get_commits(conc))
        if errors:
            raise ScenarioFailed("writers failed: " + "; ".join(errors[:3]))
        for newer, older in itertools.pairwise(log):
            if newer.parent != older.hash:
                raise ScenarioFailed(f"the log is not one chain at {newer.hash.hex()}")
        chain = [(e.hash.hex(), t) for e in reversed(log) if (t := token_of(e.meta.message)) is not None]
        verdict = verify(read_ledgers(sorted(journals.glob("*.jsonl"))), {conc.name: chain})
        if not verdict.ok or verdict.acknowledged != 2 * commits_each:
            raise ScenarioFailed(
                f"{verdict.acknowledged} of {2 * commits_each} acknowledged; " + "; ".join(verdict.problems())
            )
        _check_clean(run.db)
        per_writer = {w: sum(1 for _, t in chain if t.startswith(w)) for w in ("nessie", "lochkit")}
        switches = sum(
            1 for (_, a), (_, b) in itertools.pairwise(chain) if a.split(":")[0] != b.split(":")[0]
        )
        return len(chain), (
            f"one chain of {len(chain)} commits (nessie {per_writer['nessie']}, lochkit "
            f"{per_writer['lochkit']}, {switches} changes of writer along it), every acknowledged "
            "commit exactly once; retried after a conflict: nessie "
            f"{retries.get('nessie', 0)}, lochkit {retries.get('lochkit', 0)}; compare-and-swap "
            f"races lochkit lost and retried inside its store: {retries.get('lochkit internal', 0)}"
        )

    return run.record(DIRECTIONS[3], body)


_RETRIES: Final = 50
#: How long a writer waits for the other at the start of a round (a Nessie commit over REST on a
#: busy two-core machine can take seconds).
_ROUND_TIMEOUT_S: Final = 120.0


def _writer(
    api: VersionStoreApi,
    name: str,
    branch_name: str,
    count: int,
    journals: Path,
    errors: list[str],
    retries: dict[str, int],
    rounds: threading.Barrier,
) -> None:
    """``count`` commits, each a new table, with the head read just before as expected hash;
    retried when the other writer moved the branch in between (counted in ``retries``). Each
    commit starts when the other writer's does (``rounds``)."""
    ref = branch(branch_name)
    ledger = CommitLedger(Journal(journals / f"{name}.jsonl"), name)
    try:
        for i in range(count):
            token = f"{name}:{i}"
            rounds.wait()
            ledger.intent(token, branch_name)
            started = time.monotonic_ns()
            for attempt in range(_RETRIES):
                try:
                    result = api.commit(
                        ref,
                        api.reference(ref).hash,
                        CommitMeta(message_for(token)),
                        [Put(key(f"db_{name}_{i}"), table(i))],
                    )
                    ledger.ack(token, result.hash.hex(), time.monotonic_ns() - started)
                    # Races lost inside the store and retried there (in-process only: a server's
                    # own retries are invisible over REST).
                    retries[f"{name} internal"] = retries.get(f"{name} internal", 0) + result.attempts - 1
                    break
                except (ReferenceConflictError, ReferenceRetryFailureError):
                    if attempt == _RETRIES - 1:
                        raise
                    retries[name] = retries.get(name, 0) + 1
    except Exception as e:  # reported by the scenario, with the writer's name
        rounds.abort()  # the other writer must not wait for this one
        errors.append(f"{name}: {type(e).__name__}: {e}")
    finally:
        ledger.journal.close()


def run_all(
    db_for: Callable[[str], SharedDatabase],
    classpath: Callable[[], str],
    directions: Sequence[str] = DIRECTIONS,
    nessie_first: Sequence[str] = ("nessie first",),
    concurrent_commits: int = CONCURRENT_COMMITS,
) -> list[Outcome]:
    """Every direction asked for, each on the database ``db_for(variant)`` gives: the two
    turn-taking directions share one per ``nessie_first`` variant (e.g. tables pre-created or
    not), the reverse order and the concurrent run get fresh ones."""
    outcomes: list[Outcome] = []
    if DIRECTIONS[0] in directions or DIRECTIONS[1] in directions:
        for variant in nessie_first:
            run = Run(db_for(variant), variant, classpath)
            nessie_to_lochkit(run)
            if DIRECTIONS[1] in directions:
                lochkit_to_nessie(run)
            outcomes += run.outcomes
    if DIRECTIONS[2] in directions:
        run = Run(db_for("lochkit first"), "lochkit first", classpath)
        if reverse_order(run).ok:
            nessie_to_lochkit(run)
            lochkit_to_nessie(run)
        outcomes += run.outcomes
    if DIRECTIONS[3] in directions:
        db = db_for("concurrent")
        if db.sequential:
            why = "one process at a time: Nessie and lochkit cannot open it together"
            outcomes.append(Outcome(db.backend, "concurrent", DIRECTIONS[3], NOT_APPLICABLE, 0, why))
        else:
            run = Run(db, "concurrent", classpath)
            concurrent(run, concurrent_commits)
            outcomes += run.outcomes
    return outcomes
