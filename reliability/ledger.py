"""What writers were told, and whether their branches agree: no lost, duplicated or reordered commit.

Every commit a campaign writer makes carries a token (``writer:sequence``) in its message. The writer
notes, in its own journal, when it asks for a commit (``intent``) and what it was told: committed
(``ack``, with the commit id), refused for good (``fail``), or "maybe" (``unknown``: a connection
broke, a server went away). After a "maybe", or after being restarted, it reads the branch and
notes whether the commit landed (``resolved``) before retrying.

Afterwards the branches are walked and every token counted:

- an acknowledged token is on its branch exactly once, as the commit the writer was told;
- a token refused without any "maybe" before is absent;
- any other token (killed or unresolved writers, "maybe"s) is there at most once;
- every token on a branch was asked for by someone;
- a writer's commits on one branch appear in the order it made them, and a commit acknowledged
  before another was asked for comes before it (real-time order).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliability.journal import Journal, read_journal

MESSAGE_PREFIX = "torture "


def message_for(token: str) -> str:
    return MESSAGE_PREFIX + token


def token_of(message: str) -> str | None:
    return message[len(MESSAGE_PREFIX) :] if message.startswith(MESSAGE_PREFIX) else None


class CommitLedger:
    """A writer's side: one journal line per event."""

    def __init__(self, journal: Journal, writer: str) -> None:
        self.journal = journal
        self.writer = writer

    def _write(self, event: str, token: str, **fields: Any) -> None:
        self.journal.write({"e": event, "w": self.writer, "tok": token, "t": time.monotonic_ns(), **fields})

    def intent(self, token: str, branch: str) -> None:
        self._write("intent", token, b=branch)

    def ack(self, token: str, commit: str, duration_ns: int) -> None:
        self._write("ack", token, commit=commit, dur=duration_ns)

    def fail(self, token: str, error: str, duration_ns: int) -> None:
        self._write("fail", token, err=error, dur=duration_ns)

    def unknown(self, token: str, error: str, duration_ns: int) -> None:
        self._write("unknown", token, err=error, dur=duration_ns)

    def resolved(self, token: str, landed: bool) -> None:
        self._write("resolved", token, landed=landed)


@dataclass
class TokenState:
    token: str
    writer: str
    branch: str
    sequence: int
    first_intent_ns: int
    outcome: str = "in-flight"  # acked, failed, unknown, in-flight
    acked_commit: str | None = None
    acked_ns: int | None = None
    ambiguous: bool = False


def replay(records: Iterable[Mapping[str, Any]]) -> dict[str, TokenState]:
    """Every token's final state, from the journal records of all writers."""
    tokens: dict[str, TokenState] = {}
    for r in records:
        token = r["tok"]
        state = tokens.get(token)
        if r["e"] == "intent":
            if state is None:
                sequence = int(token.rsplit(":", 1)[1])
                tokens[token] = TokenState(token, r["w"], r["b"], sequence, r["t"])
            else:  # a retry after a "maybe" or a restart
                state.outcome = "in-flight"
                state.ambiguous = True
            continue
        if state is None:
            raise ValueError(f"journal record {dict(r)} has no intent before it")
        event = r["e"]
        if event == "ack" or (event == "resolved" and r["landed"]):
            state.outcome = "acked"
            state.acked_commit = r.get("commit")
            state.acked_ns = r["t"]
            state.ambiguous = state.ambiguous or event == "resolved"
        elif event == "fail":
            state.outcome = "failed"
        elif event == "unknown":
            state.outcome = "unknown"
            state.ambiguous = True
        elif event == "resolved":
            state.ambiguous = True
    return tokens


@dataclass
class LedgerVerdict:
    tokens: int = 0
    acknowledged: int = 0
    landed: int = 0
    ambiguous: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    failed_but_landed: list[str] = field(default_factory=list)
    phantom: list[str] = field(default_factory=list)
    wrong_commit: list[str] = field(default_factory=list)
    reordered: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems()

    def problems(self) -> list[str]:
        out = []
        for name in ("lost", "duplicated", "failed_but_landed", "phantom", "wrong_commit", "reordered"):
            items: list[str] = getattr(self, name)
            if items:
                shown = ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")
                out.append(f"{len(items)} {name.replace('_', ' ')}: {shown}")
        return out


def verify(
    tokens: Mapping[str, TokenState], chains: Mapping[str, Sequence[tuple[str, str]]]
) -> LedgerVerdict:
    """``chains``: branch -> [(commit id, token)] oldest first (commits without a token left out)."""
    verdict = LedgerVerdict(tokens=len(tokens))
    positions: dict[str, list[tuple[int, str]]] = {}
    for branch, chain in chains.items():
        for position, (commit, token) in enumerate(chain):
            positions.setdefault(token, []).append((position, commit))
            state = tokens.get(token)
            if state is None or state.branch != branch:
                verdict.phantom.append(f"{token} on {branch}")
    for token, state in tokens.items():
        found = positions.get(token, [])
        verdict.landed += bool(found)
        verdict.ambiguous += state.ambiguous
        if len(found) > 1:
            verdict.duplicated.append(f"{token} ({len(found)} times)")
        if state.outcome == "acked":
            verdict.acknowledged += 1
            if not found:
                verdict.lost.append(token)
            elif state.acked_commit is not None and all(c != state.acked_commit for _, c in found):
                verdict.wrong_commit.append(f"{token} (told {state.acked_commit[:12]})")
        elif state.outcome == "failed" and not state.ambiguous and found:
            verdict.failed_but_landed.append(token)
    _check_order(tokens, chains, verdict)
    return verdict


def _check_order(
    tokens: Mapping[str, TokenState], chains: Mapping[str, Sequence[tuple[str, str]]], verdict: LedgerVerdict
) -> None:
    for branch, chain in chains.items():
        last_sequence: dict[str, int] = {}
        for _, token in chain:
            state = tokens.get(token)
            if state is None:
                continue
            if state.sequence <= last_sequence.get(state.writer, -1):
                verdict.reordered.append(f"{token} after a later commit of {state.writer} on {branch}")
            last_sequence[state.writer] = max(state.sequence, last_sequence.get(state.writer, -1))
        # Newest first: the earliest acknowledgement among the commits after this one must not
        # precede this commit's first request.
        earliest_ack_after = None
        for _, token in reversed(chain):
            state = tokens.get(token)
            if state is None:
                continue
            if earliest_ack_after is not None and earliest_ack_after < state.first_intent_ns:
                verdict.reordered.append(
                    f"{token} placed after a commit acknowledged before it was requested"
                )
            if state.outcome == "acked" and state.acked_ns is not None:
                earliest_ack_after = (
                    state.acked_ns if earliest_ack_after is None else min(earliest_ack_after, state.acked_ns)
                )


def read_ledgers(paths: Iterable[Path]) -> dict[str, TokenState]:
    records: list[dict[str, Any]] = []
    for path in paths:
        records.extend(read_journal(path))
    records.sort(key=lambda r: r["t"])
    return replay(records)
