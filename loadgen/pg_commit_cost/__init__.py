"""Where the time of a PostgreSQL commit goes: wall time, client CPU, server CPU and WAL, per operation.

``lochkit bench --backend postgres`` gives commits/s and, beside them, the database's floor (one
compare-and-swap and one put of one object, through the adapter). This command takes the same
operations apart, one at a time on one thread as the bench runs them, under four server
configurations, and prints one table per operation: a row per figure, a column per configuration.

    python -m loadgen.pg_commit_cost [--commits 2000] [--warmup 200] [--floor-ops 2000] [--repeats 3]
        [--configs bench,bench+sync,durable,durable-async] [--json FILE] [--markdown-out FILE]
    python -m loadgen.pg_commit_cost --report FILE.json [FILE.json ...] [--markdown-out FILE]

The operations: a version-store commit of 1 put and of 10 puts (updates of existing Iceberg tables,
through the object cache, as the bench's headline rows), and the floor's compare-and-swap of a
reference and put of one new object (the calls of ``loadgen/db_floor.py``). Per operation it
measures:

- wall time: the sum of the calls' own times, as the bench counts them (ops/s is 1 / its mean);
- client CPU: this process (every thread) and the calling thread; "wait" is wall minus client CPU,
  the time the client spent waiting for the server (or for a CPU: the runqueue rows say how much);
- server CPU: every process of the PostgreSQL server, from ``/proc/PID/stat`` (clock ticks) and
  ``/proc/PID/schedstat`` (exact nanoseconds), grouped by kind: the backend serving lochkit's
  connection, the WAL writer, the others (checkpointer, autovacuum workers that came and went...);
- WAL: bytes written (the LSN's advance), full-page images, and the WAL write() and fsync calls
  and their time (``pg_stat_wal`` with ``track_wal_io_timing``);
- statements run (``pg_stat_database``: the adapter runs in autocommit, so one per transaction) and
  the client's voluntary context switches (each wait for an answer is one).

Configurations (set with ``ALTER SYSTEM`` and a reload, on one server):

- ``bench``: fsync, full_page_writes and synchronous_commit off, the settings ``lochkit bench`` and
  the conformance suite run their local server with: a commit never waits for WAL;
- ``bench+sync``: the same with synchronous_commit on: a commit waits for its WAL to reach the OS
  (no fsync), as the reliability campaign's restartable server runs;
- ``durable``: PostgreSQL's defaults: a commit waits for the WAL fsync;
- ``durable-async``: ``durable`` with synchronous_commit off.

Every configuration is measured in turn, and the whole round is repeated ``--repeats`` times so
that configurations interleave in time; cells are medians, with min-max when the repeats differ.
The defaults take about 3 minutes on two cores, ``--repeats 1`` about one. Clock ticks are
coarse (10 ms on most kernels): the tick-based server rows need the default thousands of calls,
where the schedstat rows are exact at any length.

What it touches: a private PostgreSQL server it starts itself (lochkit's local-process
provisioner, in a work directory under ``$TMPDIR``), and in it a scratch repository of its own.
The server is stopped and its data directory deleted at the end, also after an error, Ctrl-C or
SIGTERM. It needs Linux (``/proc``) and PostgreSQL's server binaries (``lochkit servers install
postgres``, or ``LOCHKIT_POSTGRES_BINDIR``); it says so and starts nothing when either is missing.
"""

# The modules, one job each, in the order they build on one another:
#   options    the command's name, the configurations and operations, and what one run measures
#   errors     the two failures: a command line or machine it cannot run on, a server that misbehaves
#   proc       Linux's /proc: a process's CPU so far, and every process of one server
#   groups     which group (lochkit's backend, the WAL writer, ...) each server process is in
#   snapshots  the server's counters at one moment, and the CPU and WAL used between two
#   server     the private server: starting and stopping it, its settings, its snapshots
#   workload   the calls measured: commits through the version store, the floor's calls
#   sample     one cell's figures, from the client's cost and two snapshots
#   measure    timing the calls, and a whole run over every configuration and repeat
#   tables     the Markdown tables: a row per figure, a column per configuration
#   saved      the --json document, reading it back for --report, the published command line
#   checks     the refusals before anything starts
#   cli        the command line and main(); __main__ runs it
# This file imports none of them, so that importing one module loads only what it needs.
