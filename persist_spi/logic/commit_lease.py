"""The commit-target lease: one commit at a time per branch across processes, kept in the database
through the Persist contract only.

Each branch gets an internal reference, ``int/commit-lease/<branch's full name>``, changed only by
compare-and-swap. Its pointer is not an object id but the lease's state, a ticket lock:

====== ======= ==========================================================================
bytes  field   meaning
====== ======= ==========================================================================
0-3    magic   ``lkl1`` (lochkit lease, layout 1); 20 bytes in all, so it can never be
               mistaken for a 32-byte object id and never points at a stored object
4-11   next    the next ticket to hand out (unsigned big-endian)
12-19  serving the ticket whose holder may commit now
====== ======= ==========================================================================

A writer takes a ticket (``next`` + 1 by compare-and-swap), waits until ``serving`` reaches it,
commits, and releases (``serving`` + 1). Writers are served in the order they took tickets, so
processes alternate on a contended branch. A waiter that sees ``serving`` stand still for
``commit-lease-millis`` on its own monotonic clock takes the lease over (``serving`` + 1): a crashed
holder blocks a branch for at most that long, and no two machines' clocks are compared.

The lease is never needed for correctness. The commit still moves the branch by compare-and-swap,
so a holder whose lease expired or was taken over mid-commit either lands (if it got there first) or
retries like any optimistic writer; a writer that gave up waiting commits without the lease. Losing
the lease costs throughput and fairness, never data.

Deleting a branch removes its lease (:func:`remove_free_lease`) only while it is free (``next`` =
``serving``: no ticket is held or waited for), by compare-and-swap on that very state, so no holder
or waiter of it exists to release into, or wait on, a lease that is gone; a writer that takes a
ticket afterwards starts a new lease at ticket 0, and a re-created branch of the same name gets it.
A lease in use when its branch is deleted stays (its holders and waiters finish against it, and a
re-created branch carries on with it). A removal marks the row deleted, then purges it; a reader
that finds a row marked deleted finishes the purge before it starts a new lease.
"""

from __future__ import annotations

import contextlib
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from persist_spi.errors import CorruptData, RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.ids import ObjId
from persist_spi.persist import Persist
from persist_spi.references import Reference

LEASE_PREFIX: Final = "int/commit-lease/"
MAGIC: Final = b"lkl1"
_LAYOUT: Final = struct.Struct(">4sQQ")
#: Longest pause between two looks at the lease while waiting.
MAX_POLL_SECONDS: Final = 0.005
MIN_POLL_SECONDS: Final = 0.0002


def lease_ref_name(branch_full_name: str) -> str:
    return LEASE_PREFIX + branch_full_name


@dataclass(frozen=True, slots=True)
class LeaseState:
    next_ticket: int
    serving: int

    def encode(self) -> ObjId:
        return ObjId(_LAYOUT.pack(MAGIC, self.next_ticket, self.serving))

    @classmethod
    def decode(cls, pointer: bytes) -> LeaseState:
        if len(pointer) != _LAYOUT.size or pointer[:4] != MAGIC:
            raise CorruptData(
                f"Reference pointer {pointer.hex()} is not a lochkit commit-target lease "
                f"(expected {_LAYOUT.size} bytes starting with {MAGIC!r})"
            )
        _, next_ticket, serving = _LAYOUT.unpack(pointer)
        return cls(next_ticket, serving)

    @property
    def waiting(self) -> int:
        return self.next_ticket - self.serving


FREE: Final = LeaseState(0, 0)


@dataclass(frozen=True, slots=True)
class LeaseHold:
    """A held lease: its reference name, the holder's ticket, and the row as last seen."""

    name: str
    ticket: int
    row: Reference


