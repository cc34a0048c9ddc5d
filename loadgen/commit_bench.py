"""Commit-cost benchmark: throughput and latency of version-store commits on one backend.

Prints, for the chosen backend, each scenario with the object cache (the default path, as
Nessie's server runs) and without it:

- commits/s for 1-put and 10-put commits (updates of existing Iceberg tables);
- commit latency p50/p99 at history depth 100 and at a deep history (default 100,000 commits);
- commit latency p50/p99 with 100, 3,000, 30,000 and 300,000 keys visible;
- two writers on one branch at once (1 and 10 puts per commit, object cache on): attempts per
  commit and the latency of first attempts and of retries, apart.

Every measured commit goes through the full version-store path (reference read, expected index,
validation, content value, commit build, store, compare-and-swap). Deep histories and large key
sets are built with the same logic, in bulk, before measuring. A commit reads only its parent's
incremental index and the index stripes of the keys it touches, so its cost should not grow with
history depth or key count; this script shows whether that holds.

Before the scenarios it measures the database's own floor through the backend adapter, in a
scratch repository of its own (loadgen/db_floor.py): a compare-and-swap of a reference, a read of
one object and a put of one new object, one at a time, as many of each as --commits. On
PostgreSQL it also times the bare compare-and-swap statement through psycopg, to show what the
adapter adds. Each scenario's line then gives its commits/s as a percentage of the adapter's
compare-and-swaps/s ("of CAS floor").

With --compare-nessie it runs the 1-put and 10-put scenarios side by side with Nessie's own
implementation instead (loadgen/nessie_compare.py).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from loadgen import pg_floor
from loadgen.db_floor import Floor, measure_floor, share
from loadgen.latencies import percentile
from persist_spi import progress
from persist_spi.adapter import BackendAdapter
from persist_spi.config import StoreConfig
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.create_commit import Add, CreateCommit
from persist_spi.logic.ownership import new_scratch_id
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.objs import content_value
from persist_spi.opening import open_persist
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.errors import ReferenceRetryFailureError
from persist_spi.versionstore.keymap import to_store_key
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore

NAMESPACE = ContentKey.of("bench")
#: What ``--object-cache`` may say, and which cache settings each runs.
CACHE_CHOICES: dict[str, tuple[bool, ...]] = {"both": (True, False), "on": (True,), "off": (False,)}

#: Commits measured per scenario by default, timed and counted under callgrind.
TIMED_COMMITS = 1000
INSTRUCTION_COMMITS = 200


@dataclass
class Figures:
    name: str
    commits: int
    seconds: float
    latencies_ms: list[float]
    #: Whether the commits went through the object cache.
    cache: bool = True

    @property
    def per_second(self) -> float:
        return self.commits / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        return percentile(self.latencies_ms, p)

    def as_dict(self) -> dict[str, float | int | str | bool]:
        return {
            "scenario": self.name,
            "object_cache": self.cache,
            "commits": self.commits,
            "commits_per_s": round(self.per_second, 1),
            "p50_ms": round(self.percentile(50), 3),
            "p99_ms": round(self.percentile(99), 3),
            "mean_ms": round(statistics.fmean(self.latencies_ms), 3) if self.latencies_ms else 0.0,
        }


@dataclass
class WriterFigures:
    """One writer of the contended scenario."""

    puts: int
    commits: int = 0
    seconds: float = 0.0
    timeouts: int = 0
    attempts: list[int] = field(default_factory=list)
    first_attempt_ms: list[float] = field(default_factory=list)
    retry_ms: list[float] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, float | int]:
        return {
            "puts_per_commit": self.puts,
            "commits": self.commits,
            "commits_per_s": round(self.commits / self.seconds, 1) if self.seconds else 0.0,
            "timeouts": self.timeouts,
            "attempts_mean": round(statistics.fmean(self.attempts), 2) if self.attempts else 0.0,
            "attempts_max": max(self.attempts, default=0),
            "p50_ms": round(percentile(self.latencies_ms, 50), 3),
            "p99_ms": round(percentile(self.latencies_ms, 99), 3),
            "first_attempt_p50_ms": round(percentile(self.first_attempt_ms, 50), 3),
            "first_attempt_p99_ms": round(percentile(self.first_attempt_ms, 99), 3),
            "retries": len(self.retry_ms),
            "retry_p50_ms": round(percentile(self.retry_ms, 50), 3),
            "retry_p99_ms": round(percentile(self.retry_ms, 99), 3),
        }


@dataclass
class Tables:
    """A branch of the benchmark and its tables' content ids."""

    name: str
    keys: list[ContentKey]
    ids: dict[ContentKey, str]


