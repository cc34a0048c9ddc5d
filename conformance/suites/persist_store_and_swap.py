"""Storing objects and moving a reference in one call: ``BackendAdapter.insert_objs_and_update_ref``
and ``Persist.store_objs_and_update_reference``, the commit path's one round trip.

Every adapter answers these: the contract's default is the two calls one after the other, and an
adapter that does both in one statement or transaction must answer exactly like it. The inserts
answer as ``insert_objs`` does, the swap as ``update_ref`` does, and the reference moves only onto
a row the call itself inserted.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

from conformance.harness import BackendUnderTest, PersistFactory
from conformance.lockstep import race_in_lockstep, source_files_of
from conformance.rows import ref_row, tag_rows, with_other_data
from conformance.suites.base import ConformanceSuite
from persist_spi.adapter import BackendAdapter, InsertAndSwap, ObjRow, RefRow
from persist_spi.errors import InputError, RefConditionFailed, RefNotFound
from persist_spi.ids import random_obj_id
from persist_spi.objs import tag_obj
from persist_spi.persist import Persist
from persist_spi.references import Reference


def _moved_to(row: RefRow, target: ObjRow, created: int | None = None) -> RefRow:
    """``row`` pointing at ``target`` (the history is not part of the condition; it is kept)."""
    return row._replace(
        pointer=target.obj_id,
        created_at_micros=row.created_at_micros if created is None else created,
    )


class PersistStoreAndSwapSuite(ConformanceSuite):
    area = "persist.store-and-swap"
    #: Writers per round and rounds of the race (as the other races of the contract).
    workers: ClassVar[int] = 6
    rounds: ClassVar[int] = 10

    def test_stores_every_row_then_swaps(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        other_repo = persist_factory().repository_id
        rows = tag_rows(3, "swap", layout=adapter.layout)
        current = ref_row("refs/heads/main", history=2, layout=adapter.layout)
        assert adapter.insert_ref(repo, current)
        new = _moved_to(current, rows[1])
        assert adapter.insert_objs_and_update_ref(repo, rows, current, new) == InsertAndSwap(
            [True, True, True], True
        )
        assert adapter.fetch_refs(repo, [current.name]) == [new]
        assert adapter.fetch_objs(repo, [r.obj_id for r in rows]) == rows
        assert adapter.fetch_objs(other_repo, [r.obj_id for r in rows]) == [None] * 3

    def test_a_failed_condition_stores_the_rows_and_answers_like_update_ref(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        current = ref_row("refs/heads/main", layout=adapter.layout)
        assert adapter.insert_ref(repo, current)
        stale = current._replace(pointer=bytes(random_obj_id()))
        rows = tag_rows(2, "stale", layout=adapter.layout)
        outcome = adapter.insert_objs_and_update_ref(repo, rows, stale, _moved_to(stale, rows[0]))
        assert outcome == InsertAndSwap([True, True], False)
        assert adapter.fetch_refs(repo, [current.name]) == [current], "a failed swap moved the reference"
        assert adapter.fetch_objs(repo, [r.obj_id for r in rows]) == rows

        missing = ref_row("refs/heads/missing", layout=adapter.layout)
        more = tag_rows(1, "missing", layout=adapter.layout)
        outcome = adapter.insert_objs_and_update_ref(repo, more, missing, _moved_to(missing, more[0]))
        assert outcome == InsertAndSwap([True], False)
        assert adapter.fetch_refs(repo, [missing.name]) == [None], "a swap created a reference"

    def test_existing_rows_answer_false_keep_their_bytes_and_take_the_new_referenced(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        rows = tag_rows(3, "existing", layout=adapter.layout)
        first = [with_other_data(rows[0], "first", adapter.layout), rows[2]]
        assert adapter.insert_objs(repo, first) == [True, True]
        current = ref_row("refs/heads/main", layout=adapter.layout)
        assert adapter.insert_ref(repo, current)
        again = [r._replace(referenced=99_000 + i) for i, r in enumerate(rows)]
        new = _moved_to(current, again[1])
        assert adapter.insert_objs_and_update_ref(repo, again, current, new) == InsertAndSwap(
            [False, True, False], True
        )
        assert adapter.fetch_objs(repo, [r.obj_id for r in rows]) == [
            first[0]._replace(referenced=99_000),
            again[1],
            rows[2]._replace(referenced=99_002),
        ]
        assert adapter.fetch_refs(repo, [current.name]) == [new]

    def test_never_swaps_onto_a_row_that_existed(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """An existing row with the target's id may be another object (a colliding id): only the
        caller can tell, so the call leaves the reference alone and says so (``swapped`` None)."""
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        rows = tag_rows(2, "collision", layout=adapter.layout)
        colliding = with_other_data(rows[1], "another object", adapter.layout)
        assert adapter.insert_objs(repo, [colliding]) == [True]
        current = ref_row("refs/heads/main", layout=adapter.layout)
        assert adapter.insert_ref(repo, current)
        outcome = adapter.insert_objs_and_update_ref(repo, rows, current, _moved_to(current, rows[1]))
        assert outcome == InsertAndSwap([True, False], None)
        assert adapter.fetch_refs(repo, [current.name]) == [current], "moved onto a row it did not write"
        kept = colliding._replace(referenced=rows[1].referenced)
        assert adapter.fetch_objs(repo, [rows[1].obj_id]) == [kept]

    def test_a_target_outside_the_rows_is_an_argument_error(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        current = ref_row("refs/heads/main", layout=adapter.layout)
        assert adapter.insert_ref(repo, current)
        rows = tag_rows(1, "outside", layout=adapter.layout)
        new = current._replace(pointer=bytes(random_obj_id()))
        with pytest.raises(InputError, match="new pointer"):
            adapter.insert_objs_and_update_ref(repo, rows, current, new)
        assert adapter.fetch_refs(repo, [current.name]) == [current]

    def test_racing_store_and_swaps_from_one_state_have_one_winner_every_round(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """Every worker read the same row and stores its own commit-like rows: every row is
        stored, and exactly one reference swap succeeds (onto that worker's target)."""
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        refs = [ref_row(f"refs/heads/race-{r}", layout=adapter.layout) for r in range(self.rounds)]
        for row in refs:
            assert adapter.insert_ref(repo, row)
        rows = [
            [tag_rows(2, f"race {r} {w}", layout=adapter.layout) for w in range(self.workers)]
            for r in range(self.rounds)
        ]

        def act(r: int, w: int) -> InsertAndSwap:
            mine = rows[r][w]
            return adapter.insert_objs_and_update_ref(repo, mine, refs[r], _moved_to(refs[r], mine[1]))

        files = source_files_of(adapter, stop_at=BackendAdapter)
        results = race_in_lockstep(self.workers, self.rounds, act, turns_in=files)
        for r, outcomes in enumerate(results):
            assert [o.inserted for o in outcomes] == [[True, True]] * self.workers, f"round {r}"
            winners = [w for w, o in enumerate(outcomes) if o.swapped]
            assert len(winners) == 1, f"round {r}: {len(winners)} swaps succeeded, not exactly one"
            assert adapter.fetch_refs(repo, [refs[r].name])[0] == _moved_to(refs[r], rows[r][winners[0]][1])
            every = [row for mine in rows[r] for row in mine]
            assert adapter.fetch_objs(repo, [row.obj_id for row in every]) == every

    # --- the Persist call over it ----------------------------------------------------------------

    def test_persist_stores_then_moves_and_raises_like_a_pointer_update(self, persist: Persist) -> None:
        ref = persist.add_reference(Reference("refs/heads/main", random_obj_id(), created_at_micros=5))
        objs = [tag_obj("persist a"), tag_obj("persist b")]
        outcome = persist.store_objs_and_update_reference(objs, ref, objs[1].id)
        assert outcome.stored == [True, True]
        assert outcome.moved is not None
        assert outcome.moved.pointer == objs[1].id
        assert persist.fetch_reference_for_update(ref.name) == outcome.moved
        assert persist.fetch_objs([o.id for o in objs]) == objs

        lost = [tag_obj("persist lost")]
        with pytest.raises(RefConditionFailed) as failed:
            persist.store_objs_and_update_reference(lost, ref, lost[0].id)  # ``ref`` is stale now
        assert failed.value.reference == outcome.moved
        assert persist.fetch_objs([lost[0].id]) == lost, "the objects of a lost swap are stored"

        gone = Reference("refs/heads/gone", random_obj_id())
        orphan = [tag_obj("persist orphan")]
        with pytest.raises(RefNotFound):
            persist.store_objs_and_update_reference(orphan, gone, orphan[0].id)

        existing = persist.store_objs_and_update_reference(objs, outcome.moved, objs[0].id)
        assert existing.stored == [False, False]
        assert existing.moved is None, "moved onto an object that existed"
        assert persist.fetch_reference_for_update(ref.name) == outcome.moved

    def test_persist_refuses_a_pointer_that_is_not_stored_with_it(self, persist: Persist) -> None:
        ref = persist.add_reference(Reference("refs/heads/main", random_obj_id()))
        with pytest.raises(InputError, match="new pointer"):
            persist.store_objs_and_update_reference([tag_obj("x")], ref, random_obj_id())
        assert persist.fetch_reference_for_update(ref.name) == ref
