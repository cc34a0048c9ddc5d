"""The database's own floor under a commit, measured beside ``lochkit bench``'s commits.

A version-store commit ends with a compare-and-swap of its branch, and before it stores new
objects and (without the object cache) reads some. How fast the database does those alone is
the floor a commit cannot beat; commits/s divided by compare-and-swaps/s says how far a commit
is from it. Three calls of the backend adapter's contract are measured, one at a time on one
thread (as commits are):

- ``cas``: ``update_ref`` of a reference from the row it holds to a new pointer, carrying a
  history as long as a busy branch's (the row a commit's compare-and-swap writes);
- ``read``: ``fetch_objs`` of one stored object;
- ``put``: ``insert_objs`` of one new object (insert-if-absent), a content value as a commit
  stores it.

Going through the adapter rather than a database driver makes the floor available for every
backend, third-party adapters included, and it is what a commit's round trips cost. Only the
adapter call is timed (rows are built before the clock starts), so operations/s is 1 / mean
latency. Everything happens in a scratch repository of its own (``new_scratch_id``), which is
erased afterwards, also when a measurement fails: no other repository is read or written.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from loadgen.latencies import percentile
from persist_spi.adapter import BackendAdapter, ObjRow, RefRow
from persist_spi.config import StoreConfig
from persist_spi.errors import LochkitError
from persist_spi.ids import ObjId, random_obj_id
from persist_spi.logic.ownership import new_scratch_id
from persist_spi.objs import content_value
from persist_spi.references import PreviousPointer, Reference
from persist_spi.versionstore.content import IcebergTable

#: The measured calls, in the order they run, with what each is.
OPERATIONS: Final = {
    "put": "put one new object",
    "read": "read one object",
    "cas": "compare-and-swap a reference",
}
#: Calls of each kind made before the measured ones (statement preparation, connection set-up).
WARMUP_CALLS: Final = 20
REFERENCE: Final = "refs/heads/floor"


class FloorMeasurementError(LochkitError):
    """An adapter call of the floor measurement did not do what the contract promises."""


@dataclass
class OperationFigures:
    operation: str
    #: What was measured, for tables.
    label: str
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.latencies_ms)

    @property
    def per_second(self) -> float:
        """Calls per second of call time: what one thread doing nothing else would reach."""
        total = sum(self.latencies_ms)
        return 1000 * self.count / total if total else 0.0

    def percentile(self, p: float) -> float:
        return percentile(self.latencies_ms, p)

    def as_dict(self) -> dict[str, float | int | str]:
        return {
            "operation": self.operation,
            "what": self.label,
            "calls": self.count,
            "ops_per_s": round(self.per_second, 1),
            "p50_ms": round(self.percentile(50), 3),
            "p99_ms": round(self.percentile(99), 3),
            "mean_ms": round(statistics.fmean(self.latencies_ms), 3) if self.latencies_ms else 0.0,
        }


@dataclass
class Floor:
    """One measurement of the three calls on one backend."""

    figures: dict[str, OperationFigures]

    @property
    def cas_per_second(self) -> float:
        return self.figures["cas"].per_second

    def ratio(self, commits_per_second: float) -> float | None:
        """Commits/s as a share of compare-and-swaps/s (None without a floor)."""
        cas = self.cas_per_second
        return commits_per_second / cas if cas else None

    def as_dict(self) -> dict[str, dict[str, float | int | str]]:
        return {name: f.as_dict() for name, f in self.figures.items()}


def share(ratio: float | None) -> str:
    """A ratio to the floor as a percentage, to two significant digits below 10 %."""
    if ratio is None:
        return "n/a"
    percent = ratio * 100
    if percent >= 10:
        return f"{percent:.0f} %"
    return f"{percent:.2g} %" if percent < 1 else f"{percent:.1f} %"


def measure_floor(
    adapter: BackendAdapter,
    *,
    operations: int | None = None,
    seconds: float | None = None,
    warmup: int = WARMUP_CALLS,
) -> Floor:
    """Each call ``operations`` times or for ``seconds`` (of call time) after ``warmup`` calls,
    in a scratch repository erased afterwards."""
    if operations is None and seconds is None:
        raise ValueError("give operations or seconds")
    repository = new_scratch_id("bench-floor")
    try:
        return FloorCalls(adapter, repository, operations, seconds, warmup).run()
    finally:
        adapter.erase_repositories([repository])


def repeat(
    name: str,
    label: str,
    prepare: Callable[[int], Callable[[], object]],
    *,
    operations: int | None,
    seconds: float | None,
    warmup: int,
) -> OperationFigures:
    """``warmup`` calls ``prepare(i)()``, then measured ones, ``operations`` of them or until
    ``seconds`` of call time are spent; only the call ``prepare`` returns is timed."""
    for i in range(warmup):
        prepare(i)()
    figures = OperationFigures(name, label)
    spent = 0.0
    i = warmup
    while (operations is None or figures.count < operations) and (seconds is None or spent < seconds):
        call = prepare(i)
        t0 = time.perf_counter()
        call()
        elapsed = time.perf_counter() - t0
        spent += elapsed
        figures.latencies_ms.append(elapsed * 1000)
        i += 1
    return figures


class FloorCalls:
    """The floor's calls on one adapter, in a scratch repository: :meth:`run` measures them all;
    other benchmarks take single calls (:meth:`put_call`, :meth:`cas_calls`) to time them alike."""

    def __init__(
        self,
        adapter: BackendAdapter,
        repository: str,
        operations: int | None,
        seconds: float | None,
        warmup: int,
    ) -> None:
        self.adapter = adapter
        self.repository = repository
        self.operations = operations
        self.seconds = seconds
        self.warmup = warmup
        self.stored: list[ObjId] = []

    def run(self) -> Floor:
        calls = {"put": self.put_call, "read": self._read, "cas": self.cas_calls()}
        return Floor(
            {
                name: repeat(
                    name,
                    OPERATIONS[name],
                    calls[name],
                    operations=self.operations,
                    seconds=self.seconds,
                    warmup=self.warmup,
                )
                for name in OPERATIONS
            }
        )

    def put_call(self, i: int) -> Callable[[], object]:
        """A call that inserts the ``i``-th new content value (its row built already)."""
        value = content_value(f"floor-{i}", 1, _table(i).to_bytes(f"floor-{i}"))
        encoded = self.adapter.layout.codec.encode(value)
        row = ObjRow(value.id, encoded.type_short_name, encoded.version_token, encoded.data, _micros())
        self.stored.append(value.id)

        def call() -> None:
            if self.adapter.insert_objs(self.repository, [row]) != [True]:
                raise FloorMeasurementError(
                    f"{self.adapter.name}: insert_objs did not report a new object as inserted"
                )

        return call

    def _read(self, i: int) -> Callable[[], object]:
        wanted = self.stored[i % len(self.stored)]

        def call() -> None:
            found = self.adapter.fetch_objs(self.repository, [wanted])
            if found[0] is None:
                raise FloorMeasurementError(
                    f"{self.adapter.name}: fetch_objs did not find an object just stored"
                )

        return call

    def cas_calls(self) -> Callable[[int], Callable[[], object]]:
        """The reference is created with a full history, so every swap writes a row of a busy
        branch's size; each swap moves it to a new pointer and shifts the history by one."""
        config = StoreConfig()
        now = _micros()
        history = tuple(PreviousPointer(random_obj_id(), now) for _ in range(config.ref_previous_head_count))
        current = Reference(REFERENCE, random_obj_id(), created_at_micros=now, previous_pointers=history)
        if not self.adapter.insert_ref(self.repository, self._row(current)):
            raise FloorMeasurementError(
                f"{self.adapter.name}: insert_ref refused a reference in a new repository"
            )

        def prepare(_: int) -> Callable[[], object]:
            nonlocal current
            expected = self._row(current)._replace(previous_pointers=b"")  # no part of the condition
            moved = current.for_new_pointer(random_obj_id(), config, _micros())
            new = self._row(moved)

            def call() -> None:
                nonlocal current
                if not self.adapter.update_ref(self.repository, expected, new):
                    raise FloorMeasurementError(
                        f"{self.adapter.name}: update_ref failed on a reference no one else writes"
                    )
                current = moved

            return call

        return prepare

    def _row(self, ref: Reference) -> RefRow:
        return RefRow(
            ref.name,
            bytes(ref.pointer),
            ref.deleted,
            ref.created_at_micros,
            None,
            self.adapter.layout.encode_history(ref.previous_pointers),
        )


def _micros() -> int:
    return time.time_ns() // 1000


def _table(n: int) -> IcebergTable:
    return IcebergTable(metadata_location=f"s3://bucket/floor/{n:08}.json", snapshot_id=n)
