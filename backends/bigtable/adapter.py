"""The Bigtable adapter: one row per reference or object, check-and-mutate for every
compare-and-swap.

Row keys and cells: :mod:`backends.bigtable.statements`; requests: :mod:`backends.bigtable.messages`;
tables: :mod:`backends.bigtable.schema`. Every conditional write is one CheckAndMutateRow, whose
check and mutation Bigtable applies atomically on the row: a reference's compare-and-swap compares
its identity cell, an insert-if-absent writes the object when the row has no type cell and
otherwise only refreshes its referenced time. A repository is one key range: it is scanned with a
range read and erased with DropRowRange by prefix.

Reads and unconditional writes (upserts, deletes) are idempotent and are repeated after a transient
failure; a conditional write is repeated only when it was never sent (no connection), since a
repeated check-and-mutate whose first attempt applied would report "condition failed".
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

from google.api_core import exceptions
from google.cloud.bigtable_admin_v2.types import DropRowRangeRequest
from google.cloud.bigtable_v2.types import Mutation, RowFilter, RowSet

from backends.bigtable import messages, statements
from backends.bigtable.capabilities import CAPABILITIES, MUTATIONS_PER_REQUEST
from backends.bigtable.config import BigtableSettings
from backends.bigtable.errors import not_connected, translate
from backends.bigtable.schema import setup_schema, verify_schema
from backends.bigtable.statements import OBJS_FAMILY, REFS_FAMILY, cell_format
from persist_spi.adapter import BackendAdapter, Capabilities, ObjRow, RefRow
from persist_spi.errors import UnknownOperationResult
from persist_spi.layouts import StorageLayout

T = TypeVar("T")

#: Attempts of an idempotent request after transient failures, and of a write never sent.
_ATTEMPTS: Final = 4
_TRANSIENT: Final = (
    exceptions.ServiceUnavailable,
    exceptions.DeadlineExceeded,
    exceptions.Aborted,
    exceptions.InternalServerError,
)
#: Row keys per ReadRows request.
_KEYS_PER_READ: Final = 500
#: Bytes of values per MutateRows request (Bigtable accepts up to 256 MB; smaller keeps retries cheap).
_BYTES_PER_MUTATE: Final = 32 * 1024 * 1024
#: Check-and-mutate requests of one insert_objs call in flight (each row is its own request).
_INSERT_PARALLELISM: Final = 4
#: gRPC status codes of a MutateRows entry worth repeating.
_RETRYABLE_CODES: Final = frozenset({4, 10, 13, 14})  # DEADLINE_EXCEEDED, ABORTED, INTERNAL, UNAVAILABLE


class BigtableAdapter(BackendAdapter):
    name = "bigtable"

    def __init__(self, settings: BigtableSettings) -> None:
        self._settings = settings
        self._refs = settings.table_path(settings.refs_table)
        self._objs = settings.table_path(settings.objs_table)
        self._profile = settings.app_profile or ""
        self._cells = cell_format(settings.layout)
        self._data, self._admin = settings.clients()
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
        return self._cells.repository_id_problem(repo)

    def setup_schema(self) -> str:
        return self._call(
            "create or check the lochkit tables",
            lambda: setup_schema(self._data, self._admin, self._settings),
            write=True,
        )

    def verify_schema(self) -> str:
        return self._call(
            "check the lochkit tables", lambda: verify_schema(self._data, self._admin, self._settings)
        )

    def server_version(self) -> str | None:
        if self._settings.emulator is None:
            return "Cloud Bigtable"
        return None  # the emulator reports no version; the provisioner knows it

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self._data.transport.close()
        self._admin.transport.close()

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        prefix = self._cells.repo_prefix(repo)
        keys = [prefix + n.encode() for n in names]
        found = self._fetch(self._refs, keys, messages.family(REFS_FAMILY), "read references")
        return [
            None if (row := found.get(k)) is None else self._cells.ref_row(n, row)
            for n, k in zip(names, keys, strict=True)
        ]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        matched = self._check_and_mutate(
            "create a reference",
            self._refs,
            self._cells.repo_prefix(repo) + row.name.encode(),
            messages.column(REFS_FAMILY, self._cells.ref_marker),
            otherwise=self._set_cells(REFS_FAMILY, self._cells.ref_cells(row)),
        )
        return not matched

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        return self._ref_swap(
            "update a reference", repo, expected, self._set_cells(REFS_FAMILY, self._cells.ref_cells(new))
        )

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        return self._ref_swap("delete a reference", repo, expected, [messages.delete_row()])

    def _ref_swap(self, action: str, repo: str, expected: RefRow, mutations: Sequence[Mutation]) -> bool:
        """A reference's compare-and-swap. Bigtable compares one cell's whole value; in Nessie's
        layout that is the whole ``ReferenceProto``, history included. The first attempt expects
        the value lochkit writes for ``expected``. If it fails, the stored row is read: when it
        holds what ``expected`` is compared on (pointer, deleted, created, extended info) but its
        value differs (another history, or bytes another writer encoded otherwise), the swap is
        repeated on exactly the value read, so a concurrent change still makes it fail."""
        key = self._cells.repo_prefix(repo) + expected.name.encode()
        qualifier, value = self._cells.ref_condition(expected)
        if value is not None and self._ref_check_and_mutate(action, key, qualifier, value, mutations):
            return True
        cells = self._fetch(self._refs, [key], messages.family(REFS_FAMILY), "read references").get(key)
        if cells is None or not self._cells.ref_row(expected.name, cells).same_condition(expected):
            return False
        stored = cells.get(qualifier)
        if stored is None or stored == value:
            return False  # the value just failed: it changed in between
        return self._ref_check_and_mutate(action, key, qualifier, stored, mutations)

    def _ref_check_and_mutate(
        self, action: str, key: bytes, qualifier: bytes, value: bytes, mutations: Sequence[Mutation]
    ) -> bool:
        predicate = messages.column_equals(REFS_FAMILY, qualifier, value)
        return self._check_and_mutate(action, self._refs, key, predicate, matched=mutations)

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        prefix = self._cells.repo_prefix(repo)
        keys = [prefix + i for i in ids]
        found = self._fetch(self._objs, keys, messages.family(OBJS_FAMILY), "read objects")
        return [
            None if (row := found.get(k)) is None else self._cells.obj_row(i, row)
            for i, k in zip(ids, keys, strict=True)
        ]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        prefix = self._cells.repo_prefix(repo)
        if len(rows) <= 1:
            return [self._insert_one(prefix, row) for row in rows]
        return list(self._executor().map(lambda row: self._insert_one(prefix, row), rows))

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        prefix = self._cells.repo_prefix(repo)
        entries = [(prefix + row.obj_id, self._replace_row(row)) for row in rows]
        self._mutate_rows(self._objs, entries, "upsert objects")

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        prefix = self._cells.repo_prefix(repo)
        self._mutate_rows(self._objs, [(prefix + i, [messages.delete_row()]) for i in ids], "delete objects")

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        return self._check_and_mutate(
            "delete an object by its referenced time",
            self._objs,
            self._cells.repo_prefix(repo) + obj_id,
            messages.column_equals(OBJS_FAMILY, statements.REFERENCED, self._cells.referenced(referenced)),
            matched=[messages.delete_row()],
        )

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        return self._check_and_mutate(
            "update an object conditionally",
            self._objs,
            self._cells.repo_prefix(repo) + row.obj_id,
            self._version_predicate(expected_type, expected_token),
            matched=self._replace_row(row),
        )

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        return self._check_and_mutate(
            "delete an object conditionally",
            self._objs,
            self._cells.repo_prefix(repo) + obj_id,
            self._version_predicate(expected_type, expected_token),
            matched=[messages.delete_row()],
        )

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        """One range read of the repository's key range; types are filtered here (a type is a
        cell of the row, and a row filter cannot keep a whole row for the value of one cell)."""
        prefix = self._cells.repo_prefix(repo)
        rows = messages.prefix_range(prefix, statements.prefix_end(prefix))
        for key, row in self._stream(self._objs, rows, messages.family(OBJS_FAMILY), "scan objects"):
            obj_id = key[len(prefix) :]
            if not types or self._cells.obj_type(obj_id, row) in types:
                yield self._cells.obj_row(obj_id, row)

    def list_repositories(self) -> Iterator[str]:
        """A keys-only read of the references table; the objects table is not read."""
        seen: set[str] = set()
        for key, _ in self._stream(self._refs, RowSet(), messages.keys_only(), "list repositories"):
            repo = self._cells.repo_of_key(key)
            if repo is not None and repo not in seen:
                seen.add(repo)
                yield repo

    def erase_repositories(self, repos: Collection[str]) -> None:
        for repo in sorted(set(repos)):
            for table in (self._refs, self._objs):
                self._drop_prefix(table, self._cells.repo_prefix(repo))

    # --- plumbing --------------------------------------------------------------------------------

    def _drop_prefix(self, table: str, prefix: bytes) -> None:
        request = DropRowRangeRequest(name=table, row_key_prefix=prefix)
        self._idempotent(
            "erase repositories",
            lambda: self._admin.drop_row_range(request=request, retry=None, timeout=self._settings.timeout),
            write=True,
        )

    def _insert_one(self, prefix: bytes, row: ObjRow) -> bool:
        """Write the object if its row has no type cell, else only refresh its referenced time:
        one atomic request, so a concurrent delete cannot leave a stub without data."""
        matched = self._check_and_mutate(
            "insert an object",
            self._objs,
            prefix + row.obj_id,
            messages.column(OBJS_FAMILY, self._cells.obj_marker),
            matched=self._set_cells(
                OBJS_FAMILY, {statements.REFERENCED: self._cells.referenced(row.referenced)}
            ),
            otherwise=self._set_cells(OBJS_FAMILY, self._cells.obj_cells(row)),
        )
        return not matched

    def _set_cells(self, family: str, cells: dict[bytes, bytes]) -> list[Mutation]:
        return messages.set_cells(family, cells, self._cells.cell_timestamp_micros)

    def _replace_row(self, row: ObjRow) -> list[Mutation]:
        cells = self._cells.obj_cells(row)
        return messages.replace_row(OBJS_FAMILY, cells, self._cells.cell_timestamp_micros)

    def _version_predicate(self, obj_type: str, token: str) -> RowFilter:
        """The object's row holds this type and version token (one cell or two, by layout)."""
        first, *rest = (
            messages.column_equals(OBJS_FAMILY, qualifier, value)
            for qualifier, value in self._cells.version_condition(obj_type, token)
        )
        for predicate in rest:
            first = messages.both(first, predicate)
        return first

    def _check_and_mutate(
        self,
        action: str,
        table: str,
        key: bytes,
        predicate: RowFilter,
        *,
        matched: Sequence[Mutation] = (),
        otherwise: Sequence[Mutation] = (),
    ) -> bool:
        """True if the predicate matched the row (and ``matched`` was applied), else False."""
        request = messages.check_and_mutate(
            table, key, predicate, self._profile, matched=matched, otherwise=otherwise
        )
        for attempt in range(_ATTEMPTS):
            try:
                response = self._data.check_and_mutate_row(
                    request=request, retry=None, timeout=self._settings.timeout
                )
                return bool(response.predicate_matched)
            except exceptions.GoogleAPICallError as e:
                if not not_connected(e) or attempt == _ATTEMPTS - 1:
                    raise translate(e, self.address, action, write=True) from e
            time.sleep(0.1 * 2**attempt)
        raise AssertionError("unreachable")

    def _fetch(
        self, table: str, keys: Sequence[bytes], row_filter: RowFilter, action: str
    ) -> dict[bytes, Any]:
        found: dict[bytes, Any] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _KEYS_PER_READ):
            rows = messages.row_set(unique[start : start + _KEYS_PER_READ])
            request = messages.read(table, rows, row_filter, self._profile)
            found.update(
                self._idempotent(
                    action,
                    lambda r=request: dict(  # type: ignore[misc]
                        messages.merge_rows(
                            self._data.read_rows(request=r, retry=None, timeout=self._settings.timeout)
                        )
                    ),
                )
            )
        return found

    def _stream(
        self, table: str, rows: RowSet, row_filter: RowFilter, action: str
    ) -> Iterator[tuple[bytes, dict[bytes, bytes]]]:
        """Rows of a range read as they arrive (no deadline: a scan may be long)."""
        request = messages.read(table, rows, row_filter, self._profile)
        try:
            yield from messages.merge_rows(self._data.read_rows(request=request, retry=None, timeout=None))
        except exceptions.GoogleAPICallError as e:
            raise translate(e, self.address, action, write=False) from e

    def _mutate_rows(
        self, table: str, entries: Sequence[tuple[bytes, Sequence[Mutation]]], action: str
    ) -> None:
        for batch in _batches(entries):
            pending = list(batch)
            for attempt in range(_ATTEMPTS):
                request = messages.mutate_rows(table, pending, self._profile)
                failed = self._idempotent(action, lambda r=request: self._failed_entries(r), write=True)  # type: ignore[misc]
                retry = [pending[i] for i, code, _ in failed if code in _RETRYABLE_CODES]
                if len(retry) < len(failed) or (retry and attempt == _ATTEMPTS - 1):
                    _, code, message = failed[0]
                    raise UnknownOperationResult(
                        f"bigtable at {self.address}: {action}: {len(failed)} of {len(pending)} rows "
                        f"failed (gRPC status {code}: {message[:200]}); the others were written. Retry"
                    )
                if not retry:
                    break
                pending = retry
                time.sleep(0.1 * 2**attempt)

    def _failed_entries(self, request: Any) -> list[tuple[int, int, str]]:
        failed = []
        for response in self._data.mutate_rows(request=request, retry=None, timeout=self._settings.timeout):
            for entry in response.entries:
                if entry.status.code != 0:
                    failed.append((entry.index, entry.status.code, entry.status.message))
        return failed

    def _idempotent(self, action: str, call: Callable[[], T], *, write: bool = False) -> T:
        for attempt in range(_ATTEMPTS):
            try:
                return call()
            except _TRANSIENT as e:
                if attempt == _ATTEMPTS - 1:
                    raise translate(e, self.address, action, write=write) from e
            except exceptions.GoogleAPICallError as e:
                raise translate(e, self.address, action, write=write) from e
            time.sleep(0.1 * 2**attempt)
        raise AssertionError("unreachable")

    def _call(self, action: str, call: Callable[[], T], *, write: bool = False) -> T:
        try:
            return call()
        except exceptions.GoogleAPIError as e:
            raise translate(e, self.address, action, write=write) from e

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(_INSERT_PARALLELISM, thread_name_prefix="lochkit-bigtable")
            return self._pool


def _batches(
    entries: Sequence[tuple[bytes, Sequence[Mutation]]],
) -> Iterator[list[tuple[bytes, Sequence[Mutation]]]]:
    """Entries in requests within Bigtable's mutation count and a byte budget (a single entry
    larger than the budget goes alone)."""
    batch: list[tuple[bytes, Sequence[Mutation]]] = []
    size = count = 0
    for key, mutations in entries:
        entry_size = len(key) + sum(len(m.set_cell.value) for m in mutations)
        if batch and (
            size + entry_size > _BYTES_PER_MUTATE or count + len(mutations) > MUTATIONS_PER_REQUEST
        ):
            yield batch
            batch, size, count = [], 0, 0
        batch.append((key, mutations))
        size += entry_size
        count += len(mutations)
    if batch:
        yield batch
