"""lochkit beside Nessie's own implementation, in one run: ``lochkit bench --compare-nessie``.

For each backend, the same workload goes through Nessie's ``VersionStoreImpl`` (its published
storage jars, in a JVM that stays up, see :mod:`loadgen.nessie_jvm`) and through lochkit's
version store: a branch with a namespace and 100 Iceberg tables, commits updating 1 or 10 of
them round robin, no expected hash, as fast as one writer can. Both sides use the same database
server (their own tables or repository), with and without their object cache.

First each side warms up (Nessie's JIT needs it: 20 s by default), then rounds
alternate: each round measures every scenario on both sides for the same number of seconds, the
side that goes first swapping every round. The table holds the median commits/s of the rounds.
Before the rounds, the database's own floor (:mod:`loadgen.db_floor`) is measured through
lochkit's adapter, and a second table gives each side's commits/s as a
share of its compare-and-swaps/s.
Wall-clock figures on a shared machine move between runs; the ratio, taken from rounds that ran
side by side, moves much less.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from loadgen import pg_floor
from loadgen.commit_bench import Bench, Tables, floor_table, new_repository_id
from loadgen.db_floor import Floor, measure_floor, share
from loadgen.nessie_jvm import NOT_PUBLISHED, NessieServe, NessieSideError, nessie_address
from persist_spi.adapter import BackendAdapter
from persist_spi.logic.ownership import new_scratch_id

#: Puts per commit of the compared scenarios.
SCENARIOS: Final = (1, 10)
#: Tables on the compared branch (as ``lochkit bench``'s throughput scenarios).
TABLES: Final = 100
BRANCH: Final = "compare"
#: lochkit's own warm-up per scenario and cache setting: fills caches, no JIT to wait for.
LOCHKIT_WARMUP_S: Final = 1.0
#: Calls of each kind measured for the database's floor (as ``lochkit bench``'s default --commits).
FLOOR_CALLS: Final = 1000
#: Backends whose data lives in the process's memory: both sides start every round afresh.
HEAP_BACKENDS: Final = frozenset({"inmemory"})


@dataclass
class Row:
    backend: str
    puts: int
    cache: bool
    nessie: list[float] = field(default_factory=list)
    lochkit: list[float] = field(default_factory=list)
    #: Why there is no Nessie figure, if there is none.
    nessie_missing: str | None = None
    #: Compare-and-swaps/s of the database measured in the same run (None when not measured).
    cas_floor: float | None = None

    @property
    def nessie_median(self) -> float | None:
        return statistics.median(self.nessie) if self.nessie else None

    @property
    def lochkit_median(self) -> float:
        return statistics.median(self.lochkit) if self.lochkit else 0.0

    @property
    def ratio(self) -> float | None:
        nessie = self.nessie_median
        return self.lochkit_median / nessie if nessie else None

    def of_floor(self, commits_per_s: float | None) -> float | None:
        """Commits/s as a share of the compare-and-swap floor."""
        return commits_per_s / self.cas_floor if commits_per_s is not None and self.cas_floor else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "scenario": f"{self.puts}-put",
            "object_cache": self.cache,
            "nessie_commits_per_s": self.nessie,
            "lochkit_commits_per_s": self.lochkit,
            "nessie_median": self.nessie_median,
            "lochkit_median": self.lochkit_median,
            "ratio": self.ratio,
            "nessie_missing": self.nessie_missing,
            "cas_floor_ops_per_s": self.cas_floor,
            "lochkit_to_cas_floor": self.of_floor(self.lochkit_median),
            "nessie_to_cas_floor": self.of_floor(self.nessie_median),
        }


@dataclass
class Comparison:
    rows: list[Row] = field(default_factory=list)
    #: Which Nessie storage module ran each backend.
    storage: dict[str, str] = field(default_factory=dict)
    nessie_version: str = ""
    rounds: int = 0
    seconds: float = 0.0
    warmup: dict[str, float] = field(default_factory=dict)
    #: The database's own floor per backend, measured before the rounds.
    floors: dict[str, Floor] = field(default_factory=dict)


#: Nessie's JVM runs this long before the measured rounds, spread over the scenarios. Its JIT keeps
#: improving well into the first seconds (more so on a busy machine), and lochkit has no JIT to
#: wait for, so every backend gets the whole warm-up.
DEFAULT_WARMUP_S: Final = 20.0


def warmup_seconds(given: float | None) -> float:
    return DEFAULT_WARMUP_S if given is None else given


def compare_backend(
    comparison: Comparison,
    backend: str,
    adapter: BackendAdapter,
    url: str | None,
    *,
    classpath: str | None,
    scratch: Path,
    rounds: int,
    seconds: float,
    warmup: float,
    caches: Sequence[bool],
    log: Callable[[str], None],
) -> None:
    """Measure ``backend`` on both sides and add its rows to ``comparison``."""
    rows = {(p, c): Row(backend, p, c) for p in SCENARIOS for c in caches}
    comparison.rows += rows.values()
    bench = Bench(adapter, new_repository_id())
    nessie: NessieServe | None = None
    try:
        floor = comparison.floors[backend] = measure_floor(adapter, operations=FLOOR_CALLS)
        if url is not None and adapter.name in pg_floor.BACKENDS:
            floor.figures[pg_floor.NAME] = pg_floor.measure_raw_cas(url, operations=FLOOR_CALLS)
        for row in rows.values():
            row.cas_floor = floor.cas_per_second
        log(f"{backend}: floor {floor.cas_per_second:,.0f} compare-and-swaps/s")
        bench.initialize()
        tables = bench.fresh_branch(BRANCH, TABLES)
        if backend in NOT_PUBLISHED or classpath is None:
            for row in rows.values():
                row.nessie_missing = NOT_PUBLISHED.get(backend, "not run")
        else:
            try:
                nessie = _start_nessie(comparison, backend, url, classpath, scratch, warmup, caches, log)
            except NessieSideError as e:
                # lochkit's side still runs; the table says why Nessie's has no figure.
                log(f"{backend}: {e}")
                for row in rows.values():
                    row.nessie_missing = f"Nessie's side failed: {e}"
        for puts in SCENARIOS:
            for cache in caches:
                bench.measure("warm-up", tables, puts, cache=cache, seconds=LOCHKIT_WARMUP_S)
        for r in range(rounds):
            if backend in HEAP_BACKENDS:
                bench, tables = _fresh_repository(bench, adapter, nessie)
            for puts in SCENARIOS:
                for cache in caches:
                    row = rows[(puts, cache)]
                    sides = [_lochkit_side(bench, tables, row, seconds)]
                    if nessie is not None:
                        sides.append(_nessie_side(nessie, row, seconds))
                    for side in sides if r % 2 == 0 else reversed(sides):
                        side()
                    log(_progress(row, r))
    finally:
        if nessie is not None:
            try:
                nessie.ask("erase")
            finally:
                nessie.close()
        bench.erase()


def _fresh_repository(
    bench: Bench, adapter: BackendAdapter, nessie: NessieServe | None
) -> tuple[Bench, Tables]:
    """Both sides' repositories dropped and set up again. A store that keeps every commit in the
    process's memory grows by gigabytes in a run at Nessie's in-memory rate, and a JVM near its
    heap limit measures its collector: its commits/s fell from 15,000 to 20 within a run."""
    bench.erase()
    bench = Bench(adapter, new_repository_id())
    bench.initialize()
    tables = bench.fresh_branch(BRANCH, TABLES)
    if nessie is not None:
        nessie.ask("reset")
        nessie.ask(f"setup {BRANCH} {TABLES}")
    return bench, tables


def _start_nessie(
    comparison: Comparison,
    backend: str,
    url: str | None,
    classpath: str,
    scratch: Path,
    warmup: float,
    caches: Sequence[bool],
    log: Callable[[str], None],
) -> NessieServe:
    """Nessie's JVM, with the branch set up and warmed up (stopped again if any of it fails)."""
    nessie = NessieServe(
        classpath, nessie_address(backend, url, scratch), repository=new_scratch_id("nessie-bench")
    )
    try:
        info = nessie.ask("info")
        comparison.nessie_version = str(info["nessie"])
        comparison.storage[backend] = str(info["storage"])
        nessie.ask(f"setup {BRANCH} {TABLES}")
        comparison.warmup[backend] = warmup
        log(f"{backend}: warming Nessie's JVM up for {warmup:g} s")
        for puts in SCENARIOS:
            for cache in caches:
                nessie.ask(_measure(puts, warmup / (len(SCENARIOS) * len(caches)), cache))
    except BaseException:
        nessie.close()
        raise
    return nessie


