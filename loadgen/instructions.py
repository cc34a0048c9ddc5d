"""CPU instructions per commit, counted by callgrind (valgrind), for embedded backends.

A timed figure moves with everything else the machine does; an instruction count does not, so this
is the figure to compare before and after a change to the commit path, on any machine. Each count
runs a child Python under ``valgrind --tool=callgrind``: it opens the backend, builds the
benchmark's branch of 100 tables (as ``lochkit bench`` does), makes warm-up commits, then the
measured ones, and exits. Two children that differ only in the number of measured commits are
subtracted, so start-up, imports and set-up cancel out. What the child does per commit besides
committing (building the commit's operations and metadata, as the benchmark does) is counted the
same way in two more children that build them and do not commit, and taken off:
instructions per commit = ((I(2n) - I(n)) - (H(2n) - H(n))) / n.

Only embedded backends are measured: callgrind counts the instructions of the process it runs,
and a database server's work happens in another process.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from persist_spi.errors import InputError, LochkitError

#: Commits made before the measured ones: the object cache and the branch's memory are warm.
WARMUP: Final = 20
PUTS: Final = (1, 10)
#: The totals line callgrind writes at the end of its output file.
_TOTALS = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.MULTILINE)


class CallgrindMissing(InputError):
    """valgrind is not installed."""


class CountedRunFailed(LochkitError):
    """The child run under callgrind failed, or left no count."""


@dataclass(frozen=True)
class InstructionCount:
    backend: str
    puts: int
    commits: int
    #: The commit alone: what building its operations costs the child is taken off.
    per_commit: float
    #: What the child spends per commit building the operations and metadata it commits.
    harness_per_commit: float = 0.0


def embedded(name: str) -> bool:
    """Whether ``name`` runs inside lochkit's process (no server to start or reach)."""
    from persist_spi.registry import backend_factory
    from provisioning.registry import provisioners

    factory = backend_factory(name)
    return name not in provisioners() and factory.default_url is None


def valgrind() -> str:
    path = shutil.which("valgrind")
    if path is None:
        raise CallgrindMissing(
            "valgrind is not installed, and counting instructions needs its callgrind tool; install "
            "it (Debian: apt-get install valgrind) or leave out --instructions"
        )
    return path


def count(backend: str, puts: int, commits: int, *, log: Callable[[str], None] = print) -> InstructionCount:
    """Instructions per ``puts``-put update commit on ``backend``, from runs of ``commits`` and
    ``2 * commits`` measured commits."""
    if not embedded(backend):
        raise InputError(
            f"--instructions counts the instructions of lochkit's own process, and {backend} does "
            "its work in a server process; use an embedded backend (inmemory, rocksdb)"
        )
    with_commits = _instructions(backend, puts, 2 * commits) - _instructions(backend, puts, commits)
    harness = _instructions(backend, puts, 2 * commits, commit=False) - _instructions(
        backend, puts, commits, commit=False
    )
    result = InstructionCount(backend, puts, commits, (with_commits - harness) / commits, harness / commits)
    log(
        f"  {backend}, {puts}-put commits: {result.per_commit / 1e6:.2f} million instructions per commit "
        f"(building the operations: {result.harness_per_commit / 1e6:.2f} million more, taken off)"
    )
    return result


def _instructions(backend: str, puts: int, commits: int, *, commit: bool = True) -> int:
    """The instructions a child making ``commits`` measured commits executes, start to exit;
    with ``commit=False`` the child builds each commit's operations and metadata and commits none."""
    with tempfile.TemporaryDirectory(prefix="lochkit-callgrind-") as work:
        out = Path(work) / "callgrind.out"
        command = [
            valgrind(),
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            __name__,
            "--backend",
            backend,
            "--puts",
            str(puts),
            "--commits",
            str(commits),
            *([] if commit else ["--no-commit"]),
        ]
        # One hash seed for every child, so dictionaries and sets do the same work in each.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise CountedRunFailed(
                f"the run under callgrind exited with {done.returncode}; its last output:\n"
                f"{done.stderr[-2000:]}"
            )
        found = _TOTALS.search(out.read_bytes())
        if found is None:
            raise CountedRunFailed(f"callgrind wrote no instruction total into {out.name}")
        return int(found.group(1))


_HARNESS_COLUMN: Final = "building its operations, taken off (millions)"


def markdown(counts: Sequence[InstructionCount]) -> str:
    columns = ("backend", "puts per commit", "instructions per commit (millions)", _HARNESS_COLUMN)
    lines = ["| " + " | ".join(columns) + " |", "|---|---|---|---|"]
    lines += [
        f"| {c.backend} | {c.puts} | {c.per_commit / 1e6:.2f} | {c.harness_per_commit / 1e6:.2f} |"
        for c in counts
    ]
    return "\n".join(lines) + "\n"


def _commit(backend: str, puts: int, commits: int, commit: bool = True) -> None:
    """The child: set-up, warm-up, then ``commits`` update commits through the object cache (with
    ``commit=False``: their operations and metadata built, as many times, and nothing committed)."""
    from loadgen.commit_bench import Bench
    from persist_spi.registry import backend_factory
    from persist_spi.versionstore.meta import CommitMeta
    from persist_spi.versionstore.refs import branch

    adapter = backend_factory(backend).create(None)
    try:
        adapter.setup_schema()
        bench = Bench(adapter, "instructions")
        bench.initialize()
        tables = bench.fresh_branch("throughput", 100)
        target = branch(tables.name)
        for n in range(WARMUP):
            bench.store.commit(target, None, CommitMeta(f"commit {n}"), bench.operations(tables, n, puts))
        # As `lochkit bench` does before each scenario: what exists now (imported modules, the
        # set-up) leaves the collector's view, so a full pass over it, which one child may make
        # and the other not, does not land in one run's count.
        gc.collect()
        gc.freeze()
        for n in range(WARMUP, WARMUP + commits):
            meta, operations = CommitMeta(f"commit {n}"), bench.operations(tables, n, puts)
            if commit:
                bench.store.commit(target, None, meta, operations)
    finally:
        adapter.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the child a counted run executes under callgrind")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--puts", type=int, required=True)
    parser.add_argument("--commits", type=int, required=True)
    parser.add_argument("--no-commit", action="store_true", help="build the operations, commit nothing")
    args = parser.parse_args(argv)
    _commit(args.backend, args.puts, args.commits, commit=not args.no_commit)


if __name__ == "__main__":
    main()
