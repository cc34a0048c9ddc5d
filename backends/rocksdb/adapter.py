"""RocksDB backend (embedded, durable) through rocksdict.

Layout: one RocksDB directory with two column families, for references and objects (lochkit's
``refs``/``objs``, or Nessie's ``nessie_refs``/``nessie_objects`` with ``layout=nessie``; keys and
values in :mod:`backends.rocksdb.statements`). A row key starts with a prefix of its repository id,
so that each repository's rows are contiguous: scans seek to the prefix instead of reading the whole
family, and erasing a repository is one range delete.

RocksDB has no compare-and-swap, so conditional writes take an in-process lock (striped by row key)
around read-compare-write. RocksDB itself allows only one process per directory (it holds a LOCK
file), so in-process locks are enough.
"""

from __future__ import annotations

import gc
import shutil
import threading
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from backends.rocksdb.capabilities import CAPABILITIES
from backends.rocksdb.schema import refuse_foreign_families
from backends.rocksdb.statements import prefix_end, row_format
from persist_spi.adapter import BackendAdapter, Capabilities, InsertAndSwap, ObjRow, RefRow, target_row
from persist_spi.errors import BackendUnavailable
from persist_spi.layouts import LOCHKIT_LAYOUT, NESSIE_LAYOUT, StorageLayout

if TYPE_CHECKING:
    from rocksdict import WriteBatch

_LOCK_STRIPES = 64
_FETCH_CHUNK = 1000
#: What Nessie's column families get: RocksJava's ``optimizeUniversalStyleCompaction()`` without
#: an argument means a memtable budget of 512 MiB.
_UNIVERSAL_MEMTABLE_BUDGET = 512 * 1024 * 1024


