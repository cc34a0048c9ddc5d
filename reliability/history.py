"""Recording every read and compare-and-swap of chosen references, for the linearizability check.

A compare-and-swap is recorded when it is called (so a process killed during it leaves an
operation whose outcome is unknown) and again when it returns; a read only when it returns (an
unanswered read constrains nothing). Times come from ``time.monotonic_ns``, one clock for every
process on the machine.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from persist_spi.errors import RefConditionFailed, RefNotFound
from persist_spi.persist import Persist
from persist_spi.references import Reference
from reliability.intercept import InterceptingPersist
from reliability.journal import Journal, read_journal
from reliability.linearizability import Kind, Op

T = TypeVar("T")


class RecordingPersist(InterceptingPersist):
    def __init__(self, delegate: Persist, journal: Journal, process: str, watched: Iterable[str]) -> None:
        super().__init__(delegate)
        self.journal = journal
        self.process = process
        self.watched = frozenset(watched)
        self._ids = itertools.count()

    def intercept(self, method: str, args: tuple[Any, ...], call: Callable[[], T]) -> T:
        if method == "fetch_references":
            return self._read(args[0], call)
        if method == "update_reference_pointer" and args[0].name in self.watched:
            return self._swap(args[0], args[1], call, lambda _: True)
        if method == "store_objs_and_update_reference" and args[1].name in self.watched:
            # Its swap is attempted only onto a commit it wrote; moved=None means none was made.
            return self._swap(args[1], args[2], call, lambda stored: stored.moved is not None)
        return call()

    def _read(self, names: Any, call: Callable[[], T]) -> T:
        invoked = time.monotonic_ns()
        rows: Any = call()
        completed = time.monotonic_ns()
        for name, row in zip(names, rows, strict=True):
            if name in self.watched:
                value = None if row is None or row.deleted else str(row.pointer)
                self.journal.write(
                    {"p": self.process, "k": "r", "r": name, "i": invoked, "c": completed, "v": value}
                )
        result: T = rows
        return result

    def _swap(
        self, ref: Reference, new_pointer: Any, call: Callable[[], T], applied: Callable[[Any], bool]
    ) -> T:
        op_id = f"{self.process}/{os.getpid()}/{next(self._ids)}"
        base = {"p": self.process, "r": ref.name, "id": op_id}
        self.journal.write(
            {**base, "k": "ci", "i": time.monotonic_ns(), "e": str(ref.pointer), "v": str(new_pointer)}
        )
        outcome: bool | None = None
        try:
            result = call()
            outcome = applied(result)
            return result
        except (RefConditionFailed, RefNotFound):
            outcome = False
            raise
        finally:
            self.journal.write({**base, "k": "cc", "c": time.monotonic_ns(), "ok": outcome})


def load_history(paths: Iterable[Path], reference: str) -> list[Op]:
    """The operations on ``reference`` recorded in ``paths``; a swap without its answer (or with
    an error other than a refusal) has an unknown outcome."""
    ops: list[Op] = []
    calls: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, Any]] = {}
    for path in paths:
        for record in read_journal(path):
            if record["r"] != reference:
                continue
            kind = record["k"]
            if kind == "r":
                ops.append(Op(record["p"], Kind.READ, record["i"], record["c"], record["v"]))
            elif kind == "ci":
                calls[record["id"]] = record
            else:
                answers[record["id"]] = record
    for op_id, call in calls.items():
        answer = answers.get(op_id)
        ok = None if answer is None else answer["ok"]
        complete = None if answer is None or ok is None else answer["c"]
        ops.append(Op(call["p"], Kind.CAS, call["i"], complete, call["v"], call["e"], ok))
    return ops
