"""Is a history of reads and compare-and-swaps on one register linearizable?

A reference row is a register changed only by compare-and-swap. Given what every client saw (when
it asked, when it got its answer, and the answer), the history is linearizable if each operation
can be placed at one instant between its call and its answer so that the register, taken in that
order, answers exactly as the clients were answered. This is Wing and Gong's search with Lowe's
memoisation (the approach of Knossos and Porcupine): repeatedly take as "next" one of the
operations that no other pending operation finished before, apply it to the model, and backtrack
when the model disagrees; a set of visited configurations keeps the search from repeating itself.

Operations whose outcome is unknown (the client died, or the database did not say) never finish:
they may take effect at any instant after their call, or never. They are kept apart from the
others so they do not hold back the search.

Configurations are ``(p, S, value, U)``: every operation before index ``p`` is placed, ``S`` are
the placed ones after ``p``, ``U`` the unknown-outcome operations placed. With bounded concurrency
``S`` stays small, so a configuration costs little to hash however long the history.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


class Kind(enum.Enum):
    READ = "read"
    CAS = "cas"


@dataclass(frozen=True)
class Op:
    """One operation as a client saw it. Times are nanoseconds of one clock shared by every client
    (``time.monotonic_ns`` is system-wide on Linux, so processes on one machine can share it)."""

    process: str
    kind: Kind
    invoke_ns: int
    #: None when the outcome is unknown (the client died or was told "maybe").
    complete_ns: int | None
    #: The value read, or the value a compare-and-swap writes.
    value: str | None
    #: What a compare-and-swap expected; unused for reads.
    expected: str | None = None
    #: For a compare-and-swap: True applied, False refused, None unknown.
    ok: bool | None = None

    @property
    def unknown(self) -> bool:
        return self.complete_ns is None or (self.kind is Kind.CAS and self.ok is None)

    def describe(self) -> str:
        if self.kind is Kind.READ:
            what = f"read -> {_short(self.value)}"
        else:
            outcome = {True: "ok", False: "refused", None: "unknown"}[self.ok]
            what = f"cas {_short(self.expected)} -> {_short(self.value)} ({outcome})"
        end = "?" if self.complete_ns is None else str(self.complete_ns)
        return f"{self.process}: {what} [{self.invoke_ns}, {end}]"


def _short(value: str | None) -> str:
    return "none" if value is None else value[:12]


@dataclass
class Verdict:
    linearizable: bool
    operations: int
    unknown_outcomes: int
    configurations: int
    #: When not linearizable: the operations around the point the search could not pass.
    explanation: str = ""
    stuck_at: list[str] = field(default_factory=list)


def check_register(ops: Iterable[Op], initial: str | None, *, max_configurations: int = 5_000_000) -> Verdict:
    """Decide whether ``ops`` on a register that starts at ``initial`` are linearizable.

    Reads whose outcome is unknown constrain nothing and are dropped. Raises ``RuntimeError`` when
    the search visits more than ``max_configurations`` (a history too ambiguous to decide cheaply).
    """
    known: list[Op] = []
    optional: list[Op] = []
    for op in ops:
        if op.unknown:
            if op.kind is Kind.CAS:
                optional.append(op)
            continue
        known.append(op)
    known.sort(key=lambda o: (o.invoke_ns, o.complete_ns or 0))
    optional.sort(key=lambda o: o.invoke_ns)
    search = _Search(known, optional, max_configurations)
    ok = search.run(initial)
    verdict = Verdict(ok, len(known) + len(optional), len(optional), len(search.visited))
    if not ok:
        verdict.stuck_at, verdict.explanation = search.explain()
    return verdict


_Config = tuple[int, frozenset[int], str | None, frozenset[int]]


class _Search:
    def __init__(self, known: Sequence[Op], optional: Sequence[Op], max_configurations: int) -> None:
        self.known = known
        self.optional = optional
        self.max_configurations = max_configurations
        self.visited: set[_Config] = set()
        self.furthest: _Config | None = None

    def run(self, initial: str | None) -> bool:
        start: _Config = (0, frozenset(), initial, frozenset())
        stack: list[tuple[_Config, list[_Config]]] = [(start, self._successors(start))]
        self.visited.add(start)
        self._note(start)
        while stack:
            config, successors = stack[-1]
            if config[0] == len(self.known):
                return True  # every completed operation is placed; unknown ones may never happen
            if not successors:
                stack.pop()
                continue
            nxt = successors.pop()
            if nxt in self.visited:
                continue
            self.visited.add(nxt)
            if len(self.visited) > self.max_configurations:
                raise RuntimeError(
                    f"the linearizability search visited {self.max_configurations:,} configurations "
                    "without deciding; the history is too ambiguous to check this way"
                )
            self._note(nxt)
            stack.append((nxt, self._successors(nxt)))
        return False

    def _note(self, config: _Config) -> None:
        if self.furthest is None or config[0] > self.furthest[0]:
            self.furthest = config

    def _candidates(self, p: int, placed: frozenset[int]) -> tuple[list[int], float]:
        """Unplaced known operations that may go next, and the earliest completion among the
        unplaced ones (nothing invoked after it may go next)."""
        chosen: list[int] = []
        earliest = math.inf
        for j in range(p, len(self.known)):
            if j in placed:
                continue
            op = self.known[j]
            if op.invoke_ns > earliest:
                break  # sorted by invocation: no later operation can go next either
            chosen.append(j)
            assert op.complete_ns is not None
            earliest = min(earliest, op.complete_ns)
        return chosen, earliest

    def _successors(self, config: _Config) -> list[_Config]:
        """Successor configurations, the most promising last (the stack pops from the end)."""
        p, placed, value, used = config
        chosen, earliest = self._candidates(p, placed)
        out: list[_Config] = []
        for k, op in enumerate(self.optional):
            if op.invoke_ns > earliest:
                break
            if k not in used and op.expected == value:
                out.append((p, placed, op.value, used | {k}))
        # Earliest-finishing operations are tried first: they are the most constrained.
        for j in sorted(chosen, key=lambda i: self.known[i].complete_ns or 0, reverse=True):
            after = _apply(self.known[j], value)
            if isinstance(after, _Refused):
                continue
            now_placed = placed | {j}
            q = p
            while q in now_placed:
                now_placed = now_placed - {q}
                q += 1
            out.append((q, frozenset(now_placed), after, used))
        return out

    def explain(self) -> tuple[list[str], str]:
        assert self.furthest is not None
        p, placed, value, _ = self.furthest
        chosen, _ = self._candidates(p, placed)
        around = [self.known[j].describe() for j in chosen]
        text = (
            f"no order of the {len(self.known)} completed operations explains the answers: every "
            f"operation before #{p} could be placed, then with the register at {_short(value)} none of "
            f"the operations that could come next agrees with it: {'; '.join(around)}"
        )
        return around, text


class _Refused:
    pass


_REFUSED = _Refused()


def _apply(op: Op, value: str | None) -> str | _Refused | None:
    """The register after ``op`` if ``op`` can happen when it holds ``value``."""
    if op.kind is Kind.READ:
        return value if op.value == value else _REFUSED
    if op.ok:
        return op.value if op.expected == value else _REFUSED
    return value if op.expected != value else _REFUSED  # a refused compare-and-swap
