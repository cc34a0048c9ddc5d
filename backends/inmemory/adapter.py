"""A thread-safe in-memory backend: the reference for how small an adapter can be."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Sequence

from backends.inmemory.capabilities import CAPABILITIES
from persist_spi.adapter import BackendAdapter, Capabilities, ObjRow, RefRow
from persist_spi.layouts import LOCHKIT_LAYOUT, StorageLayout


class InMemoryAdapter(BackendAdapter):
    """Two dicts behind one lock. Every operation is atomic because it runs entirely under the lock."""

    name = "inmemory"

    def __init__(self, label: str = "", layout: StorageLayout = LOCHKIT_LAYOUT) -> None:
        self._label = label
        # Rows are kept as given, so either layout's bytes fit; the layout is chosen for what the
        # core writes (a quick way to run the suites over Nessie's object codec).
        self._layout = layout
        self._refs: dict[tuple[str, str], RefRow] = {}
        self._objs: dict[tuple[str, bytes], ObjRow] = {}
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
        key = (repo, expected.name)
        with self._lock:
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
        with self._lock:
            return [self._objs.get((repo, i)) for i in ids]

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        result = []
        with self._lock:
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
            rows = [
                r
                for (rp, _), r in self._objs.items()
                if rp == repo and (types is None or r.obj_type in types)
            ]
        yield from rows

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
