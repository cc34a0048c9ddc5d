"""``python -m loadgen.pg_commit_cost`` against a real PostgreSQL server: one short run of one
configuration measures every operation, one statement each, and leaves no server and no data
behind. Speed is printed by the command, never judged here."""

from __future__ import annotations

import pytest

from loadgen.pg_commit_cost.groups import BACKEND
from loadgen.pg_commit_cost.measure import run
from loadgen.pg_commit_cost.options import COMMON_SETTINGS, CONFIGS, OPERATIONS, Options
from loadgen.pg_commit_cost.proc import PROC, read_proc
from provisioning.servers.postgres import PROVISIONER
from tests.servers.started import soon

#: The server may run a transaction of its own in lochkit's database now and then (autovacuum);
#: with 30 calls that adds 0.03 per call, where one more statement per call would add 1.0.
STATEMENT_TOLERANCE = 0.2


def test_a_short_run_measures_every_operation_and_leaves_no_server_behind() -> None:
    PROVISIONER.install("postgres")  # as for the other PostgreSQL tests here (apt-get, as root)
    lines: list[str] = []
    result = run(Options(commits=30, floor_ops=30, warmup=5, repeats=1, configs=("bench",)), log=lines.append)

    assert [s.operation for s in result.samples] == list(OPERATIONS)
    for sample in result.samples:
        assert (sample.config, sample.ops) == ("bench", 30)
        assert sample.settings == {**CONFIGS["bench"], **COMMON_SETTINGS}
        assert sample.wall_s > 0, sample
        assert sample.client_cpu_s > 0, sample
        assert sample.client_thread_cpu_s > 0, sample
        assert sample.server_figure(BACKEND, "run_s") > 0, sample
        assert sample.wal_bytes > 0, sample
        assert sample.wal["syncs"] == 0, "fsync is off in the bench configuration"
        assert sample.statements / sample.ops == pytest.approx(1, abs=STATEMENT_TOLERANCE), sample
    assert lines[0].startswith("server: PostgreSQL ")
    assert len(lines) == 1 + len(OPERATIONS)

    # The server is stopped (the postmaster and every child of it) and its data directory deleted.
    def server_gone() -> bool:
        running = (read_proc(entry) for entry in PROC.iterdir() if entry.name.isdigit())
        return not any(read[0] == result.postmaster for read in running if read is not None)

    assert soon(lambda: read_proc(PROC / str(result.postmaster)) is None and server_gone(), 10)
    assert not result.data_directory.exists()