class CommitTargetLease:
    """Take, wait for, and release tickets of the commit-target lease of any branch."""

    def __init__(
        self,
        persist: Persist,
        lease_millis: int,
        *,
        now: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.persist = persist
        self.lease_seconds = lease_millis / 1000
        self._now = now
        self._sleep = sleep
        #: Seconds a holder keeps the lease, as measured here: paces the waiting.
        self.typical_hold = 0.001

    def take_ticket(self, branch_full_name: str) -> tuple[int, Reference]:
        """A ticket in the branch's queue, and the row as written."""
        name = lease_ref_name(branch_full_name)
        row = self._row(name)
        while True:
            state = LeaseState.decode(row.pointer)
            try:
                row = self.persist.update_reference_pointer(
                    row, LeaseState(state.next_ticket + 1, state.serving).encode()
                )
                return state.next_ticket, row
            except RefConditionFailed as e:
                row = e.reference if not e.reference.deleted else self._row(name)
            except RefNotFound:
                row = self._row(name)

    def wait(self, branch_full_name: str, ticket: int, row: Reference, deadline: float) -> LeaseHold | None:
        """Wait until ``ticket`` is served. None when it was skipped (taken over as stalled) or
        ``deadline`` (monotonic s) passed: the caller then commits without the lease."""
        name = lease_ref_name(branch_full_name)
        seen_serving = -1
        seen_at = self._now()
        while True:
            state = LeaseState.decode(row.pointer)
            if state.serving == ticket:
                return LeaseHold(name, ticket, row)
            if state.serving > ticket:
                return None
            now = self._now()
            if state.serving != seen_serving:
                seen_serving, seen_at = state.serving, now
            elif now - seen_at > self.lease_seconds:
                # The holder shows no progress: skip its ticket.
                try:
                    row = self.persist.update_reference_pointer(
                        row, LeaseState(state.next_ticket, state.serving + 1).encode()
                    )
                except RefConditionFailed as e:
                    row = e.reference
                continue
            if now >= deadline:
                return None
            ahead = ticket - state.serving
            self._sleep(min(max(ahead * self.typical_hold / 4, MIN_POLL_SECONDS), MAX_POLL_SECONDS))
            fresh = self.persist.fetch_reference_for_update(name)
            row = fresh if fresh is not None and not fresh.deleted else self._row(name)

    def acquire(self, branch_full_name: str, deadline: float) -> LeaseHold | None:
        ticket, row = self.take_ticket(branch_full_name)
        return self.wait(branch_full_name, ticket, row, deadline)

    def release(self, hold: LeaseHold, take_next: bool = False) -> tuple[int, Reference] | None:
        """Serve the next ticket. With ``take_next``, also take a ticket in the same
        compare-and-swap (for the next writer of this process) and return it with the row."""
        row = hold.row
        while True:
            state = LeaseState.decode(row.pointer)
            if state.serving != hold.ticket:  # taken over meanwhile: nothing of ours to release
                return self.take_ticket(hold.name[len(LEASE_PREFIX) :]) if take_next else None
            extra = 1 if take_next else 0
            try:
                row = self.persist.update_reference_pointer(
                    row, LeaseState(state.next_ticket + extra, state.serving + 1).encode()
                )
                return (state.next_ticket, row) if take_next else None
            except RefConditionFailed as e:
                if e.reference.deleted:  # not this hold's lease (never removed while held)
                    return self.take_ticket(hold.name[len(LEASE_PREFIX) :]) if take_next else None
                row = e.reference
            except RefNotFound:
                return self.take_ticket(hold.name[len(LEASE_PREFIX) :]) if take_next else None

    def note_hold(self, seconds: float) -> None:
        """Feed a measured hold time into the waiting pace (moving average)."""
        self.typical_hold += (seconds - self.typical_hold) / 8

    def state(self, branch_full_name: str) -> LeaseState | None:
        row = self.persist.fetch_reference_for_update(lease_ref_name(branch_full_name))
        return None if row is None else LeaseState.decode(row.pointer)

    def _row(self, name: str) -> Reference:
        """The lease's live row, a new free lease if there is none."""
        while True:
            row = self.persist.fetch_reference_for_update(name)
            if row is not None and not row.deleted:
                return row
            if row is not None:
                # A removal stopped (or is) between marking and purging: compare-and-swap cannot
                # move a row marked deleted, so finish it before starting a new lease.
                _purge(self.persist, row)
            try:
                return self.persist.add_reference(Reference(name, FREE.encode()))
            except RefAlreadyExists as e:
                if e.reference is not None and not e.reference.deleted:
                    return e.reference


def remove_free_lease(persist: Persist, branch_full_name: str) -> bool:
    """After the branch was deleted: remove its lease if it is free (see the module docstring).
    True if it is gone; False if there is none, it is in use, or it is not a lease state (left for
    ``lochkit check`` to report)."""
    row = persist.fetch_reference_for_update(lease_ref_name(branch_full_name))
    if row is None:
        return False
    if not row.deleted:
        try:
            state = LeaseState.decode(row.pointer)
        except ValueError:
            return False
        if state.waiting != 0:
            return False
        try:
            row = persist.mark_reference_as_deleted(row)
        except (RefConditionFailed, RefNotFound):  # a writer took a ticket meanwhile, or it is gone
            return False
    _purge(persist, row)
    return True


def _purge(persist: Persist, marked: Reference) -> None:
    # Another reader may have finished the same removal (and a new lease may have started since).
    with contextlib.suppress(RefConditionFailed, RefNotFound):
        persist.purge_reference(marked)
