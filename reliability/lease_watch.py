"""What a writer does with the ``coordinated`` policy's commit-target lease, journaled, so that a
supervisor can kill it while it holds the lease and prove afterwards that it did.

:class:`LeaseWatch` sits under the version store and decodes every lease row the writer reads or
swaps (:mod:`persist_spi.logic.commit_lease`); nothing in the policy knows it exists. It learns the
writer's ticket from the writer's own compare-and-swap that takes it, and journals:

- ``hold``: a row the writer read or wrote shows its ticket being served (it holds the lease). The
  writer then keeps the lease ``pause`` seconds before it commits, so that a kill at a random moment
  finds it holding the lease most of the time;
- ``releasing``: written *before* the compare-and-swap that serves the next ticket, so a writer killed
  with ``hold`` as its last record for a ticket had not started to give the lease up;
- ``skip``: the writer took over a ticket that stood still for the lease's expiry (written after the
  compare-and-swap landed): the proof that a dead holder's lease expired.

One watch serves one writer thread (its ticket is its own); a writer process of several threads
would hand tickets between them in the release's compare-and-swap, which a watch cannot follow.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from persist_spi.logic.commit_lease import LEASE_PREFIX, LeaseState
from persist_spi.persist import Persist
from persist_spi.references import Reference
from reliability.intercept import InterceptingPersist
from reliability.journal import Journal

T = TypeVar("T")


class LeaseWatch(InterceptingPersist):
    def __init__(
        self,
        delegate: Persist,
        journal: Journal,
        writer: str,
        *,
        pause: tuple[float, float] = (0.0, 0.0),
        rng: random.Random | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(delegate)
        self.journal = journal
        self.writer = writer
        self.pause = pause
        self._rng = rng or random.Random()
        self._sleep = sleep
        #: (lease name, ticket) this writer took last, and whether it was seen served.
        self.ticket: tuple[str, int] | None = None
        self._held = False

    def _write(self, event: str, lease: str, ticket: int) -> None:
        self.journal.write(
            {"e": event, "w": self.writer, "lease": lease, "ticket": ticket, "t": time.monotonic_ns()}
        )

    def intercept(self, method: str, args: tuple[Any, ...], call: Callable[[], T]) -> T:
        if method == "update_reference_pointer" and args[0].name.startswith(LEASE_PREFIX):
            return self._swap(args[0], args[1], call)
        result = call()
        if method == "fetch_references":
            for row in cast("list[Reference | None]", result):
                self._seen(row)
        return result

    def _swap(self, row: Reference, new_pointer: bytes, call: Callable[[], T]) -> T:
        old, new = LeaseState.decode(row.pointer), LeaseState.decode(new_pointer)
        mine = self.ticket is not None and self.ticket[0] == row.name and self._held
        releasing = mine and self.ticket is not None and old.serving == self.ticket[1] < new.serving
        if releasing and self.ticket is not None:
            self._write("releasing", row.name, self.ticket[1])
        result = call()  # raises when the swap lost: then nothing of it happened
        if releasing:
            self.ticket, self._held = None, False
        elif new.next_ticket == old.next_ticket + 1 and new.serving == old.serving:
            self.ticket, self._held = (row.name, old.next_ticket), False
        elif new.serving == old.serving + 1 and new.next_ticket == old.next_ticket:
            self._write("skip", row.name, old.serving)
        self._seen(cast(Reference, result))
        return result

    def _seen(self, row: Reference | None) -> None:
        if row is None or row.deleted or not row.name.startswith(LEASE_PREFIX) or self.ticket is None:
            return
        name, ticket = self.ticket
        if self._held or row.name != name or LeaseState.decode(row.pointer).serving != ticket:
            return
        self._held = True
        self._write("hold", name, ticket)
        low, high = self.pause
        if high > 0:
            self._sleep(self._rng.uniform(low, high))


@dataclass
class LeaseEvents:
    """Lease journals read back: who held which ticket, which were being given up, which expired."""

    releasing: set[tuple[str, int]] = field(default_factory=set)
    #: (lease, ticket) -> when a writer skipped it as stalled (monotonic ns).
    skipped: dict[tuple[str, int], int] = field(default_factory=dict)
    #: The ticket each writer journaled ``hold`` for last: what a kill of it interrupted.
    last_hold: dict[str, tuple[str, int]] = field(default_factory=dict)

    def merge(self, records: Iterable[Mapping[str, Any]]) -> None:
        for r in records:
            key = (str(r["lease"]), int(r["ticket"]))
            if r["e"] == "hold":
                self.last_hold[str(r["w"])] = key
            elif r["e"] == "releasing":
                self.releasing.add(key)
            elif r["e"] == "skip":
                self.skipped.setdefault(key, int(r["t"]))

    def holding(self, writer: str) -> tuple[str, int] | None:
        """The ticket ``writer`` holds by its journal (served, not being given up), or None."""
        key = self.last_hold.get(writer)
        return key if key is not None and key not in self.releasing else None