def _measure(puts: int, seconds: float, cache: bool) -> str:
    return f"measure {BRANCH} {puts} {seconds:.3f} {'on' if cache else 'off'}"


def _lochkit_side(bench: Bench, tables: Tables, row: Row, seconds: float) -> Callable[[], None]:
    def run() -> None:
        figures = bench.measure(f"{row.puts}-put", tables, row.puts, cache=row.cache, seconds=seconds)
        row.lochkit.append(figures.per_second)

    return run


def _nessie_side(nessie: NessieServe, row: Row, seconds: float) -> Callable[[], None]:
    def run() -> None:
        answer = nessie.ask(_measure(row.puts, seconds, row.cache))
        row.nessie.append(float(answer["commits_per_s"]))

    return run


def _progress(row: Row, round_index: int) -> str:
    nessie = f"Nessie {row.nessie[-1]:,.0f}" if row.nessie else "Nessie -"
    return (
        f"  {row.backend} {row.puts}-put {'cache' if row.cache else 'no cache'} round {round_index + 1}: "
        f"{nessie}, lochkit {row.lochkit[-1]:,.0f} commits/s"
    )


def table(comparison: Comparison) -> str:
    """The side-by-side table, as the documentation shows it (docs/commit-cost-figures.md)."""
    lines = [
        "| backend | scenario | object cache | Nessie commits/s | lochkit commits/s | lochkit / Nessie |",
        "|---|---|---|---|---|---|",
    ]
    for row in comparison.rows:
        nessie = row.nessie_median
        ratio = row.ratio
        lines.append(
            f"| {row.backend} | {row.puts}-put | {'on' if row.cache else 'off'} | "
            f"{'n/a' if nessie is None else f'{nessie:,.0f}'} | {row.lochkit_median:,.0f} | "
            f"{'n/a' if ratio is None else f'{ratio:.2f}'} |"
        )
    return "\n".join(lines)


