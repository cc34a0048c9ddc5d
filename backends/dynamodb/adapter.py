"""The DynamoDB adapter: items in two tables, conditional writes for every compare-and-swap.

Tables and keys: :mod:`backends.dynamodb.schema`; item layout: :mod:`backends.dynamodb.statements`
(lochkit's own, or Nessie's DynamoDB2 one with ``layout=nessie``).

Reads are strongly consistent in both layouts (Nessie's are not): the core reads what it has just
written (a commit's objects, a reference it moved) and compares reference rows it has read, so an
eventually consistent read would report objects missing and fail compare-and-swaps spuriously. How
an item is read leaves its bytes unchanged, so this costs read capacity, not compatibility.

Conditional writes go through a client without SDK retries (see ``DynamoSettings.client``) and
repeat only what DynamoDB refused before applying (throttling, a conflicting transaction); reads
and unconditional batch writes are idempotent and keep botocore's standard retries. A commit's
objects and its branch's compare-and-swap are one TransactWriteItems request when they fit one
(:mod:`backends.dynamodb.transaction`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError, ConnectTimeoutError, EndpointConnectionError

from backends.dynamodb.batch import backoff_delay, batch_get, batch_write
from backends.dynamodb.capabilities import CAPABILITIES
from backends.dynamodb.config import DynamoSettings
from backends.dynamodb.errors import (
    CONDITION_FAILED,
    REASON_CONDITION_FAILED,
    REASON_NONE,
    cancellation_reasons,
    error_code,
    is_item_too_large,
    refused_before_applying,
    translate,
)
from backends.dynamodb.schema import setup_schema
from backends.dynamodb.statements import ITEM_FORMATS, Item, key_of
from backends.dynamodb.transaction import TRANSACTION_ACTIONS, fits_one_transaction, put
from persist_spi.adapter import BackendAdapter, Capabilities, InsertAndSwap, ObjRow, RefRow, target_row
from persist_spi.errors import UnknownOperationResult
from persist_spi.layouts import StorageLayout

T = TypeVar("T")

#: Attempts of a conditional write that DynamoDB throttled (refused, so repeating is safe).
_CAS_ATTEMPTS = 6
#: Insert-then-refresh rounds of one object: a concurrent delete between the two calls repeats them.
_INSERT_ROUNDS = 5
#: Conditional PutItems of one insert_objs call in flight (BatchWriteItem cannot carry conditions).
_INSERT_PARALLELISM = 4


class DynamoDBAdapter(BackendAdapter):
    name = "dynamodb"

    def __init__(self, settings: DynamoSettings) -> None:
        self._settings = settings
        self._refs = settings.refs_table
        self._objs = settings.objs_table
        self._items = ITEM_FORMATS[settings.layout.name]
        self._client = settings.client(sdk_retries=True)
        self._cas = settings.client(sdk_retries=False)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    @property
    def address(self) -> str:
        return self._settings.address

    @property
    def layout(self) -> StorageLayout:
        return self._settings.layout

    def repository_id_problem(self, repo: str) -> str | None:
        return self._items.repository_id_problem(repo)

    def setup_schema(self) -> str:
        return self._call(
            "create or check the lochkit tables", lambda: setup_schema(self._client, self._settings)
        )

    def server_version(self) -> str | None:
        if self._settings.endpoint is None:
            return f"Amazon DynamoDB ({self._settings.region or 'default region'})"
        return None  # the DynamoDB API reports no server version; the provisioner knows it

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self._client.close()
        self._cas.close()

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        prefix = self._items.repo_prefix(repo)
        keys = [prefix + n for n in names]
        found = self._batch_get(self._refs, keys, "read references")
        return [
            None if (item := found.get(k)) is None else self._items.ref_row(n, item)
            for n, k in zip(names, keys, strict=True)
        ]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        return self._conditional(
            "create a reference",
            self._cas.put_item,
            TableName=self._refs,
            Item=self._items.ref_item(self._items.repo_prefix(repo), row),
            ConditionExpression=self._items.ref_insert_condition,
        )

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        condition, values = self._items.ref_condition(expected)
        return self._conditional(
            "update a reference",
            self._cas.put_item,
            TableName=self._refs,
            Item=self._items.ref_item(self._items.repo_prefix(repo), new._replace(name=expected.name)),
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
        )

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        condition, values = self._items.ref_condition(expected)
        return self._conditional(
            "delete a reference",
            self._cas.delete_item,
            TableName=self._refs,
            Key=key_of(self._items.repo_prefix(repo) + expected.name),
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
        )

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        prefix = self._items.repo_prefix(repo)
        keys = [prefix + i.hex() for i in ids]
        found = self._batch_get(self._objs, keys, "read objects")
        return [
            None if (item := found.get(k)) is None else self._items.obj_row(i, item)
            for i, k in zip(ids, keys, strict=True)
        ]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        prefix = self._items.repo_prefix(repo)
        if len(rows) <= 1:
            return [self._insert_one(prefix, row) for row in rows]
        return list(self._executor().map(lambda row: self._insert_one(prefix, row), rows))

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        """One TransactWriteItems request: a Put per row under ``insert_objs``' condition and the
        reference's Put under ``update_ref``'s. DynamoDB checks every condition before it writes
        anything, then applies all or nothing, and a cancelled transaction says which failed:

        * only the reference's: nothing was written; the rows are stored as ``insert_objs`` stores
          them (a failed swap leaves the objects), and the swap answers False, or None when the
          target row turns out to exist by then;
        * an object's (it existed): the two steps, which refresh the existing rows' ``referenced``
          and answer row by row.

        The two steps too when the rows do not fit one transaction (actions, bytes), when an id is
        repeated (a transaction may name an item once), when conflicting transactions or
        throttling still cancel it after the retries, and always with ``transactions=false``:
        DynamoDB Local answers a transaction before it is durable, so a server-restart test of
        that emulator commits in two steps (see docs/reliability.md)."""
        target = target_row(rows, new.pointer)
        if (
            self._settings.transactions
            and len(rows) < TRANSACTION_ACTIONS
            and len({r.obj_id for r in rows}) == len(rows)
            and fits_one_transaction(actions := self.store_and_swap_actions(repo, rows, expected, new))
        ):
            reasons = self._transact("store objects and update a reference", actions, rows)
            if not reasons:
                return InsertAndSwap([True] * len(rows), True)
            if reasons == [REASON_NONE] * len(rows) + [REASON_CONDITION_FAILED]:
                inserted = self.insert_objs(repo, rows)
                return InsertAndSwap(inserted, False if inserted[target] else None)
        return super().insert_objs_and_update_ref(repo, rows, expected, new)

    def store_and_swap_actions(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> list[Item]:
        """The transaction of :meth:`insert_objs_and_update_ref`: the rows' Puts, then the reference's."""
        prefix = self._items.repo_prefix(repo)
        condition, values = self._items.ref_condition(expected)
        actions = [
            put(self._objs, self._items.obj_item(prefix, r), self._items.obj_insert_condition) for r in rows
        ]
        moved = self._items.ref_item(prefix, new._replace(name=expected.name))
        return [*actions, put(self._refs, moved, condition, values)]

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        prefix = self._items.repo_prefix(repo)
        requests = [{"PutRequest": {"Item": self._items.obj_item(prefix, row)}} for row in rows]
        largest = max(rows, key=lambda r: len(r.data), default=None)
        self._batch_write(self._objs, requests, "upsert objects", largest)

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        prefix = self._items.repo_prefix(repo)
        unique = dict.fromkeys(prefix + i.hex() for i in ids)  # a batch must not repeat a key
        self._batch_write(
            self._objs, [{"DeleteRequest": {"Key": key_of(k)}} for k in unique], "delete objects"
        )

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        return self._conditional(
            "delete an object by its referenced time",
            self._cas.delete_item,
            TableName=self._objs,
            Key=key_of(self._items.repo_prefix(repo) + obj_id.hex()),
            ConditionExpression="z = :z",
            ExpressionAttributeValues={":z": self._items.number(referenced)},
        )

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        return self._conditional(
            "update an object conditionally",
            self._cas.put_item,
            row=row,
            TableName=self._objs,
            Item=self._items.obj_item(self._items.repo_prefix(repo), row),
            ConditionExpression="y = :y AND V = :v",
            ExpressionAttributeValues={":y": {"S": expected_type}, ":v": {"S": expected_token}},
        )

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        return self._conditional(
            "delete an object conditionally",
            self._cas.delete_item,
            TableName=self._objs,
            Key=key_of(self._items.repo_prefix(repo) + obj_id.hex()),
            ConditionExpression="y = :y AND V = :v",
            ExpressionAttributeValues={":y": {"S": expected_type}, ":v": {"S": expected_token}},
        )

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        """A full-table Scan: DynamoDB applies the repository and type filters after reading every
        item, so the cost grows with the whole table, not with this repository."""
        prefix = self._items.repo_prefix(repo)
        condition = "begins_with(k, :prefix)"
        values: Item = {":prefix": {"S": prefix}}
        if types and len(types) <= 100:  # IN accepts at most 100 operands
            names = [f":t{i}" for i in range(len(types))]
            condition += f" AND y IN ({', '.join(names)})"
            values.update({n: {"S": t} for n, t in zip(names, sorted(types), strict=True)})
        for item in self._scan(
            self._objs, "scan objects", FilterExpression=condition, ExpressionAttributeValues=values
        ):
            if not types or item["y"]["S"] in types:
                yield self._items.obj_row(bytes.fromhex(item["k"]["S"][len(prefix) :]), item)

    def list_repositories(self) -> Iterator[str]:
        """A Scan of the references table (keys only); the objects table is not read."""
        seen: set[str] = set()
        for item in self._scan(self._refs, "list repositories", ProjectionExpression="k"):
            repo = self._items.repo_of_key(item["k"]["S"])
            if repo is not None and repo not in seen:
                seen.add(repo)
                yield repo

    def erase_repositories(self, repos: Collection[str]) -> None:
        wanted = set(repos)
        if not wanted:
            return
        for table in (self._refs, self._objs):
            doomed: list[Item] = []
            for item in self._scan(
                table, "find rows to erase", ProjectionExpression="k", **self._items.prefix_filter(wanted)
            ):
                if self._items.repo_of_key(item["k"]["S"]) in wanted:
                    doomed.append({"DeleteRequest": {"Key": key_of(item["k"]["S"])}})
                if len(doomed) >= 500:  # delete as we go: a repository may be larger than memory
                    self._batch_write(table, doomed, "erase repositories")
                    doomed = []
            self._batch_write(table, doomed, "erase repositories")

    # --- plumbing --------------------------------------------------------------------------------

    def _insert_one(self, prefix: str, row: ObjRow) -> bool:
        key = prefix + row.obj_id.hex()
        for _ in range(_INSERT_ROUNDS):
            if self._conditional(
                "insert an object",
                self._cas.put_item,
                row=row,
                TableName=self._objs,
                Item=self._items.obj_item(prefix, row),
                ConditionExpression=self._items.obj_insert_condition,
            ):
                return True
            # It exists: only refresh its referenced time. The condition keeps a concurrently
            # deleted object from coming back as a stub without data; then we insert again.
            if self._conditional(
                "refresh an object's referenced time",
                self._cas.update_item,
                TableName=self._objs,
                Key=key_of(key),
                UpdateExpression="SET z = :z",
                ConditionExpression=self._items.obj_exists_condition,
                ExpressionAttributeValues={":z": self._items.number(row.referenced)},
            ):
                return False
        raise UnknownOperationResult(
            f"dynamodb at {self.address}: object {row.obj_id.hex()} was deleted by others between "
            f"our insert and refresh {_INSERT_ROUNDS} times in a row; retry"
        )

    def _conditional(
        self, action: str, method: Callable[..., Any], row: ObjRow | None = None, **request: Any
    ) -> bool:
        """Run one conditional write: True if applied, False if its condition did not hold."""

        def send() -> bool:
            method(**request)
            return True

        return self._write(
            action,
            send,
            lambda e, _: False if error_code(e) == CONDITION_FAILED else None,
            [] if row is None else [row],
        )

    def _transact(self, action: str, actions: list[Item], rows: Sequence[ObjRow]) -> list[str]:
        """Send one TransactWriteItems: no reasons when it applied, else the reason of each action
        (``REASON_NONE`` for those that would have applied) of the transaction that DynamoDB
        cancelled, writing nothing. Cancellations by conflicting transactions or throttling are
        sent again; the reasons of the last one are the answer when they outlast the retries."""

        def send() -> list[str]:
            self._cas.transact_write_items(TransactItems=actions)
            return []

        def settle(error: ClientError, last: bool) -> list[str] | None:
            reasons = cancellation_reasons(error)
            return reasons if reasons is not None and (last or not refused_before_applying(error)) else None

        return self._write(action, send, settle, rows)

    def _write(
        self,
        action: str,
        send: Callable[[], T],
        settle: Callable[[ClientError, bool], T | None],
        rows: Sequence[ObjRow],
    ) -> T:
        """Send one write that DynamoDB applies whole or not at all, and send it again when DynamoDB
        refused it before applying it (throttling), ``_CAS_ATTEMPTS`` times at most. ``settle`` turns
        an error that answers the call (a failed condition) into its answer, else None; it is told
        whether the attempt was the last. An item over DynamoDB's size limit is reported as the
        largest of ``rows``, the objects the write carries."""
        for attempt in range(_CAS_ATTEMPTS):
            last = attempt == _CAS_ATTEMPTS - 1
            try:
                return send()
            except ClientError as e:
                answer = settle(e, last)
                if answer is not None:
                    return answer
                if rows and is_item_too_large(e):
                    raise self._items.too_large(max(rows, key=lambda r: len(r.data))) from e
                if not refused_before_applying(e) or last:
                    raise self._mapped(e, action, write=True) from e
            except (EndpointConnectionError, ConnectTimeoutError) as e:
                # Not connected means not sent: repeating cannot apply the write twice.
                if last:
                    raise self._mapped(e, action, write=True) from e
            except BotoCoreError as e:
                raise self._mapped(e, action, write=True) from e
            time.sleep(backoff_delay(attempt))
        raise AssertionError("unreachable")

    def _batch_get(self, table: str, keys: Sequence[str], action: str) -> dict[str, Item]:
        unique = list(dict.fromkeys(keys))  # BatchGetItem rejects repeated keys
        return self._call(
            action, lambda: batch_get(self._client, table, [key_of(k) for k in unique], address=self.address)
        )

    def _batch_write(
        self, table: str, requests: Sequence[Item], action: str, largest: ObjRow | None = None
    ) -> None:
        try:
            self._call(
                action, lambda: batch_write(self._client, table, requests, address=self.address), write=True
            )
        except ClientError as e:
            if largest is not None and is_item_too_large(e):
                raise self._items.too_large(largest) from e
            raise

    def _scan(self, table: str, action: str, **request: Any) -> Iterator[Item]:
        request = {"TableName": table, "ConsistentRead": True, **request}
        while True:
            page = self._call(action, lambda: self._client.scan(**request))
            yield from page.get("Items", [])
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            request["ExclusiveStartKey"] = last

    def _call(self, action: str, call: Callable[[], T], *, write: bool = False) -> T:
        try:
            return call()
        except (ClientError, BotoCoreError) as e:
            mapped = self._mapped(e, action, write=write)
            if mapped is e:
                raise
            raise mapped from e

    def _mapped(self, error: Exception, action: str, *, write: bool) -> Exception:
        return translate(error, self.address, action, write=write)

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(_INSERT_PARALLELISM, thread_name_prefix="lochkit-dynamodb")
            return self._pool
