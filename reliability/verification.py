"""After a campaign run: the branches against the writers' journals, the repository checker, the
compare-and-swap histories, and any error that escaped a writer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from persist_spi.check.consistency import RepositoryChecker
from persist_spi.check.findings import CheckReport, ExitCode, Severity
from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.persist import Persist
from persist_spi.versionstore.refs import branch
from reliability.history import load_history
from reliability.ledger import LedgerVerdict, read_ledgers, token_of, verify
from reliability.linearizability import Verdict, check_register


def branch_chains(persist: Persist, branches: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """branch -> [(commit id, token)], oldest first, for commits that carry a token."""
    logic = CommitLogic(persist)
    chains: dict[str, list[tuple[str, str]]] = {}
    for name in branches:
        ref = persist.fetch_reference(branch(name).full_name)
        chain: list[tuple[str, str]] = []
        if ref is not None and ref.pointer != EMPTY_OBJ_ID:
            for commit in logic.commit_log(ref.pointer):
                token = token_of(commit.message)
                if token is not None:
                    chain.append((str(commit.id), token))
        chains[name] = chain[::-1]
    return chains


@dataclass
class RunVerdict:
    ledger: LedgerVerdict
    check: CheckReport
    linearizability: dict[str, Verdict] = field(default_factory=dict)
    bugs: list[str] = field(default_factory=list)
    #: Commits walked on the campaign's branches.
    commits_checked: int = 0

    def problems(self) -> list[str]:
        out = list(self.ledger.problems())
        if self.check.exit_code is not ExitCode.CONSISTENT:
            errors = [f"{f.check}: {f.message}" for f in self.check.findings if f.severity is Severity.ERROR]
            half = self.check.count(Severity.HALF_DONE)
            out.append(f"check: {self.check.exit_code.name} ({'; '.join(errors[:3]) or f'{half} half-done'})")
        for name, verdict in self.linearizability.items():
            if not verdict.linearizable:
                out.append(f"{name}: compare-and-swap history not linearizable: {verdict.explanation}")
        out += [f"escaped error: {b.splitlines()[0]} ..." for b in self.bugs]
        return out


def bugs_in(run_dir: Path) -> list[str]:
    return [p.read_text() for p in sorted(run_dir.glob("bugs-*.txt"))]


def verify_run(
    persist: Persist,
    run_dir: Path,
    branches: Sequence[str],
    *,
    backend: str,
    address: str,
    initial_heads: dict[str, str] | None = None,
) -> RunVerdict:
    """Checks a finished run. With ``initial_heads`` the recorded histories are checked as
    linearizable registers, one per branch, starting from those heads."""
    tokens = read_ledgers(sorted(run_dir.glob("ledger-*.jsonl")))
    chains = branch_chains(persist, branches)
    report = RepositoryChecker(persist, backend=backend, address=address, repair=True).run()
    verdict = RunVerdict(verify(tokens, chains), report, bugs=bugs_in(run_dir))
    verdict.commits_checked = sum(len(c) for c in chains.values())
    if initial_heads is not None:
        histories = sorted(run_dir.glob("history-*.jsonl"))
        for name in branches:
            ops = load_history(histories, branch(name).full_name)
            verdict.linearizability[name] = check_register(ops, initial_heads[name])
    return verdict
