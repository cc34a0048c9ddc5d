"""The calls measured: version-store commits as the bench makes them, and the floor's calls."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from loadgen.pg_commit_cost.options import COMMIT_PUTS

if TYPE_CHECKING:
    from loadgen.commit_bench import Bench

#: A backend reports its statistics (pg_stat_wal, pg_stat_database) when it goes idle, at most once
#: a second: wait this long, then make it run one statement, before reading them.
STATS_INTERVAL_S: Final = 1.1


class Workload:
    """The bench's repository on the adapter (object cache on, as the bench's headline rows) and the
    floor's scratch repository; :meth:`prepare` returns one ready-to-run call, so that building its
    arguments stays out of the measured time."""

    def __init__(self, url: str) -> None:
        from loadgen.commit_bench import Bench
        from loadgen.db_floor import FloorCalls
        from persist_spi.logic.ownership import new_scratch_id
        from persist_spi.registry import backend_factory

        self.adapter = backend_factory("postgres").create(url)
        try:
            self.adapter.setup_schema()
            self.repository = new_scratch_id("pg-commit-cost")
            self.bench: Bench = Bench(self.adapter, self.repository)
            self.bench.initialize()
            self.tables = self.bench.fresh_branch("throughput", 100)
            # The floor's own calls, so that these rows are the ones the bench's floor writes.
            self._floor = FloorCalls(self.adapter, new_scratch_id("pg-commit-cost-floor"), None, None, 0)
            self._cas = self._floor.cas_calls()
        except BaseException:
            self.adapter.close()
            raise
        self._n = 0  # every call writes new values

    def prepare(self, operation: str) -> Callable[[], object]:
        from persist_spi.versionstore.meta import CommitMeta
        from persist_spi.versionstore.refs import branch

        self._n += 1
        n = self._n
        if operation in COMMIT_PUTS:
            ops = self.bench.operations(self.tables, n, COMMIT_PUTS[operation])
            target, meta = branch(self.tables.name), CommitMeta(f"pg-commit-cost #{n}")
            return lambda: self.bench.store.commit(target, None, meta, ops)
        if operation == "floor cas":
            return self._cas(n)
        if operation == "floor put":
            return self._floor.put_call(n)
        raise ValueError(f"unknown operation {operation!r}")

    def flush_stats(self) -> None:
        """Let the adapter's backend report its pending statistics: a read, after the interval."""
        time.sleep(STATS_INTERVAL_S)
        self.adapter.fetch_refs(self.repository, ["refs/heads/main"])

    def close(self) -> None:
        # The scratch repositories are not erased: the whole server and its data go next.
        self.adapter.close()
