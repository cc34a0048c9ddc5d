"""BatchGetItem and BatchWriteItem with their API limits, and with the partial results re-requested.

DynamoDB may answer a batch call with only part of the work done: ``UnprocessedKeys`` (throttling,
or the 16 MB response cap, which 100 items of up to 400 KiB exceed) and ``UnprocessedItems``
(throttling). Nessie's DynamoDB2 backend ignored both, so objects could look missing and upserts
could silently not happen. Here the rest is asked for again with bounded, jittered backoff, and a
clear error is raised when the bound is reached.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TypeVar

from persist_spi.errors import UnknownOperationResult

#: AWS API limits.
BATCH_GET_LIMIT: Final = 100
BATCH_WRITE_LIMIT: Final = 25
#: Rounds in a row that may return nothing before giving up (about 6 s of backoff in total).
MAX_IDLE_ROUNDS: Final = 10
_BASE_DELAY = 0.025
_MAX_DELAY = 1.0

T = TypeVar("T")
Item = dict[str, Any]
Sleep = Callable[[float], None]


def chunked(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def backoff_delay(idle_rounds: int) -> float:
    """Jittered exponential delay; jitter keeps concurrent callers from retrying in lockstep."""
    return float(min(_MAX_DELAY, _BASE_DELAY * 2.0**idle_rounds) * random.uniform(0.5, 1.0))


def batch_get(
    client: Any,
    table: str,
    keys: Sequence[Item],
    *,
    address: str,
    sleep: Sleep = time.sleep,
) -> dict[str, Item]:
    """Items by their ``k`` string, read with ConsistentRead; absent keys are simply not in the result."""
    found: dict[str, Item] = {}
    for chunk in chunked(keys, BATCH_GET_LIMIT):
        pending: dict[str, Any] = {table: {"Keys": list(chunk), "ConsistentRead": True}}
        _drain(
            lambda request: _get_round(client, table, request, found),
            pending,
            sleep,
            lambda left: f"{len(left.get(table, {}).get('Keys', []))} keys of {table} still unprocessed",
            address,
            "read",
        )
    return found


def batch_write(
    client: Any,
    table: str,
    requests: Sequence[Item],
    *,
    address: str,
    sleep: Sleep = time.sleep,
) -> None:
    """Unconditional ``PutRequest``/``DeleteRequest`` entries in groups of 25 (BatchWriteItem cannot
    carry conditions, so only idempotent writes go through here)."""
    for group in chunked(requests, BATCH_WRITE_LIMIT):
        pending: dict[str, Any] = {table: list(group)}
        _drain(
            lambda request: _write_round(client, request),
            pending,
            sleep,
            lambda left: f"{len(left.get(table, []))} writes to {table} still unprocessed",
            address,
            "write",
        )


def _get_round(client: Any, table: str, request: dict[str, Any], found: dict[str, Item]) -> tuple[bool, Any]:
    response = client.batch_get_item(RequestItems=request)
    items = response.get("Responses", {}).get(table, [])
    for item in items:
        found[item["k"]["S"]] = item
    return bool(items), response.get("UnprocessedKeys") or {}


def _write_round(client: Any, request: dict[str, Any]) -> tuple[bool, Any]:
    sent = sum(len(v) for v in request.values())
    left = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    return sum(len(v) for v in left.values()) < sent, left


def _drain(
    one_round: Callable[[dict[str, Any]], tuple[bool, Any]],
    pending: dict[str, Any],
    sleep: Sleep,
    describe: Callable[[dict[str, Any]], str],
    address: str,
    kind: str,
) -> None:
    """Repeat ``one_round`` on what is left until nothing is; give up after MAX_IDLE_ROUNDS rounds
    in a row without progress. Progress resets the count (the 16 MB cap is not throttling)."""
    idle = 0
    while True:
        progressed, left = one_round(pending)
        if not left:
            return
        idle = 0 if progressed else idle + 1
        if idle > MAX_IDLE_ROUNDS:
            partly = "part of the writes may have been applied" if kind == "write" else "nothing was returned"
            raise UnknownOperationResult(
                f"dynamodb at {address}: batch {kind}: {describe(left)} after {MAX_IDLE_ROUNDS} retries "
                f"without progress (the table is throttled); {partly}. Retry later or raise the "
                "table's capacity"
            )
        sleep(backoff_delay(idle))
        pending = left