class Bench:
    """The benchmark's repository on one adapter, seen through the object cache and without it
    (two Persists on the same rows, so data built once is measured both ways)."""

    def __init__(self, adapter: BackendAdapter, repository: str) -> None:
        self.adapter = adapter
        config = StoreConfig(repository_id=repository)
        self.cached = open_persist(adapter, config)
        self.plain = open_persist(adapter, config, object_cache=False)
        self.stores = {True: VersionStore(self.cached), False: VersionStore(self.plain)}
        self.logic = CommitLogic(self.plain)
        #: The next commit number per branch: every measured commit writes new values.
        self._next: dict[str, int] = {}

    @property
    def store(self) -> VersionStore:
        return self.stores[True]

    def initialize(self) -> None:
        RepositoryLogic(self.plain).initialize("main")

    def erase(self) -> None:
        self.cached.erase()

    def fresh_branch(self, name: str, keys: int) -> Tables:
        """A branch holding a namespace and ``keys`` tables (built in bulk commits of 500)."""
        target = branch(name)
        self.store.create_reference(target, self.store.reference(branch("main")).hash)
        self.store.commit(
            target, None, CommitMeta("namespace"), [Put(NAMESPACE, Namespace(elements=("bench",)))]
        )
        table_keys = [ContentKey.of("bench", f"table_{i:06}") for i in range(keys)]
        ids: dict[ContentKey, str] = {}
        with progress.step(f"bench: adding {keys:,} tables to {name}", total=keys, unit="tables") as step:
            for start in range(0, keys, 500):
                chunk = table_keys[start : start + 500]
                result = self.store.commit(
                    target, None, CommitMeta("bulk"), [Put(k, _table(0)) for k in chunk]
                )
                ids.update(result.added_content_ids)
                step.advance(len(chunk))
        return Tables(name, table_keys, ids)

    def deepen(self, tables: Tables, depth: int) -> None:
        """Add commits until the branch's history is ``depth`` commits deep, each updating one key
        (through the storage logic, which is what a version-store commit does underneath)."""
        ref = self.store.refs.get_reference(branch(tables.name).full_name)
        head = ref.pointer
        current = self.logic.fetch_commit(head)
        seq = current.seq if current is not None else 0
        values = {e.key: e.op for e in self.logic.complete_index_of(head) if e.op.exists}
        i = 0
        step = progress.step(
            f"bench: deepening {tables.name} to {depth:,} commits", total=depth, unit="commits"
        )
        with step as deepening:
            deepening.done = seq
            while seq < depth:
                key = tables.keys[i % len(tables.keys)]
                store_key = to_store_key(key)
                old = values[store_key]
                value = content_value(tables.ids[key], 1, _table(seq).to_bytes(tables.ids[key]))
                create = CreateCommit(
                    head, f"deepen {seq}", adds=(Add(store_key, 1, value.id, old.value, old.content_id),)
                )
                stored = self.logic.store_commit(self.logic.build_commit_obj(create), [value])
                assert stored.commit is not None
                head = stored.commit.id
                values[store_key] = old._replace(value=value.id)
                seq += 1
                i += 1
                deepening.done = seq
        self.store.refs.assign_reference(ref, head)

    def operations(self, tables: Tables, n: int, puts: int) -> list[Put]:
        """Commit ``n``'s operations: ``puts`` tables round robin, each to a new snapshot."""
        chosen = [tables.keys[(n * puts + j) % len(tables.keys)] for j in range(puts)]
        return [Put(k, _table(n + 1, tables.ids[k])) for k in dict.fromkeys(chosen)]

    def measure(
        self,
        scenario: str,
        tables: Tables,
        puts: int,
        *,
        cache: bool,
        commits: int | None = None,
        seconds: float | None = None,
    ) -> Figures:
        """Commit ``puts`` updates per commit on the branch, ``commits`` times or for ``seconds``."""
        store = self.stores[cache]
        target = branch(tables.name)
        latencies: list[float] = []
        # Everything built so far (for in-process stores: the whole store) leaves the collector's
        # view. Otherwise its full passes over a 100,000-commit in-memory store cost more than the
        # commit itself, which measures the Python heap, not the commit logic.
        gc.collect()
        gc.freeze()
        n = self._next.get(tables.name, 0)
        start = time.perf_counter()
        deadline = start + seconds if seconds is not None else None
        while (commits is None or len(latencies) < commits) and (
            deadline is None or time.perf_counter() < deadline
        ):
            ops = self.operations(tables, n, puts)
            t0 = time.perf_counter()
            store.commit(target, None, CommitMeta(f"{scenario} #{n}"), ops)
            latencies.append((time.perf_counter() - t0) * 1000)
            n += 1
        elapsed = time.perf_counter() - start
        self._next[tables.name] = n
        return Figures(scenario, len(latencies), elapsed, latencies, cache)

    def contend(
        self, tables: Tables, puts: Sequence[int], *, commits: int | None = None, seconds: float | None = None
    ) -> list[WriterFigures]:
        """Writers (threads, one per entry of ``puts``) commit to one branch at once, each
        ``commits`` times or for ``seconds``, through the object cache; attempts and attempt
        latencies per writer."""
        target = branch(tables.name)
        writers = [WriterFigures(p) for p in puts]
        barrier = threading.Barrier(len(writers))
        base = self._next.get(tables.name, 0)
        numbers = itertools.count(base)  # next() is atomic: each commit gets its own number
        limit = commits if commits is not None else sys.maxsize

        def write(index: int, figures: WriterFigures) -> None:
            barrier.wait()
            start = time.perf_counter()
            deadline = start + seconds if seconds is not None else None
            for _ in range(limit):
                if deadline is not None and time.perf_counter() >= deadline:
                    break
                n = next(numbers)
                ops = self.operations(tables, n, figures.puts)
                t0 = time.perf_counter()
                try:
                    result = self.store.commit(target, None, CommitMeta(f"writer {index} #{n}"), ops)
                except ReferenceRetryFailureError:
                    figures.timeouts += 1
                    continue
                figures.latencies_ms.append((time.perf_counter() - t0) * 1000)
                figures.commits += 1
                figures.attempts.append(result.attempts)
                durations = [d / 1e6 for d in result.attempt_nanos]
                figures.first_attempt_ms += durations[:1]
                figures.retry_ms += durations[1:]
            figures.seconds = time.perf_counter() - start

        threads = [threading.Thread(target=write, args=(i, w)) for i, w in enumerate(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self._next[tables.name] = next(numbers)
        return writers


def _table(n: int, content_id: str | None = None) -> IcebergTable:
    return IcebergTable(id=content_id, metadata_location=f"s3://bucket/metadata/{n:08}.json", snapshot_id=n)


@dataclass
class Results:
    scenarios: list[Figures] = field(default_factory=list)
    writers: list[WriterFigures] = field(default_factory=list)
    #: The database's own floor, measured before the scenarios.
    floor: Floor | None = None

    def ratio(self, f: Figures) -> float | None:
        """The scenario's commits/s as a share of the floor's compare-and-swaps/s."""
        return None if self.floor is None else self.floor.ratio(f.per_second)

    def document(self, backend: str) -> dict[str, object]:
        """Every figure, as ``--json`` writes it."""
        return {
            "backend": backend,
            "floor": None if self.floor is None else self.floor.as_dict(),
            "results": [{**r.as_dict(), "cas_floor_ratio": _rounded(self.ratio(r))} for r in self.scenarios],
            "contended": [w.as_dict() for w in self.writers],
        }


def _rounded(ratio: float | None) -> float | None:
    return None if ratio is None else float(f"{ratio:.4g}")


def run(
    bench: Bench,
    *,
    commits: int,
    deep: int,
    key_counts: Sequence[int],
    caches: Sequence[bool],
    log: Callable[[str], None],
    url: str | None = None,
) -> Results:
    """Every scenario, after the database's floor; ``url`` is the server's (for the cross-check
    through the database driver alone, where there is one: :mod:`loadgen.pg_floor`)."""
    results = Results()

    def measure(scenario: str, tables: Tables, puts: int) -> None:
        for cache in caches:
            results.scenarios.append(bench.measure(scenario, tables, puts, cache=cache, commits=commits))
            log(scenario_line(results.scenarios[-1], results.ratio(results.scenarios[-1])))

    results.floor = measure_floor(bench.adapter, operations=commits)
    if url is not None and bench.adapter.name in pg_floor.BACKENDS:
        results.floor.figures[pg_floor.NAME] = pg_floor.measure_raw_cas(url, operations=commits)
    for line in floor_lines(results.floor):
        log(line)
    bench.initialize()
    tables = bench.fresh_branch("throughput", 100)
    for puts in (1, 10):
        measure(f"{puts}-put commits", tables, puts)
    tables = bench.fresh_branch("history", 100)
    bench.deepen(tables, 100)
    measure("depth 100", tables, 1)
    bench.deepen(tables, deep)
    measure(f"depth {deep:,}", tables, 1)
    for count in key_counts:
        tables = bench.fresh_branch(f"keys{count}", count)
        measure(f"{count:,} keys visible", tables, 1)
    tables = bench.fresh_branch("contended", 100)
    results.writers = bench.contend(tables, (1, 10), commits=commits)
    for w in results.writers:
        log(writer_line(w))
    return results


def scenario_line(f: Figures, ratio: float | None = None) -> str:
    cache = "cache" if f.cache else "no cache"
    of_floor = "" if ratio is None else f"   {share(ratio)} of CAS floor"
    return (
        f"{f.name:<22} {cache:<9} {f.per_second:>9.1f} commits/s   p50 {f.percentile(50):>7.2f} ms   "
        f"p99 {f.percentile(99):>7.2f} ms   ({f.commits} commits){of_floor}"
    )


def floor_lines(floor: Floor) -> list[str]:
    """The floor as the benchmark prints it, one line per adapter call."""
    return [
        f"floor: {f.label:<32} {f.per_second:>9.1f} ops/s       p50 {f.percentile(50):>7.3f} ms   "
        f"p99 {f.percentile(99):>7.3f} ms   ({f.count} calls)"
        for f in floor.figures.values()
    ]


def writer_line(w: WriterFigures) -> str:
    d = w.as_dict()
    return (
        f"2 writers, {w.puts:>2}-put      cache     {d['commits_per_s']:>9} commits/s   "
        f"attempts {d['attempts_mean']:.2f} (max {d['attempts_max']})   first attempt p50 "
        f"{d['first_attempt_p50_ms']:.2f} ms   retry p50 {d['retry_p50_ms']:.2f} ms "
        f"({d['retries']} retries, {w.timeouts} timeouts)"
    )


def markdown(backend: str, results: Results) -> str:
    """The benchmark's figures as Markdown: a row per scenario, two columns per object-cache
    setting (commits/s, and its share of the compare-and-swap floor); the floor; then the two
    writers of the contended scenario."""
    caches = list(dict.fromkeys(f.cache for f in results.scenarios))
    label = {True: "cache", False: "no cache"}
    lines = [
        "| scenario | "
        + " | ".join(
            f"{backend}, {label[c]}: commits/s (p50 / p99 ms) | {label[c]}: % of CAS floor" for c in caches
        )
        + " |",
        "|---|" + "---|---|" * len(caches),
    ]
    for name in dict.fromkeys(f.name for f in results.scenarios):
        cells = []
        for cache in caches:
            found = [f for f in results.scenarios if f.name == name and f.cache == cache]
            for f in found[:1]:
                ratio = results.ratio(f)
                cells += [
                    f"{f.per_second:,.0f} ({f.percentile(50):.2f} / {f.percentile(99):.1f})",
                    share(ratio),
                ]
            if not found:
                cells += ["—", "—"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if results.floor is not None:
        lines += ["", floor_table({backend: results.floor})]
    if results.writers:
        lines += [
            "",
            "| two writers on one branch, object cache | commits/s | attempts mean (max) | retry timeouts |",
            "|---|---|---|---|",
        ]
        for w in results.writers:
            d = w.as_dict()
            lines.append(
                f"| {w.puts}-put writer | {d['commits_per_s']:,} | {d['attempts_mean']:.2f} "
                f"({d['attempts_max']}) | {w.timeouts} |"
            )
    return "\n".join(lines)


def floor_table(floors: dict[str, Floor]) -> str:
    """The floors as Markdown: a row per backend and adapter call."""
    lines = [
        "| database floor (adapter calls, one at a time) | ops/s | p50 ms | p99 ms |",
        "|---|---|---|---|",
    ]
    for backend, floor in floors.items():
        for f in floor.figures.values():
            lines.append(
                f"| {backend}: {f.label} | {f.per_second:,.0f} | {f.percentile(50):.3f} | "
                f"{f.percentile(99):.3f} |"
            )
    return "\n".join(lines)


def new_repository_id() -> str:
    return new_scratch_id("bench")


# --- command line ----------------------------------------------------------------------------------


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive whole number")
    return value


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive number of seconds")
    return value


def counts(text: str) -> list[int]:
    return [positive(part.strip()) for part in text.split(",") if part.strip()]


def names(text: str) -> list[str]:
    found = [part.strip() for part in text.split(",") if part.strip()]
    if not found:
        raise argparse.ArgumentTypeError("name at least one backend")
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lochkit bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--backend",
        type=names,
        default=["rocksdb"],
        metavar="NAME[,NAME...]",
        help="backend, or with --compare-nessie a comma-separated list (default rocksdb); servers "
        "are provisioned as the conformance suite does when no --url is given",
    )
    parser.add_argument("--url", help="backend address (embedded backends: a fresh temporary store)")
    parser.add_argument(
        "--allow-existing-data",
        action="store_true",
        help="run in the database at --url even when it holds repositories lochkit's test and load "
        "commands did not create (refused otherwise); the benchmark still writes only into scratch "
        "repositories of its own, and erases them",
    )
    parser.add_argument(
        "--provision",
        default="auto",
        choices=["auto", "external", "testcontainers", "local"],
        help="how to obtain a database server when no --url is given (default: auto)",
    )
    parser.add_argument(
        "--commits",
        type=positive,
        help=f"commits measured per scenario (default {TIMED_COMMITS}; {INSTRUCTION_COMMITS} with "
        "--instructions)",
    )
    parser.add_argument("--deep", type=positive, default=100_000, help="history depth of the deep scenario")
    parser.add_argument(
        "--key-counts",
        type=counts,
        default="100,3000,30000,300000",
        help="comma-separated numbers of visible keys to measure (default 100,3000,30000,300000)",
    )
    parser.add_argument(
        "--object-cache",
        choices=sorted(CACHE_CHOICES),
        default="both",
        help="measure through the object cache (on, the default path), without it (off), or both (default)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures to this file")
    parser.add_argument(
        "--markdown-out",
        metavar="FILE",
        help="also write the figures' table to FILE as a documentation snippet",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count CPU instructions per 1-put and 10-put commit with callgrind (valgrind) instead "
        "of timing: the same on a busy machine as on a quiet one; embedded backends only "
        "(inmemory, rocksdb), and slow: callgrind runs Python about 50 times slower",
    )
    compare = parser.add_argument_group(
        "side by side with Nessie (--compare-nessie)",
        "1-put and 10-put commits through Nessie's own version store (its published storage jars, "
        "driven by a Java program built with Maven) and through lochkit's, alternating rounds in "
        "one run; prints the side-by-side table",
    )
    compare.add_argument("--compare-nessie", action="store_true", help="run the side-by-side comparison")
    compare.add_argument("--rounds", type=positive, default=3, help="alternating rounds (default 3)")
    compare.add_argument(
        "--seconds", type=positive_seconds, default=5.0, help="seconds per side per round (default 5)"
    )
    compare.add_argument(
        "--warmup",
        type=positive_seconds,
        help="seconds Nessie's JVM runs the scenarios before the rounds (default 20)",
    )
    return parser


def validate(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse combinations the parser alone cannot see."""
    if args.instructions and args.compare_nessie:
        parser.error("--instructions counts lochkit's side only; leave out --compare-nessie")
    if args.commits is None:
        args.commits = INSTRUCTION_COMMITS if args.instructions else TIMED_COMMITS
    if len(args.backend) > 1 and not args.compare_nessie:
        parser.error("several backends need --compare-nessie; the full benchmark runs one at a time")
    if len(args.backend) > 1 and args.url:
        parser.error("--url names one database; with several backends give none (they are provisioned)")
