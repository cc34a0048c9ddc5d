"""Commit-cost benchmark: throughput and latency of version-store commits on one backend.

Prints, for the chosen backend:

- commits/s for 1-put and 10-put commits;
- commit latency p50/p99 at history depth 100 and at a deep history (default 100,000 commits);
- commit latency p50/p99 with 100, 3,000, 30,000 and 300,000 keys visible.

Every measured commit goes through the full version-store path (reference read, expected index,
validation, content value, commit build, store, compare-and-swap). Deep histories and large key
sets are built with the same logic, in bulk, before measuring. A commit reads only its parent's
incremental index and the index stripes of the keys it touches, so its cost should not grow with
history depth or key count; this script shows whether that holds.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from persist_spi import hints, progress
from persist_spi.adapter import BackendAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.errors import BackendConfigError, LochkitError
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.create_commit import Add, CreateCommit
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.persist import Persist
from persist_spi.registry import UnknownBackend, backend_factory
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.keymap import to_store_key
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore

NAMESPACE = ContentKey.of("bench")


@dataclass
class Figures:
    name: str
    commits: int
    seconds: float
    latencies_ms: list[float]

    @property
    def per_second(self) -> float:
        return self.commits / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        data = sorted(self.latencies_ms)
        if not data:
            return 0.0
        return data[min(len(data) - 1, round(p / 100 * (len(data) - 1)))]

    def as_dict(self) -> dict[str, float | int | str]:
        return {
            "scenario": self.name,
            "commits": self.commits,
            "commits_per_s": round(self.per_second, 1),
            "p50_ms": round(self.percentile(50), 3),
            "p99_ms": round(self.percentile(99), 3),
            "mean_ms": round(statistics.fmean(self.latencies_ms), 3) if self.latencies_ms else 0.0,
        }


class Bench:
    def __init__(self, persist: Persist) -> None:
        self.persist = persist
        self.store = VersionStore(persist)
        self.logic = CommitLogic(persist)

    def fresh_branch(self, name: str, keys: int) -> tuple[list[ContentKey], dict[ContentKey, str]]:
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
        return table_keys, ids

    def deepen(self, name: str, keys: list[ContentKey], ids: dict[ContentKey, str], depth: int) -> None:
        """Add commits until the branch's history is ``depth`` commits deep, each updating one key
        (through the storage logic, which is what a version-store commit does underneath)."""
        ref = self.store.refs.get_reference(branch(name).full_name)
        head = ref.pointer
        current = self.logic.fetch_commit(head)
        seq = current.seq if current is not None else 0
        values = {e.key: e.op for e in self.logic.complete_index_of(head) if e.op.exists}
        from persist_spi.objs import content_value

        i = 0
        step = progress.step(f"bench: deepening {name} to {depth:,} commits", total=depth, unit="commits")
        with step as deepening:
            deepening.done = seq
            while seq < depth:
                key = keys[i % len(keys)]
                store_key = to_store_key(key)
                old = values[store_key]
                value = content_value(ids[key], 1, _table(seq).to_bytes())
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

    def measure(
        self,
        scenario: str,
        name: str,
        keys: list[ContentKey],
        ids: dict[ContentKey, str],
        commits: int,
        puts: int,
    ) -> Figures:
        target = branch(name)
        latencies = []
        # Everything built so far (for in-process stores: the whole store) leaves the collector's
        # view. Otherwise its full passes over a 100,000-commit in-memory store cost more than the
        # commit itself, which measures the Python heap, not the commit logic.
        gc.collect()
        gc.freeze()
        start = time.perf_counter()
        for n in range(commits):
            chosen = [keys[(n * puts + j) % len(keys)] for j in range(puts)]
            ops = [Put(k, _table(n + 1, ids[k])) for k in dict.fromkeys(chosen)]
            t0 = time.perf_counter()
            self.store.commit(target, None, CommitMeta(f"{scenario} #{n}"), ops)
            latencies.append((time.perf_counter() - t0) * 1000)
        return Figures(scenario, commits, time.perf_counter() - start, latencies)


def _table(n: int, content_id: str | None = None) -> IcebergTable:
    return IcebergTable(id=content_id, metadata_location=f"s3://bucket/metadata/{n:08}.json", snapshot_id=n)


def run(
    persist: Persist, *, commits: int, deep: int, key_counts: Sequence[int], log: Callable[[str], None]
) -> list[Figures]:
    RepositoryLogic(persist).initialize("main")
    bench = Bench(persist)
    results = []
    keys, ids = bench.fresh_branch("throughput", 100)
    for puts in (1, 10):
        results.append(bench.measure(f"{puts}-put commits", "throughput", keys, ids, commits, puts))
        log(_line(results[-1]))
    keys, ids = bench.fresh_branch("history", 100)
    bench.deepen("history", keys, ids, 100)
    results.append(bench.measure("depth 100", "history", keys, ids, commits, 1))
    log(_line(results[-1]))
    bench.deepen("history", keys, ids, deep)
    results.append(bench.measure(f"depth {deep:,}", "history", keys, ids, commits, 1))
    log(_line(results[-1]))
    for count in key_counts:
        name = f"keys{count}"
        keys, ids = bench.fresh_branch(name, count)
        results.append(bench.measure(f"{count:,} keys visible", name, keys, ids, commits, 1))
        log(_line(results[-1]))
    return results


def _line(f: Figures) -> str:
    return (
        f"{f.name:<22} {f.per_second:>9.1f} commits/s   p50 {f.percentile(50):>7.2f} ms   "
        f"p99 {f.percentile(99):>7.2f} ms   ({f.commits} commits)"
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive whole number")
    return value


def _counts(text: str) -> list[int]:
    return [_positive(part.strip()) for part in text.split(",") if part.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="rocksdb", help="backend to measure (see: lochkit backends)")
    parser.add_argument(
        "--url",
        help="address of a running server (default: $LOCHKIT_<BACKEND>_URL; embedded backends: a "
        "fresh temporary store)",
    )
    parser.add_argument("--commits", type=_positive, default=1000, help="commits measured per scenario")
    parser.add_argument("--deep", type=_positive, default=100_000, help="history depth of the deep scenario")
    parser.add_argument(
        "--key-counts",
        type=_counts,
        default="100,3000,30000,300000",
        help="comma-separated numbers of visible keys to measure",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE")


def run_from_args(args: argparse.Namespace, usage_error: Callable[[str], NoReturn]) -> int:
    """Runs the benchmark ``args`` describe; a bad backend name or address goes to ``usage_error``."""
    url = args.url or os.environ.get(hints.url_env_var(args.backend))
    try:
        factory = backend_factory(args.backend)
    except UnknownBackend as e:
        usage_error(str(e))
    try:
        adapter = factory.create(url)
    except BackendConfigError as e:
        usage_error(str(e))
    except LochkitError as e:
        print(f"lochkit bench: {e}", file=sys.stderr)
        return 1
    try:
        return _run_on(adapter, args)
    except LochkitError as e:
        print(f"lochkit bench: {e}", file=sys.stderr)
        return 1
    finally:
        adapter.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loadgen.commit_bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv), parser.error)


def _run_on(adapter: BackendAdapter, args: argparse.Namespace) -> int:
    adapter.setup_schema()
    persist = AdapterPersist(adapter, StoreConfig(repository_id=f"bench-{uuid.uuid4().hex[:8]}"))
    print(
        f"lochkit commit benchmark on {args.backend} ({adapter.address}); "
        f"{args.commits} commits per scenario",
        flush=True,
    )
    try:
        results = run(
            persist,
            commits=args.commits,
            deep=args.deep,
            key_counts=args.key_counts,
            log=lambda line: print(line, flush=True),
        )
    finally:
        persist.erase()
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"backend": args.backend, "results": [r.as_dict() for r in results]}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
