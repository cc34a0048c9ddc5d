"""Broken adapters derived from the in-memory adapter: bugs of dict-and-lock code.

Each class overrides one method of :class:`~backends.inmemory.adapter.InMemoryAdapter` with one mistake.
The check-then-act ones take the lock twice, the way code does that reads first and writes later:
correct in every single-threaded test, wrong only when another writer slips in between.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from conformance.mutants.base import BrokenInMemory
from persist_spi.adapter import InsertAndSwap, ObjRow, RefRow
from persist_spi.live_objects import as_row


class InsertReportsNotCreated(BrokenInMemory):
    """insert_objs stores new rows but reports every row as already present (False)."""

    mutant = "insert-reports-not-created"
    guarantee = "insert-if-absent"
    method = "insert_objs"

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        super().insert_objs(repo, rows)
        return [False] * len(rows)


class InsertResultsNotPositional(BrokenInMemory):
    """insert_objs returns the outcomes grouped (inserted rows first), not in request order."""

    mutant = "insert-results-grouped"
    guarantee = "positional bulk calls"
    method = "insert_objs"

    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        return sorted(super().insert_objs(repo, rows), reverse=True)


class FetchRefsDatabaseOrder(BrokenInMemory):
    """fetch_refs returns the rows it found in storage order and drops missing names."""

    mutant = "fetch-refs-storage-order"
    guarantee = "positional bulk calls"
    method = "fetch_refs"

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        wanted = set(names)
        with self._lock:
            return [row for (r, n), row in self._refs.items() if r == repo and n in wanted]


class FetchRefsAnyRepository(BrokenInMemory):
    """fetch_refs looks a name up in every repository and returns the first row it meets."""

    mutant = "fetch-refs-any-repository"
    guarantee = "repository isolation"
    method = "fetch_refs"

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        with self._lock:
            own = [self._refs.get((repo, n)) for n in names]
            return [
                row if row is not None else next((v for (_, k), v in self._refs.items() if k == n), None)
                for n, row in zip(names, own, strict=True)
            ]


class FetchRefsDeadlocks(BrokenInMemory):
    """fetch_refs holds the adapter's lock and looks each name up through a helper that takes the
    same lock again: a ``threading.Lock`` is not reentrant, so the first call waits for itself
    forever."""

    mutant = "fetch-refs-deadlocks"
    guarantee = "calls return"
    method = "fetch_refs"

    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        with self._lock:
            return [self._fetch_one_ref(repo, name) for name in names]

    def _fetch_one_ref(self, repo: str, name: str) -> RefRow | None:
        with self._lock:
            return self._refs.get((repo, name))


class InsertRefCheckThenAct(BrokenInMemory):
    """insert_ref checks whether the name exists, then writes in a second step."""

    mutant = "insert-ref-check-then-act"
    guarantee = "insert-if-absent"
    method = "insert_ref"
    racy = True

    def insert_ref(self, repo: str, row: RefRow) -> bool:
        key = (repo, row.name)
        with self._lock:
            exists = key in self._refs
        if exists:
            return False
        with self._lock:
            self._refs[key] = row
        return True


class CasReadThenWrite(BrokenInMemory):
    """update_ref reads and compares the row, then writes it in a second step: not atomic."""

    mutant = "cas-read-then-write"
    guarantee = "atomic compare-and-swap"
    method = "update_ref"
    racy = True

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        key = (repo, expected.name)
        with self._lock:
            current = self._refs.get(key)
        if current is None or not current.same_condition(expected):
            return False
        with self._lock:
            self._refs[key] = new
        return True


class CasCreatesMissingReference(BrokenInMemory):
    """update_ref of a name that does not exist creates the row instead of failing."""

    mutant = "cas-creates-missing"
    guarantee = "atomic compare-and-swap"
    method = "update_ref"

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        with self._lock:
            if (repo, expected.name) not in self._refs:
                self._refs[(repo, expected.name)] = new
                return True
        return super().update_ref(repo, expected, new)


class CasIgnoresDeletedFlag(BrokenInMemory):
    """update_ref compares pointer, creation time and extended info, but not the deleted flag."""

    mutant = "cas-ignores-deleted-flag"
    guarantee = "mark-deleted"
    method = "update_ref"

    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        key = (repo, expected.name)
        with self._lock:
            current = self._refs.get(key)
            if current is None or not current._replace(deleted=expected.deleted).same_condition(expected):
                return False
            self._refs[key] = new
            return True


class PurgeReadThenDelete(BrokenInMemory):
    """delete_ref reads and compares the row, then deletes it in a second step."""

    mutant = "purge-read-then-delete"
    guarantee = "atomic compare-and-swap"
    method = "delete_ref"
    racy = True

    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        key = (repo, expected.name)
        with self._lock:
            current = self._refs.get(key)
        if current is None or not current.same_condition(expected):
            return False
        with self._lock:
            self._refs.pop(key, None)
        return True


class DeleteObjsFirstOnly(BrokenInMemory):
    """delete_objs returns from inside its loop: only the first id is deleted."""

    mutant = "delete-objs-first-only"
    guarantee = "deletes"
    method = "delete_objs"

    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        with self._lock:
            for i in ids:
                self._objs.pop((repo, i), None)
                return


class GcDeleteIgnoresReferenced(BrokenInMemory):
    """delete_obj_if_referenced deletes whatever the stored ``referenced`` is."""

    mutant = "gc-delete-ignores-referenced"
    guarantee = "the referenced timestamp"
    method = "delete_obj_if_referenced"

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        with self._lock:
            return self._objs.pop((repo, obj_id), None) is not None


class GcDeleteReadThenDelete(BrokenInMemory):
    """delete_obj_if_referenced compares ``referenced``, then deletes in a second step, so an
    object written again in between is deleted anyway."""

    mutant = "gc-delete-read-then-delete"
    guarantee = "the referenced timestamp"
    method = "delete_obj_if_referenced"
    racy = True

    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        key = (repo, obj_id)
        with self._lock:
            current = self._objs.get(key)
        if current is None or current.referenced != referenced:
            return False
        with self._lock:
            self._objs.pop(key, None)
        return True


class ConditionalUpdateCreatesMissing(BrokenInMemory):
    """update_obj_if_version writes the object when none is stored, as an upsert would."""

    mutant = "conditional-update-creates-missing"
    guarantee = "conditional updates"
    method = "update_obj_if_version"

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        with self._lock:
            if (repo, row.obj_id) not in self._objs:
                self._objs[(repo, row.obj_id)] = row
                return True
        return super().update_obj_if_version(repo, expected_type, expected_token, row)


class ConditionalUpdateReadThenWrite(BrokenInMemory):
    """update_obj_if_version compares type and token, then writes in a second step."""

    mutant = "conditional-update-read-then-write"
    guarantee = "conditional updates"
    method = "update_obj_if_version"
    racy = True

    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        key = (repo, row.obj_id)
        with self._lock:
            current = self._objs.get(key)
        if current is None or (current.obj_type, current.version_token) != (expected_type, expected_token):
            return False
        with self._lock:
            self._objs[key] = row
        return True


class ConditionalDeleteIgnoresType(BrokenInMemory):
    """delete_obj_if_version compares the version token but not the stored type."""

    mutant = "conditional-delete-ignores-type"
    guarantee = "conditional updates"
    method = "delete_obj_if_version"

    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        key = (repo, obj_id)
        with self._lock:
            current = self._objs.get(key)
            if current is None or current.version_token != expected_token:
                return False
            del self._objs[key]
            return True


class ScanByRepositoryPrefix(BrokenInMemory):
    """scan_objs matches repositories by prefix (as a key-prefix scan without a delimiter would):
    scanning ``a`` also returns the objects of ``ab``."""

    mutant = "scan-by-repository-prefix"
    guarantee = "scans"
    method = "scan_objs"

    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        with self._lock:
            rows = [
                r
                for (rp, _), r in self._objs.items()
                if rp.startswith(repo) and (types is None or r.obj_type in types)
            ]
        for row in rows:
            yield as_row(row, self.layout.codec)


class EraseFirstRepositoryOnly(BrokenInMemory):
    """erase_repositories erases the first repository of the collection and ignores the others."""

    mutant = "erase-first-repository-only"
    guarantee = "erase"
    method = "erase_repositories"

    def erase_repositories(self, repos: Collection[str]) -> None:
        super().erase_repositories(list(repos)[:1])


class ListsRepositoriesPerReference(BrokenInMemory):
    """list_repositories yields a repository once per reference it holds (a listing that forgot
    DISTINCT)."""

    mutant = "lists-repositories-per-reference"
    guarantee = "scans"
    method = "list_repositories"

    def list_repositories(self) -> Iterator[str]:
        with self._lock:
            repos = [repo for repo, _ in self._refs]
        yield from repos


class StoreAndSwapOntoExisting(BrokenInMemory):
    """insert_objs_and_update_ref swaps the reference even when the row it points at existed
    already: a commit whose id collides with another object would end up on the branch."""

    mutant = "store-and-swap-onto-existing"
    guarantee = "insert-if-absent"
    method = "insert_objs_and_update_ref"

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        return InsertAndSwap(self.insert_objs(repo, rows), self.update_ref(repo, expected, new))


class StoreAndSwapBeforeStoring(BrokenInMemory):
    """insert_objs_and_update_ref swaps first and stores the rows only when the swap succeeded: a
    failed swap leaves the rows unstored, and for a moment the reference points at nothing."""

    mutant = "store-and-swap-before-storing"
    guarantee = "atomic compare-and-swap"
    method = "insert_objs_and_update_ref"

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        if not self.update_ref(repo, expected, new):
            return InsertAndSwap([False] * len(rows), False)
        return InsertAndSwap(self.insert_objs(repo, rows), True)
