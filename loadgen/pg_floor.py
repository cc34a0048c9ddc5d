"""PostgreSQL's compare-and-swap through psycopg alone: a cross-check of the adapter's overhead.

The floor of :mod:`loadgen.db_floor` goes through lochkit's adapter (its connection pool, error
mapping, statement watchdog and row encoding). On PostgreSQL the same run also times the bare
statement on the same server: one ``UPDATE ... WHERE name = $1 AND pointer = $2`` on a single
autocommit connection with prepared statements, as the adapter's connections are set up. The
difference between the two is what the adapter adds to each compare-and-swap.

The row lives in a temporary table of that one connection: PostgreSQL drops it when the
connection closes, and no other session can see it, so nothing else in the database is read or
written.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final

from loadgen.db_floor import WARMUP_CALLS, FloorMeasurementError, OperationFigures, repeat

#: Backends whose server this cross-check can talk to (CockroachDB's temporary tables are an
#: experimental feature that is off by default).
BACKENDS: Final = frozenset({"postgres"})
NAME: Final = "cas_psycopg"
LABEL: Final = "compare-and-swap, psycopg alone"
TABLE: Final = "lochkit_floor_cas"


def measure_raw_cas(
    url: str,
    *,
    operations: int | None = None,
    seconds: float | None = None,
    warmup: int = WARMUP_CALLS,
) -> OperationFigures:
    """The bare compare-and-swap on the server at ``url`` (a lochkit PostgreSQL URL)."""
    import psycopg

    from backends.postgres.config import parse_settings

    settings = parse_settings("postgres", url)
    with psycopg.connect(settings.conninfo, autocommit=True, prepare_threshold=0) as conn:
        conn.execute(f"CREATE TEMPORARY TABLE {TABLE} (name text PRIMARY KEY, pointer bytea NOT NULL)")
        pointer = os.urandom(32)
        conn.execute(f"INSERT INTO {TABLE} VALUES ('floor', %b)", [pointer])
        update = f"UPDATE {TABLE} SET pointer = %b WHERE name = 'floor' AND pointer = %b"

        def prepare(_: int) -> Callable[[], object]:
            new = os.urandom(32)

            def call() -> None:
                nonlocal pointer
                if conn.execute(update, [new, pointer]).rowcount != 1:
                    raise FloorMeasurementError(
                        f"postgres at {settings.address}: the compare-and-swap of a row of this "
                        "connection's own temporary table did not apply"
                    )
                pointer = new

            return call

        return repeat(NAME, LABEL, prepare, operations=operations, seconds=seconds, warmup=warmup)
