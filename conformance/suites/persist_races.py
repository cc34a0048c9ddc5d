"""Races that hit their window on every run: all writers make the same call at the same moment,
round after round (see :mod:`conformance.lockstep`), and every round must have exactly one winner.

These catch check-then-act adapters (read, then write in a second statement) for each atomic
operation of the contract: insert-if-absent of objects and references, compare-and-swap of
references (pointer update, mark deleted, purge), conditional updates of objects, and the delete
that garbage collection relies on.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from conformance.harness import BackendUnderTest, PersistFactory
from conformance.lockstep import race_in_lockstep, source_files_of
from conformance.rows import obj_row, ref_row
from conformance.samples import VersionedTestObj
from conformance.suites.base import ConformanceSuite
from conformance.suites.cache import skip_if_references_cached
from persist_spi.adapter import BackendAdapter, ObjRow
from persist_spi.errors import ObjNotFound, RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.ids import ObjId, random_obj_id
from persist_spi.objs import Obj, unique_id_for_uuid
from persist_spi.persist import Persist
from persist_spi.references import Reference


def _one_winner_per_round(results: list[list[bool]], what: str) -> None:
    for r, outcomes in enumerate(results):
        winners = sum(outcomes)
        assert winners == 1, (
            f"round {r}: {winners} of {len(outcomes)} racing {what} succeeded, not exactly one"
        )


class PersistRacesSuite(ConformanceSuite):
    area = "persist.races"
    #: Writers per round, and rounds per test. With turns taken inside the adapter's code, an
    #: in-process check-then-act adapter loses nearly every round; rounds are for adapters whose
    #: window sits in a database driver or server, where only timing decides. The self-check
    #: repeats its racy mutants to show that this fails them on every run.
    workers: ClassVar[int] = 6
    rounds: ClassVar[int] = 20

    def _race(
        self, backend: BackendUnderTest, act: Callable[[int, int], Any], **hooks: Any
    ) -> list[list[Any]]:
        files = source_files_of(backend.adapter, stop_at=BackendAdapter)
        return race_in_lockstep(self.workers, self.rounds, act, turns_in=files, **hooks)

    def test_racing_stores_of_one_new_object_have_one_winner_every_round(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        """Claiming a content id relies on this: only one store of a new id returns True."""
        claims = [unique_id_for_uuid("race", uuid.uuid4()) for _ in range(self.rounds)]
        results = self._race(lochkit_backend, lambda r, _: persist.store_obj(claims[r]))
        _one_winner_per_round(results, "stores of one new object")
        assert persist.fetch_objs([c.id for c in claims]) == claims

    def test_racing_creations_of_one_reference_have_one_winner_every_round(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        pointers = [[random_obj_id() for _ in range(self.workers)] for _ in range(self.rounds)]

        def create(r: int, w: int) -> bool:
            try:
                persist.add_reference(Reference(f"refs/heads/race-{r}", pointers[r][w]))
            except RefAlreadyExists:
                return False
            return True

        results = self._race(lochkit_backend, create)
        _one_winner_per_round(results, "creations of one reference")
        stored = persist.fetch_references([f"refs/heads/race-{r}" for r in range(self.rounds)])
        for r, ref in enumerate(stored):
            assert ref is not None
            assert ref.pointer == pointers[r][results[r].index(True)], (
                f"round {r}: a loser's pointer is stored"
            )

    def test_racing_pointer_updates_from_one_state_have_one_winner_every_round(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        """Every worker read the same current row; exactly one compare-and-swap from it may succeed."""
        skip_if_references_cached(persist, "workers must see each other's updates at once")
        name = "refs/heads/contended"
        persist.add_reference(Reference(name, random_obj_id()))
        seen: dict[int, Reference] = {}
        proposals = [[random_obj_id() for _ in range(self.workers)] for _ in range(self.rounds)]

        def read(r: int, w: int) -> None:
            current = persist.fetch_reference(name)
            assert current is not None
            seen[w] = current

        def update(r: int, w: int) -> bool:
            try:
                persist.update_reference_pointer(seen[w], proposals[r][w])
            except RefConditionFailed:
                return False
            return True

        def check(r: int) -> None:
            current = persist.fetch_reference(name)
            assert current is not None
            winners = [w for w in range(self.workers) if current.pointer == proposals[r][w]]
            assert len(winners) == 1, f"round {r}: the stored pointer is no worker's proposal"

        results = self._race(lochkit_backend, update, read=read, after_round=check)
        _one_winner_per_round(results, "pointer updates")

    def test_racing_mark_deleted_and_purge_have_one_winner_every_round(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        skip_if_references_cached(persist, "workers must see each other's updates at once")
        refs = [Reference(f"refs/heads/doomed-{r}", random_obj_id()) for r in range(self.rounds)]
        for ref in refs:
            persist.add_reference(ref)

        def mark_deleted(r: int, _: int) -> bool:
            try:
                persist.mark_reference_as_deleted(refs[r])
            except RefConditionFailed:
                return False
            return True

        results = self._race(lochkit_backend, mark_deleted)
        _one_winner_per_round(results, "marks as deleted")

        def purge(r: int, _: int) -> bool:
            try:
                persist.purge_reference(refs[r].with_deleted(True))
            except (RefNotFound, RefConditionFailed):
                return False
            return True

        results = self._race(lochkit_backend, purge)
        _one_winner_per_round(results, "purges")
        assert persist.fetch_references([ref.name for ref in refs]) == [None] * self.rounds

    def test_racing_conditional_updates_from_one_version_have_one_winner_every_round(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        first = VersionedTestObj(id=random_obj_id(), version_token="start", some_value="start")
        assert persist.store_obj(first) is True
        seen: dict[int, Obj] = {}

        def proposal(r: int, w: int) -> VersionedTestObj:
            return dataclasses.replace(first, version_token=f"r{r}-w{w}", some_value=f"{r}/{w}")

        def read(r: int, w: int) -> None:
            seen[w] = persist.fetch_obj(first.id)

        def update(r: int, w: int) -> bool:
            return persist.update_conditional(seen[w], proposal(r, w))

        def check(r: int) -> None:
            stored = persist.fetch_obj(first.id)
            assert stored in [proposal(r, w) for w in range(self.workers)], (
                f"round {r}: the stored object is no worker's proposal"
            )

        results = self._race(lochkit_backend, update, read=read, after_round=check)
        _one_winner_per_round(results, "conditional updates")

    def test_a_conditional_update_racing_conditional_deletes_of_one_version_has_one_winner(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        """Every worker acts on the same stored version: one replaces it, the others delete it.
        Exactly one may succeed, and what is stored afterwards must be the winner's doing: the new
        version if the update won, nothing if a delete did (a delete that compared before the
        update and deleted after it removes a version it never saw)."""
        objs = [
            VersionedTestObj(id=random_obj_id(), version_token="start", some_value=str(r))
            for r in range(self.rounds)
        ]
        updated = [dataclasses.replace(obj, version_token="updated", some_value="new") for obj in objs]

        def before(r: int) -> None:
            assert persist.store_obj(objs[r]) is True

        def act(r: int, w: int) -> bool:
            if w == 0:
                return persist.update_conditional(objs[r], updated[r])
            return persist.delete_conditional(objs[r])

        results = self._race(lochkit_backend, act, before_round=before)
        _one_winner_per_round(results, "conditional updates and deletes")
        stored = persist.fetch_objs_if_exist([obj.id for obj in objs])
        for r, found in enumerate(stored):
            expected = updated[r] if results[r][0] else None
            assert found == expected, f"round {r}: the winner was worker {results[r].index(True)}"

    def test_gc_racing_a_rewrite_never_deletes_the_rewritten_object(
        self, persist: Persist, lochkit_backend: BackendUnderTest
    ) -> None:
        """One worker stores the object again while the others delete it with the ``referenced``
        they read. Whichever comes first, the object exists afterwards: a rewrite that lands before
        a delete moves ``referenced``, so the delete must refuse; one that lands after it stores
        the object anew."""
        if persist.is_caching:
            pytest.skip("a caching Persist serves objects with referenced=0; GC reads uncached")
        objs = [unique_id_for_uuid("gc-race", uuid.uuid4()) for _ in range(self.rounds)]
        seen: dict[int, int] = {}

        def before(r: int) -> None:
            assert persist.store_obj(objs[r]) is True

        def read(r: int, w: int) -> None:
            seen[w] = persist.fetch_obj(objs[r].id).referenced

        def act(r: int, w: int) -> bool:
            if w == 0:
                return persist.store_obj(objs[r])
            return persist.delete_with_referenced(objs[r].with_referenced(seen[w]))

        def check(r: int) -> None:
            try:
                persist.fetch_obj(objs[r].id)
            except ObjNotFound:
                raise AssertionError(
                    f"round {r}: the object was deleted although it was stored again during the delete"
                ) from None

        self._race(lochkit_backend, act, before_round=before, read=read, after_round=check)

    @pytest.mark.parametrize(
        "operation",
        [
            "update_ref",
            "delete_ref",
            "update_obj_if_version",
            "delete_obj_if_version",
            "delete_obj_if_referenced",
        ],
    )
    def test_racing_conditional_adapter_calls_from_one_state_have_one_winner_every_round(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory, operation: str
    ) -> None:
        """The same races one level down: every worker calls the adapter's conditional write with
        the same expected state, and exactly one call may report success."""
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        refs = [ref_row(f"refs/heads/r{r}", layout=adapter.layout) for r in range(self.rounds)]
        objs = [
            obj_row(
                VersionedTestObj(id=random_obj_id(), version_token="v0", some_value=str(r)),
                10 + r,
                layout=adapter.layout,
            )
            for r in range(self.rounds)
        ]

        def before(r: int) -> None:
            assert adapter.insert_ref(repo, refs[r]) is True
            assert adapter.insert_objs(repo, [objs[r]]) == [True]

        def proposal(r: int, w: int) -> ObjRow:
            return obj_row(
                VersionedTestObj(id=ObjId(objs[r].obj_id), version_token=f"v{w + 1}", some_value=str(w)),
                99,
                layout=adapter.layout,
            )

        calls: dict[str, Callable[[int, int], bool]] = {
            "update_ref": lambda r, w: adapter.update_ref(
                repo, refs[r], refs[r]._replace(pointer=bytes([w]) * 32)
            ),
            "delete_ref": lambda r, w: adapter.delete_ref(repo, refs[r]),
            "update_obj_if_version": lambda r, w: adapter.update_obj_if_version(
                repo, objs[r].obj_type, "v0", proposal(r, w)
            ),
            "delete_obj_if_version": lambda r, w: adapter.delete_obj_if_version(
                repo, objs[r].obj_id, objs[r].obj_type, "v0"
            ),
            "delete_obj_if_referenced": lambda r, w: adapter.delete_obj_if_referenced(
                repo, objs[r].obj_id, objs[r].referenced
            ),
        }
        results = self._race(lochkit_backend, calls[operation], before_round=before)
        _one_winner_per_round(results, f"{operation} calls")
        if operation == "update_ref":
            stored_refs = adapter.fetch_refs(repo, [ref.name for ref in refs])
            for r, row in enumerate(stored_refs):
                assert row is not None
                assert row.pointer == bytes([results[r].index(True)]) * 32, f"round {r}: a loser's row"
        if operation == "update_obj_if_version":
            stored_objs = adapter.fetch_objs(repo, [obj.obj_id for obj in objs])
            for r, found in enumerate(stored_objs):
                assert found == proposal(r, results[r].index(True)), f"round {r}: a loser's row is stored"
