"""The DynamoDB adapter: items in two tables, conditional writes for every compare-and-swap.

Tables and keys: :mod:`backends.dynamodb.schema`; item layout: :mod:`backends.dynamodb.statements`
(lochkit's own, or Nessie's DynamoDB2 one with ``layout=nessie``).

Reads are strongly consistent in both layouts (Nessie's are not): the core reads what it has just
written (a commit's objects, a reference it moved) and compares reference rows it has read, so an
eventually consistent read would report objects missing and fail compare-and-swaps spuriously. How
an item is read leaves its bytes unchanged, so this costs read capacity, not compatibility.

Conditional writes go through a client without SDK retries (see ``DynamoSettings.client``) and
repeat only what DynamoDB refused before applying (throttling); reads and unconditional batch
writes are idempotent and keep botocore's standard retries.
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
    REJECTED_CODES,
    error_code,
    is_item_too_large,
    translate,
)
from backends.dynamodb.schema import setup_schema
from backends.dynamodb.statements import ITEM_FORMATS, Item, key_of
from persist_spi.adapter import BackendAdapter, Capabilities, ObjRow, RefRow
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
        for attempt in range(_CAS_ATTEMPTS):
            try:
                method(**request)
                return True
            except ClientError as e:
                code = error_code(e)
                if code == CONDITION_FAILED:
                    return False
                if row is not None and is_item_too_large(e):
                    raise self._items.too_large(row) from e
                if code not in REJECTED_CODES or attempt == _CAS_ATTEMPTS - 1:
                    raise self._mapped(e, action, write=True) from e
            except (EndpointConnectionError, ConnectTimeoutError) as e:
                # Not connected means not sent: repeating cannot apply the write twice.
                if attempt == _CAS_ATTEMPTS - 1:
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
