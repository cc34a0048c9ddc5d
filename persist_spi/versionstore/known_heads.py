"""The branch rows this process last read or moved, so that a commit's first attempt can build on
the branch as this process left it instead of reading it again.

Skipping that read is safe because the compare-and-swap that ends every attempt checks the whole
row: an attempt built on a row that is no longer current loses its compare-and-swap and changes
nothing. It is worth it when one process is the only writer of a branch (the common case): a
commit then costs one round trip less (two instead of three on PostgreSQL with the object cache).
When other writers move the branch, a remembered row is stale; after a race is lost on a branch,
its rows are not used for :data:`QUIET_AFTER_LOST_RACE_NANOS`, so contended branches go back to
reading their row on every attempt, as Nessie does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from persist_spi.references import Reference
from persist_spi.versionstore.policies.base import PerPersist

#: How long after a lost race on a branch its remembered row is not used. Long enough to cover
#: many attempts of a writer that races another process, short enough that a branch whose other
#: writer went away soon commits with one round trip less again.
QUIET_AFTER_LOST_RACE_NANOS: Final = 1_000_000_000
#: Rows kept per Persist; beyond, the longest unused goes (a load that creates many branches must
#: not grow the memory without end; a forgotten branch only costs its next commit one read).
MAX_REMEMBERED_BRANCHES: Final = 10_000


class KnownHeads:
    """Branch rows by full name, as this process last saw them in the database; thread-safe."""

    def __init__(
        self, now_nanos: Callable[[], int] = time.monotonic_ns, capacity: int = MAX_REMEMBERED_BRANCHES
    ) -> None:
        self._now_nanos = now_nanos
        self._capacity = capacity
        self._rows: dict[str, Reference] = {}
        self._quiet_until: dict[str, int] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> Reference | None:
        """The row to build a first attempt on, or None: unknown, or a race was lost lately."""
        with self._lock:
            row = self._rows.get(name)
            if row is None:
                return None
            until = self._quiet_until.get(name)
            if until is not None:
                if self._now_nanos() < until:
                    return None
                del self._quiet_until[name]
            return row

    def remember(self, row: Reference) -> None:
        """``row`` was just read from, or written to, the database."""
        if row.deleted:
            self.forget(row.name)
            return
        with self._lock:
            rows = self._rows
            rows.pop(row.name, None)  # re-inserted last: the dict's order is the order of use
            rows[row.name] = row
            if len(rows) > self._capacity:
                del rows[next(iter(rows))]
            quiet = self._quiet_until
            if len(quiet) > self._capacity:
                now = self._now_nanos()
                for name in [n for n, until in quiet.items() if until <= now]:
                    del quiet[name]

    def lost_race(self, name: str) -> None:
        """A compare-and-swap on ``name`` found another row: someone else writes this branch."""
        with self._lock:
            self._rows.pop(name, None)
            self._quiet_until[name] = self._now_nanos() + QUIET_AFTER_LOST_RACE_NANOS

    def forget(self, name: str) -> None:
        """The branch was changed or removed by a path that does not report its new row."""
        with self._lock:
            self._rows.pop(name, None)


#: One memory per Persist: every version store over the same Persist shares what it saw.
known_heads_of: Final[PerPersist[KnownHeads]] = PerPersist(lambda _: KnownHeads())