class RocksDBAdapter(BackendAdapter):
    name = "rocksdb"

    def __init__(
        self,
        path: Path,
        *,
        sync_writes: bool = False,
        remove_on_close: bool = False,
        existing: bool = False,
        read_only: bool = False,
        layout: StorageLayout = LOCHKIT_LAYOUT,
    ) -> None:
        """``existing``: open a store that is there, creating nothing (see
        :func:`backends.rocksdb.schema.store_problem`); ``read_only``: also without RocksDB's lock,
        so a store another process writes to can be read, and with writes refused; ``layout``:
        lochkit's own keys and values, or Nessie's (:mod:`backends.rocksdb.statements`)."""
        from rocksdict import AccessType, BlockBasedOptions, Options, Rdict, WriteBatch, WriteOptions

        self._path = path
        self._remove_on_close = remove_on_close
        self._layout = layout
        self._rows = rows = row_format(layout)
        refuse_foreign_families(path, rows)
        nessie = layout is NESSIE_LAYOUT

        def family_options() -> Options:
            family = Options(raw_mode=True)
            if nessie:  # as Nessie opens every column family, ``default`` included
                family.optimize_universal_style_compaction(_UNIVERSAL_MEMTABLE_BUDGET)
            return family

        options = family_options()
        options.create_if_missing(not existing)
        options.create_missing_column_families(not existing)
        # Every commit stores its objects insert-if-absent, so it first looks up ids that are
        # almost never there. Bloom filters (in the tables and the memtable) answer "absent"
        # without reading blocks: a multi-get of a commit's two new ids took 53 us without them
        # and 18 us with them, over 60,000 objects.
        objs_options = family_options()
        tables = BlockBasedOptions()
        tables.set_bloom_filter(10, False)
        objs_options.set_block_based_table_factory(tables)
        objs_options.set_memtable_prefix_bloom_ratio(0.1)
        objs_options.set_memtable_whole_key_filtering(True)
        families = {rows.refs_family: family_options(), rows.objs_family: objs_options}
        if not existing:
            path.mkdir(parents=True, exist_ok=True)
        access = AccessType.read_only() if read_only else AccessType.read_write()
        try:
            self._db = Rdict(str(path), options=options, column_families=families, access_type=access)
        except Exception as e:
            message = str(e)
            if "lock" in message.lower():
                raise BackendUnavailable(
                    "rocksdb",
                    str(path),
                    "the database directory is locked by another process or handle",
                    "RocksDB allows one process per directory: stop the other user or pick another path",
                ) from e
            raise BackendUnavailable(
                "rocksdb",
                str(path),
                f"cannot open the database ({message})",
                "check the path and its permissions",
            ) from e
        write_options = WriteOptions()
        write_options.sync = sync_writes
        self._db.set_write_options(write_options)
        self._refs = self._db.get_column_family(rows.refs_family)
        self._objs = self._db.get_column_family(rows.objs_family)
        self._objs_handle = self._db.get_column_family_handle(rows.objs_family)
        self._refs_handle = self._db.get_column_family_handle(rows.refs_family)
        self._write_batch = WriteBatch
        self._locks = [threading.Lock() for _ in range(_LOCK_STRIPES)]
        self._closed = False

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    @property
    def layout(self) -> StorageLayout:
        return self._layout

    def repository_id_problem(self, repo: str) -> str | None:
        return self._rows.repository_id_problem(repo)

    @property
    def address(self) -> str:
        query = "" if self._layout is LOCHKIT_LAYOUT else f"?layout={self._layout.name}"
        return f"rocksdb://{self._path}{query}"

    def setup_schema(self) -> str:
        return f"rocksdb at {self._path}: column families {self._rows.refs_family}, {self._rows.objs_family}"

    def server_version(self) -> str | None:
        from importlib.metadata import version

        return f"rocksdict {version('rocksdict')}"

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # RocksDB keeps its directory lock while any column-family handle is alive: drop them first.
        del self._refs, self._objs, self._objs_handle, self._refs_handle
        gc.collect()
        self._db.close()
        del self._db
        gc.collect()
        if self._remove_on_close:
            shutil.rmtree(self._path, ignore_errors=True)

    def _stripe(self, key: bytes) -> int:
        return hash(key) % _LOCK_STRIPES

    def _lock(self, key: bytes) -> threading.Lock:
        return self._locks[self._stripe(key)]

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        prefix = self._rows.repo_prefix(repo)
        raws: list[bytes | None] = self._refs.get([prefix + n.encode("utf-8") for n in names])  # type: ignore[assignment]
        return [
            None if raw is None else self._rows.unpack_ref(n, raw) for n, raw in zip(names, raws, strict=True)
        ]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        key = self._rows.repo_prefix(repo) + row.name.encode("utf-8")
        with self._lock(key):
            if self._refs.get(key) is not None:
                return False
            self._refs[key] = self._rows.pack_ref(row)
            return True

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        key = self._rows.repo_prefix(repo) + expected.name.encode("utf-8")
        with self._lock(key):
            raw = self._refs.get(key)
            if raw is None or not self._rows.unpack_ref(expected.name, raw).same_condition(expected):
                return False
            self._refs[key] = self._rows.pack_ref(new)
            return True

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        key = self._rows.repo_prefix(repo) + expected.name.encode("utf-8")
        with self._lock(key):
            raw = self._refs.get(key)
            if raw is None or not self._rows.unpack_ref(expected.name, raw).same_condition(expected):
                return False
            del self._refs[key]
            return True

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        prefix = self._rows.repo_prefix(repo)
        result: list[ObjRow | None] = []
        for start in range(0, len(ids), _FETCH_CHUNK):
            chunk = ids[start : start + _FETCH_CHUNK]
            raws: list[bytes | None] = self._objs.get([prefix + i for i in chunk])  # type: ignore[assignment]
            result.extend(
                None if raw is None else self._rows.unpack_obj(i, raw)
                for i, raw in zip(chunk, raws, strict=True)
            )
        return result

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        """One multi-get and one write batch for all rows, under the lock stripes of all their
        keys (taken in stripe order, so concurrent callers cannot deadlock)."""
        prefix = self._rows.repo_prefix(repo)
        keys = [prefix + row.obj_id for row in rows]
        locks = self._locked(keys)
        try:
            batch = self._write_batch(raw_mode=True)
            inserted = self._stage_objs(batch, keys, rows)
            self._db.write(batch)
            return inserted
        finally:
            for lock in locks:
                lock.release()

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        """The objects and the swap in one write batch, under the lock stripes of every key they
        touch. RocksDB applies a batch whole or not at all, so the reference and the objects it
        needs become visible together (never the reference alone), a failed swap writes the
        objects alone, and a commit costs one write (one WAL sync with ``sync=true``), not two."""
        target = target_row(rows, new.pointer)  # before writing: a call without its target is refused
        prefix = self._rows.repo_prefix(repo)
        keys = [prefix + row.obj_id for row in rows]
        ref_key = prefix + expected.name.encode("utf-8")
        locks = self._locked([*keys, ref_key])
        try:
            batch = self._write_batch(raw_mode=True)
            inserted = self._stage_objs(batch, keys, rows)
            swapped: bool | None = None
            if inserted[target]:
                raw = self._refs.get(ref_key)
                swapped = raw is not None and self._rows.unpack_ref(expected.name, raw).same_condition(
                    expected
                )
                if swapped:
                    batch.put(ref_key, self._rows.pack_ref(new), self._refs_handle)
            self._db.write(batch)
            return InsertAndSwap(inserted, swapped)
        finally:
            for lock in locks:
                lock.release()

    def _locked(self, keys: Sequence[bytes]) -> list[threading.Lock]:
        """The lock stripes of ``keys``, acquired in stripe order (so concurrent callers cannot
        deadlock); the caller releases them."""
        locks = [self._locks[i] for i in sorted({self._stripe(k) for k in keys})]
        for lock in locks:
            lock.acquire()
        return locks

    def _stage_objs(self, batch: WriteBatch, keys: Sequence[bytes], rows: Sequence[ObjRow]) -> list[bool]:
        """Put every row into ``batch`` insert-if-absent (under the caller's locks): a new row as
        given, an existing one with only its ``referenced`` renewed. Answers which were new."""
        raws: list[bytes | None] = self._objs.get(keys)  # type: ignore[assignment,arg-type]
        inserted = []
        for key, row, raw in zip(keys, rows, raws, strict=True):
            if raw is None:
                batch.put(key, self._rows.pack_obj(row), self._objs_handle)
                inserted.append(True)
            else:
                # The stored object stays; only its ``referenced`` takes the new value.
                batch.put(key, self._rows.restamped_obj(row.obj_id, raw, row.referenced), self._objs_handle)
                inserted.append(False)
        return inserted

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        prefix = self._rows.repo_prefix(repo)
        for row in rows:
            key = prefix + row.obj_id
            with self._lock(key):
                self._objs[key] = self._rows.pack_obj(row)

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        prefix = self._rows.repo_prefix(repo)
        for i in ids:
            key = prefix + i
            with self._lock(key):
                del self._objs[key]

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        key = self._rows.repo_prefix(repo) + obj_id
        with self._lock(key):
            raw = self._objs.get(key)
            if raw is None or self._rows.obj_version(raw).referenced != referenced:
                return False
            del self._objs[key]
            return True

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        key = self._rows.repo_prefix(repo) + row.obj_id
        with self._lock(key):
            raw = self._objs.get(key)
            if raw is None:
                return False
            current = self._rows.obj_version(raw)
            if (current.obj_type, current.version_token) != (expected_type, expected_token):
                return False
            self._objs[key] = self._rows.pack_obj(row)
            return True

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        key = self._rows.repo_prefix(repo) + obj_id
        with self._lock(key):
            raw = self._objs.get(key)
            if raw is None:
                return False
            current = self._rows.obj_version(raw)
            if (current.obj_type, current.version_token) != (expected_type, expected_token):
                return False
            del self._objs[key]
            return True

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        prefix = self._rows.repo_prefix(repo)
        start = len(prefix)
        key: bytes
        raw: bytes
        for key, raw in self._objs.items(from_key=prefix):  # type: ignore[assignment]
            if not key.startswith(prefix):
                break
            row = self._rows.unpack_obj_of_types(key[start:], raw, types)
            if row is not None:
                yield row

    def erase_repositories(self, repos: Collection[str]) -> None:
        for repo in repos:
            prefix = self._rows.repo_prefix(repo)
            end = prefix_end(prefix)
            self._refs.delete_range(prefix, end)
            self._objs.delete_range(prefix, end)

    def list_repositories(self) -> Iterator[str]:
        # Keys start with a prefix of the repository id: read one key, then seek past every key of
        # that repository, so the walk costs one seek per repository, not one per reference.
        cursor = self._refs.iter()
        cursor.seek_to_first()
        while cursor.valid():
            key: bytes = cursor.key()
            repo = self._rows.repo_of_key(key)
            yield repo
            cursor.seek(prefix_end(self._rows.repo_prefix(repo)))
