"""CPU instructions per commit, counted by callgrind (valgrind), for embedded backends.

A timed figure moves with everything else the machine does; an instruction count does not, so this
is the figure to compare before and after a change to the commit path, on any machine. Each count
runs a child Python under ``valgrind --tool=callgrind``: it opens the backend, builds the
benchmark's branch of 100 tables (as ``lochkit bench`` does), makes warm-up commits, then the
measured ones, and exits. Two children that differ only in the number of measured commits are
subtracted, so start-up, imports and set-up cancel out:
instructions per commit = (I(2n) - I(n)) / n.

Only embedded backends are measured: callgrind counts the instructions of the process it runs,
and a database server's work happens in another process.
"""

from __future__ import annotations

import argparse
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
    per_commit: float


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
    short = _instructions(backend, puts, commits)
    long = _instructions(backend, puts, 2 * commits)
    result = InstructionCount(backend, puts, commits, (long - short) / commits)
    log(f"  {backend}, {puts}-put commits: {result.per_commit / 1e6:.2f} million instructions per commit")
    return result


def _instructions(backend: str, puts: int, commits: int) -> int:
    """The instructions a child making ``commits`` measured commits executes, start to exit."""
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


def markdown(counts: Sequence[InstructionCount]) -> str:
    lines = ["| backend | puts per commit | instructions per commit (millions) |", "|---|---|---|"]
    lines += [f"| {c.backend} | {c.puts} | {c.per_commit / 1e6:.2f} |" for c in counts]
    return "\n".join(lines) + "\n"


def _commit(backend: str, puts: int, commits: int) -> None:
    """The child: set-up, warm-up, then ``commits`` update commits through the object cache."""
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
        for n in range(WARMUP + commits):
            bench.store.commit(target, None, CommitMeta(f"commit {n}"), bench.operations(tables, n, puts))
    finally:
        adapter.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the child a counted run executes under callgrind")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--puts", type=int, required=True)
    parser.add_argument("--commits", type=int, required=True)
    args = parser.parse_args(argv)
    _commit(args.backend, args.puts, args.commits)


if __name__ == "__main__":
    main()