def floor_ratios(comparison: Comparison) -> str:
    """Each side's commits/s as a share of the same run's compare-and-swap floor, then the floors."""
    lines = [
        "| backend | scenario | object cache | CAS floor ops/s | Nessie, % of floor | lochkit, % of floor |",
        "|---|---|---|---|---|---|",
    ]
    for row in comparison.rows:
        nessie, lochkit = row.of_floor(row.nessie_median), row.of_floor(row.lochkit_median)
        lines.append(
            f"| {row.backend} | {row.puts}-put | {'on' if row.cache else 'off'} | "
            f"{'n/a' if row.cas_floor is None else f'{row.cas_floor:,.0f}'} | "
            f"{share(nessie)} | {share(lochkit)} |"
        )
    return "\n".join(lines) + "\n\n" + floor_table(comparison.floors)


def notes(comparison: Comparison) -> str:
    """What ran on Nessie's side, and how the figures were taken (printed below the table)."""
    lines = []
    if comparison.storage:
        lines.append(
            f"Nessie {comparison.nessie_version}: VersionStoreImpl over "
            + "; ".join(f"{b}: {s}" for b, s in comparison.storage.items())
            + "."
        )
    missing = {r.backend: r.nessie_missing for r in comparison.rows if r.nessie_missing}
    lines += [f"{b}: no Nessie figure ({why})." for b, why in missing.items()]
    warm = ", ".join(f"{b} {s:g} s" for b, s in comparison.warmup.items())
    lines.append(
        f"Medians of {comparison.rounds} alternating rounds of {comparison.seconds:g} s per side"
        + (f"; Nessie's JVM warmed up first ({warm})." if warm else ".")
    )
    return "\n".join(lines)
