"""Random histories on the in-memory backend, reduced to the bytes they stored.

A history is drawn from a seed: branches created and deleted, commits of every content type (keys
with characters outside the Basic Multilingual Plane, which order differently in UTF-16), deletes,
commits large enough to spill and stripe the key index (the index limits are set low), merges and
transplants, in lochkit's layout and in Nessie's. Time and content ids come from the seed, so the
same seed must store the same bytes under any build of lochkit.

Run as a program, it prints the digests of the given seeds as JSON: the compiled kernel's tests
run it with the pure-Python source to get the reference.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
import random
import types
from collections.abc import Iterator, Sequence

from backends.inmemory.adapter import InMemoryAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.clock import DEFAULT_CLOCK
from persist_spi.config import StoreConfig
from persist_spi.errors import LochkitError
from persist_spi.kernel import describe
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT
from persist_spi.live_objects import as_row
from persist_spi.logic import reference_logic, repository_logic
from persist_spi.versionstore.content import (
    UDF,
    Content,
    ContentKey,
    DeltaLakeTable,
    IcebergTable,
    IcebergView,
    Namespace,
)
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Delete, Operation, Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.sources import seeded_sources
from persist_spi.versionstore.store import VersionStore

#: Low enough that a commit of a few dozen keys spills its index and stripes the reference index.
SMALL_INDEXES = StoreConfig(max_incremental_index_size=2_000, max_serialized_index_size=6_000)
_NAME_CHARACTERS = "abcxyz_-.09 \u00e9\u4e2d\U0001f600\U00010348"


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(_NAME_CHARACTERS) for _ in range(rng.randint(1, 12)))


def _content(rng: random.Random) -> Content:
    kind = rng.randrange(4)
    if kind == 0:
        return IcebergTable(
            metadata_location=f"s3://{_name(rng)}/{rng.getrandbits(32)}",
            snapshot_id=rng.randint(-1, 2**40),
            schema_id=rng.randint(0, 9),
        )
    if kind == 1:
        return IcebergView(
            metadata_location=f"s3://v/{_name(rng)}", version_id=rng.randint(0, 99), sql_text="select 1"
        )
    if kind == 2:
        return DeltaLakeTable(metadata_location_history=(f"s3://d/{_name(rng)}",), last_checkpoint=None)
    return UDF(metadata_location=f"s3://u/{_name(rng)}", version_id=str(rng.randint(0, 9)))


class _TickingClock:
    """Microseconds that start at the seed and advance by one per reading (a Persist's clock)."""

    def __init__(self, seed: int) -> None:
        self._now = 1_700_000_000_000_000 + seed * 1_000_000

    def micros(self) -> int:
        self._now += 1
        return self._now


def _history(seed: int, nessie_layout: bool, clock: _TickingClock) -> InMemoryAdapter:
    rng = random.Random(seed)
    adapter = InMemoryAdapter(f"history-{seed}", NESSIE_LAYOUT if nessie_layout else LOCHKIT_LAYOUT)
    persist = AdapterPersist(adapter, SMALL_INDEXES, clock=clock)
    store = VersionStore(persist, sources=seeded_sources(seed))
    store.repository.initialize("main")
    namespace = ContentKey.of("ns")
    store.commit(branch("main"), None, CommitMeta("namespace"), [Put(namespace, Namespace(elements=("ns",)))])
    branches = ["main"]
    live: dict[str, dict[ContentKey, str]] = {"main": {}}
    for step in range(rng.randint(15, 40)):
        action = rng.random()
        name = rng.choice(branches)
        try:
            if action < 0.1 and len(branches) < 4:
                new = f"b{step}"
                store.create_reference(branch(new), store.reference(branch(name)).hash)
                branches.append(new)
                live[new] = dict(live[name])
            elif action < 0.2 and len(branches) > 1:
                source, target = rng.sample(branches, 2)
                store.merge(branch(source), branch(target), meta=CommitMeta(f"merge {source}"))
                live[target] = _live(store, target)
            elif action < 0.25 and len(branches) > 1:
                source, target = rng.sample(branches, 2)
                head = store.reference(branch(source)).hash
                store.transplant(branch(target), None, [head])
                live[target] = _live(store, target)
            else:
                operations: list[Operation] = []
                keys = live[name]
                for _ in range(rng.choice((1, 1, 2, 5, 40))):
                    if keys and rng.random() < 0.3:
                        key = rng.choice(sorted(keys, key=str))
                        if rng.random() < 0.5:
                            operations.append(Delete(key))
                        else:
                            operations.append(
                                Put(key, IcebergTable(id=keys[key], metadata_location=_name(rng)))
                            )
                    else:
                        operations.append(Put(ContentKey.of("ns", _name(rng)), _content(rng)))
                meta = CommitMeta(
                    f"commit {step}\n{_name(rng)}", authors=(_name(rng),), properties={"k": _name(rng)}
                )
                store.commit(branch(name), None, meta, _distinct(operations))
                live[name] = _live(store, name)
        except LochkitError:
            pass  # a conflict or an invalid operation drawn at random: nothing was stored for it
    return adapter


def _live(store: VersionStore, name: str) -> dict[ContentKey, str]:
    """The branch's tables by key, with their content ids (what a later Put may update)."""
    return {e.key: e.content_id for e in store.get_entries(branch(name)) if e.content_id and e.payload == 1}


def _distinct(operations: list[Operation]) -> list[Operation]:
    """At most one operation per key, as a commit requires."""
    seen: dict[ContentKey, Operation] = {}
    for op in operations:
        seen.setdefault(op.key, op)
    return list(seen.values())


class _SeededDatetime(datetime.datetime):
    """``datetime.datetime`` whose ``now()`` is fixed: the bookkeeping commits of internal
    references carry the wall-clock time (an isoformat header), the one reading no seed reaches."""

    @classmethod
    def now(cls, tz: datetime.tzinfo | None = None) -> _SeededDatetime:
        return cls(2026, 1, 1, tzinfo=tz)


@contextlib.contextmanager
def _seeded_time(seed: int) -> Iterator[_TickingClock]:
    """A clock ticking from the seed, also behind the process's shared clock (commits take their
    creation time from it) and with the wall clock fixed; all three are put back afterwards, since
    the tests that run next in the process read them."""
    clock = _TickingClock(seed)
    shim = types.SimpleNamespace(datetime=_SeededDatetime, UTC=datetime.UTC)
    modules = (reference_logic, repository_logic)
    saved = [vars(module)["datetime"] for module in modules]
    saved_clock = (DEFAULT_CLOCK._source, DEFAULT_CLOCK._last)
    DEFAULT_CLOCK._source, DEFAULT_CLOCK._last = clock, 0
    for module in modules:
        vars(module)["datetime"] = shim
    try:
        yield clock
    finally:
        for module, original in zip(modules, saved, strict=True):
            vars(module)["datetime"] = original
        DEFAULT_CLOCK._source, DEFAULT_CLOCK._last = saved_clock


def digests(seed: int) -> list[list[str]]:
    """Every stored object (id, type, SHA-256 of its bytes) and every reference's head, in both
    layouts, sorted."""
    rows: list[list[str]] = []
    for nessie_layout in (False, True):
        with _seeded_time(seed) as clock:
            adapter = _history(seed, nessie_layout, clock)
        layout = "nessie" if nessie_layout else "lochkit"
        for (_, obj_id), kept in adapter._objs.items():
            # The bytes the store answers for the object (objects the core stored are kept live
            # and serialised when read, by the layout's codec).
            row = as_row(kept, adapter.layout.codec)
            rows.append([layout, "obj", obj_id.hex(), row.obj_type, hashlib.sha256(row.data).hexdigest()])
        for (_, name), ref in adapter._refs.items():
            rows.append([layout, "ref", name, bytes(ref.pointer).hex(), str(ref.deleted)])
    return sorted(rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("seeds", type=int, nargs="+")
    args = parser.parse_args(argv)
    histories = {str(seed): digests(seed) for seed in args.seeds}
    print(json.dumps({"kernel": describe(), "histories": histories}))


if __name__ == "__main__":
    main()
