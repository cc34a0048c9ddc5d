"""A thread-safe in-memory backend: the reference for how small an adapter can be."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Sequence

from backends.inmemory.capabilities import CAPABILITIES
from persist_spi.adapter import BackendAdapter, Capabilities, InsertAndSwap, ObjRow, RefRow, target_row
from persist_spi.layouts import LOCHKIT_LAYOUT, StorageLayout
from persist_spi.live_objects import LiveObjectStore, LiveObjRow, as_row

#: Where a subclass changes how rows are stored or read, the core hands it rows only.
_ROW_METHODS = ("fetch_objs", "insert_objs", "insert_objs_and_update_ref", "scan_objs", "update_ref")


class InMemoryAdapter(BackendAdapter, LiveObjectStore):
    """Two dicts behind one lock. Every operation is atomic because it runs entirely under the lock.

    Objects the core stores are kept as themselves (:mod:`persist_spi.live_objects`), as Nessie's
    in-memory backend keeps them; rows given to :meth:`insert_objs` are kept as rows. Either is
    answered as a row by :meth:`fetch_objs` and :meth:`scan_objs`, serialised by the layout's codec."""

    name = "inmemory"

    def __init__(self, label: str = "", layout: StorageLayout = LOCHKIT_LAYOUT) -> None:
        self._label = label
        # Rows are kept as given, so either layout's bytes fit; the layout is chosen for what the
        # core writes (a quick way to run the suites over Nessie's object codec).
        self._layout = layout
        self._refs: dict[tuple[str, str], RefRow] = {}
        self._objs: dict[tuple[str, bytes], ObjRow | LiveObjRow] = {}
        self._lock = threading.Lock()

    @property
    def capabilities(self) -> Capabilities:
        return CAPABILITIES

    @property
    def layout(self) -> StorageLayout:
        return self._layout

    @property
    def address(self) -> str:
        return f"inmemory://{self._label}"

    # --- references ------------------------------------------------------------------------------

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        with self._lock:
            return [self._refs.get((repo, n)) for n in names]

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        with self._lock:
            return self._refs.setdefault((repo, row.name), row) is row

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        with self._lock:
            return self._update_ref_locked(repo, expected, new)

    def _update_ref_locked(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        key = (repo, expected.name)
        current = self._refs.get(key)
        if current is None or not current.same_condition(expected):
            return False
        self._refs[key] = new
        return True

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        key = (repo, expected.name)
        with self._lock:
            current = self._refs.get(key)
            if current is None or not current.same_condition(expected):
                return False
            del self._refs[key]
            return True

    # --- objects ---------------------------------------------------------------------------------

    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        codec = self._layout.codec
        return [None if kept is None else as_row(kept, codec) for kept in self.fetch_live_objs(repo, ids)]

    def fetch_live_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | LiveObjRow | None]:
        with self._lock:
            return [self._objs.get((repo, i)) for i in ids]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        return self.insert_live_objs(repo, rows)

    def insert_live_objs(self, repo: str, rows: Sequence[ObjRow | LiveObjRow]) -> list[bool]:
        with self._lock:
            return self._insert_locked(repo, rows)

    def insert_live_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow | LiveObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        target = target_row(rows, new.pointer)  # before writing: a call without its target is refused
        with self._lock:
            inserted = self._insert_locked(repo, rows)
            if not inserted[target]:
                return InsertAndSwap(inserted, None)
            return InsertAndSwap(inserted, self._update_ref_locked(repo, expected, new))

    @property
    def takes_live_objects(self) -> bool:
        cls = type(self)
        return all(getattr(cls, name) is getattr(InMemoryAdapter, name) for name in _ROW_METHODS)

    def _insert_locked(self, repo: str, rows: Sequence[ObjRow | LiveObjRow]) -> list[bool]:
        result = []
        for row in rows:
            key = (repo, row.obj_id)
            current = self._objs.get(key)
            if current is None:
                self._objs[key] = row
                result.append(True)
            else:
                self._objs[key] = current._replace(referenced=row.referenced)
                result.append(False)
        return result

    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        with self._lock:
            for row in rows:
                self._objs[(repo, row.obj_id)] = row

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        with self._lock:
            for i in ids:
                self._objs.pop((repo, i), None)

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        key = (repo, obj_id)
        with self._lock:
            current = self._objs.get(key)
            if current is None or current.referenced != referenced:
                return False
            del self._objs[key]
            return True

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        key = (repo, row.obj_id)
        with self._lock:
            current = self._objs.get(key)
            if current is None or (current.obj_type, current.version_token) != (
                expected_type,
                expected_token,
            ):
                return False
            self._objs[key] = row
            return True

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        key = (repo, obj_id)
        with self._lock:
            current = self._objs.get(key)
            if current is None or (current.obj_type, current.version_token) != (
                expected_type,
                expected_token,
            ):
                return False
            del self._objs[key]
            return True

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        with self._lock:  # a snapshot, so concurrent writers cannot break the iteration
            kept = [
                r
                for (rp, _), r in self._objs.items()
                if rp == repo and (types is None or r.obj_type in types)
            ]
        codec = self._layout.codec
        for row in kept:
            yield as_row(row, codec)

    def erase_repositories(self, repos: Collection[str]) -> None:
        wanted = set(repos)
        with self._lock:
            for refs_key in [k for k in self._refs if k[0] in wanted]:
                del self._refs[refs_key]
            for obj_key in [k for k in self._objs if k[0] in wanted]:
                del self._objs[obj_key]

    def list_repositories(self) -> Iterator[str]:
        with self._lock:
            repos = {repo for repo, _ in self._refs}
        yield from repos
