"""Key-order micro-benchmark: what ordering keys as Nessie does (UTF-16 code units) costs.

Prints nanoseconds per operation for three key sets of the same shape (version-store content
keys): ASCII only; non-ASCII below U+D800 (accents, CJK); and mixed, with characters of
U+E000..U+FFFF and above U+FFFF. The operations are those whose answers depend on key order:
a key comparison, an index lookup (binary search), an index insert, building an index from
unsorted elements (a sort), serialising a modified index, a striped-index lookup, and iterating a
layered index (a merge of two sorted streams).

It uses only index APIs that predate the key-order helpers, so the same script measures a
checkout from before them. Run it with ``python -m loadgen.key_order_bench [--keys N]``. It prints
figures and judges nothing; on a shared machine run it a few times and compare the lowest.
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
import uuid
from collections.abc import Callable, Sequence

from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.indexes.store_index import StoreIndexImpl, index_from_elements
from persist_spi.indexes.striped import StripedIndex
from persist_spi.keys import StoreKey, key

_KEY_SETS = {
    "ascii": ("warehouse", "schema", "table"),
    "bmp-below-d800": ("entrepôt", "schéma", "表"),
    "mixed-planes": ("entrepôt\uff5e", "schéma", "table\U0001f600"),
}


def _keys(words: tuple[str, str, str], n: int, seed: int) -> list[StoreKey]:
    rnd = random.Random(seed)
    db, schema, table = words
    names = {f"{db}_{rnd.randrange(8)}\x01{schema}_{rnd.randrange(40)}\x01{table}_{i:06}" for i in range(n)}
    return [key("M", name, "C") for name in names]


def _element(k: StoreKey, rnd: random.Random) -> IndexElement:
    value = ObjId(rnd.randbytes(32))
    return IndexElement(k, CommitOp(Action.ADD, 1, value, uuid.UUID(int=rnd.getrandbits(128))))


def _ns_per(op: Callable[[], object], count: int, seconds: float) -> float:
    """Best of several rounds of ``op`` (which does ``count`` operations), in ns per operation."""
    best = float("inf")
    deadline = time.perf_counter() + seconds
    while True:
        start = time.perf_counter_ns()
        op()
        best = min(best, (time.perf_counter_ns() - start) / count)
        if time.perf_counter() > deadline:
            return best


def measure(words: tuple[str, str, str], n: int, seconds: float) -> dict[str, float]:
    rnd = random.Random(7)
    keys = _keys(words, n, 1)
    elements = [_element(k, rnd) for k in keys]
    index = index_from_elements(elements)
    index.serialize()
    probes = rnd.sample(keys, min(len(keys), 300))  # short rounds: the best of many shrugs off load
    ordered = index.keys()
    pairs = list(itertools.pairwise(ordered))[:300]
    stripes = StripedIndex(index.divide(8))
    layered = LayeredIndex(index_from_elements(elements[0::2]), index_from_elements(elements[1::2]))
    fresh = [_element(k, rnd) for k in _keys(words, 5000, 2)]

    def compare() -> None:
        for a, b in pairs:
            _ = a < b

    def lookups(target: StoreIndexImpl | StripedIndex) -> Callable[[], None]:
        def run() -> None:
            for k in probes:
                target.get(k)

        return run

    def inserts() -> None:  # the copy costs about as much as 20 inserts
        copy = index.copy()
        for e in fresh:
            copy.add(e)

    def serialise_modified() -> None:
        copy = index.copy()
        copy.add(fresh[0])
        copy.serialize()

    return {
        "compare (plain str <, for scale)": _ns_per(compare, len(pairs), seconds),
        "index lookup": _ns_per(lookups(index), len(probes), seconds),
        "striped lookup (8 stripes)": _ns_per(lookups(stripes), len(probes), seconds),
        "insert (per key)": _ns_per(inserts, len(fresh), seconds),
        "build from unsorted (per key)": _ns_per(
            lambda: index_from_elements(elements), len(elements), seconds
        ),
        "serialise modified index (per key)": _ns_per(serialise_modified, len(keys), seconds),
        "layered iterate (per key)": _ns_per(lambda: sum(1 for _ in layered.iterate()), len(keys), seconds),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keys", type=int, default=20_000, help="keys per index (default 20000)")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per figure (default 1)")
    args = parser.parse_args(argv)
    results = {name: measure(words, args.keys, args.seconds) for name, words in _KEY_SETS.items()}
    operations = list(next(iter(results.values())))
    width = max(map(len, operations))
    print(f"ns per operation, {args.keys} keys per index (best of rounds over {args.seconds} s)")
    print(f"{'operation':<{width}}  " + "  ".join(f"{name:>15}" for name in results))
    for op in operations:
        print(f"{op:<{width}}  " + "  ".join(f"{results[name][op]:>15.0f}" for name in results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
