"""Nessie's side of the asymmetric experiment: the same writers (one per number of puts, each
committing new tables to one branch as fast as it can) through Nessie's own version store, from
its published jars (the Java program of ``loadgen/nessie_bench``), on the same database as
lochkit's run. Nessie's writers are threads of one JVM with Nessie's default retry settings and
its object cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loadgen.nessie_jvm import NESSIE_BACKENDS, build, nessie_address, run_writers
from loadgen.targets.target import Target
from persist_spi.errors import InputError
from persist_spi.logic.ownership import new_scratch_id

#: JIT warm-up of Nessie's JVM before its writers are measured (lochkit's side needs none).
WARMUP_SECONDS = 5.0


class NessieSideUnavailable(InputError):
    """The target has no Nessie counterpart to run (a usage error)."""


def check_target(target_kind: str, backend: str | None) -> None:
    """Refuse, before anything runs, a target Nessie's jars cannot run on."""
    if target_kind != "lochkit":
        raise NessieSideUnavailable(
            "--compare-nessie runs Nessie's version store beside lochkit's in-process store: "
            "give --backend NAME (a Nessie server target is already Nessie)"
        )
    if backend not in NESSIE_BACKENDS:
        raise NessieSideUnavailable(
            f"--compare-nessie: Nessie publishes no storage module lochkit can run for {backend}; "
            f"use one of {', '.join(NESSIE_BACKENDS)}"
        )


def run_nessie_writers(
    target: Target, puts: tuple[int, ...], seconds: float, branch: str, scratch: Path
) -> list[dict[str, Any]]:
    """Nessie's per-writer rows (the fields of lochkit's rows) and an ``all`` row."""
    # target.url is for display (its password redacted); the connection carries the usable one.
    url = target.connection.url if target.connection is not None else target.url
    address = nessie_address(target.backend, url, scratch)
    result = run_writers(
        build(),
        address,
        branch=branch,
        puts=puts,
        seconds=seconds,
        warmup_seconds=WARMUP_SECONDS,
        repository=new_scratch_id("nessie-writers"),
    )
    writers: list[dict[str, Any]] = list(result["writers"])
    commits = sum(int(w["commits"]) for w in writers)
    total = {
        "writer": "all",
        "commits": commits,
        "commits_per_s": round(commits / seconds, 1),
        "timeouts": sum(int(w["timeouts"]) for w in writers),
        "attempts_max": max((int(w["attempts_max"]) for w in writers), default=0),
    }
    return [*writers, total]
