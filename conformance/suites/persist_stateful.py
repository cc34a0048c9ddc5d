"""A Hypothesis state machine drives the backend and :class:`~conformance.model.PersistModel` with
the same random operations and compares them after every step."""

from __future__ import annotations

from contextlib import closing
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from conformance.harness import PersistFactory
from conformance.model import PersistModel
from conformance.samples import VersionedTestObj, all_samples, changed
from conformance.suites.base import ConformanceSuite
from persist_spi.clock import DEFAULT_CLOCK
from persist_spi.errors import LochkitError, RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.objs import Obj
from persist_spi.persist import Persist
from persist_spi.references import Reference

_SAMPLES = all_samples(seed=99)
#: A small pool, so operations collide on the same ids often.
OBJ_POOL: list[Obj] = [*_SAMPLES[:6], *(changed(o) for o in _SAMPLES[:3]), _SAMPLES[20], _SAMPLES[-1]]
_VERSIONED_ID = ObjId(b"\x42" * 32)
VERSIONS = [VersionedTestObj(id=_VERSIONED_ID, version_token=f"v{i}", some_value=str(i)) for i in range(4)]
REF_NAMES = ["refs/heads/main", "refs/heads/x", "refs/tags/t", "int/refs"]
POINTERS = [EMPTY_OBJ_ID, *(ObjId(bytes([i]) * 32) for i in range(1, 5))]
ALL_IDS: list[ObjId | None] = [*sorted({o.id for o in OBJ_POOL} | {_VERSIONED_ID}), None, EMPTY_OBJ_ID]

objs = st.sampled_from(OBJ_POOL)
versions = st.sampled_from(VERSIONS)
names = st.sampled_from(REF_NAMES)
pointers = st.sampled_from(POINTERS)


def _outcome(call: Any) -> tuple[str, Any]:
    """Result or exception, in a comparable form (exceptions by type and carried row)."""
    try:
        return ("ok", call())
    except (RefAlreadyExists, RefConditionFailed) as e:
        return (type(e).__name__, e.reference)
    except RefNotFound as e:
        return ("RefNotFound", e.name)
    except LochkitError as e:
        return (type(e).__name__, str(e))


def _history(ref: Reference | None) -> list[ObjId] | None:
    return None if ref is None else [p.pointer for p in ref.previous_pointers]


def make_machine(persist_factory: PersistFactory) -> type[RuleBasedStateMachine]:
    class PersistMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.persist: Persist = persist_factory()
            self.model = PersistModel(self.persist.config)

        # --- objects --------------------------------------------------------------------------

        @rule(batch=st.lists(st.one_of(st.none(), objs), min_size=1, max_size=4))
        def store_objs(self, batch: list[Obj | None]) -> None:
            # Duplicate ids in one call are left to the core; the model states "first one wins".
            assert self.persist.store_objs(batch) == self.model.store(_first_per_id(batch))

        @rule(obj=st.one_of(objs, versions))
        def store_obj(self, obj: Obj) -> None:
            assert self.persist.store_obj(obj) == self.model.store([obj])[0]

        @rule(batch=st.lists(objs, min_size=1, max_size=3, unique_by=lambda o: o.id))
        def upsert_objs(self, batch: list[Obj]) -> None:
            self.persist.upsert_objs(batch)
            self.model.upsert(batch)

        @rule(ids=st.lists(st.sampled_from(ALL_IDS), max_size=3))
        def delete_objs(self, ids: list[ObjId | None]) -> None:
            self.persist.delete_objs(ids)
            self.model.delete([i for i in ids if i is not None])

        @rule(expected=versions, new=versions)
        def update_conditional(self, expected: VersionedTestObj, new: VersionedTestObj) -> None:
            if expected.version_token == new.version_token:
                return
            assert self.persist.update_conditional(expected, new) == self.model.update_conditional(
                expected, new
            )

        @rule(obj=versions)
        def delete_conditional(self, obj: VersionedTestObj) -> None:
            assert self.persist.delete_conditional(obj) == self.model.delete_conditional(obj)

        @rule(obj=objs)
        def delete_with_stale_referenced(self, obj: Obj) -> None:
            # A copy that was never read back has referenced=0, which a stored object never has.
            assert self.persist.delete_with_referenced(obj) is False

        # --- references -----------------------------------------------------------------------

        def _ref(self, name: str, use_current: bool, pointer: ObjId) -> Reference:
            current = self.model.refs.get(name)
            if use_current and current is not None:
                return current
            return Reference(name, pointer, False, 7)

        @rule(name=names, pointer=pointers)
        def add_reference(self, name: str, pointer: ObjId) -> None:
            ref = Reference(name, pointer, False, 7)
            assert _outcome(lambda: self.persist.add_reference(ref)) == _outcome(
                lambda: self.model.add_reference(ref)
            )

        @rule(name=names, use_current=st.booleans(), pointer=pointers)
        def mark_deleted(self, name: str, use_current: bool, pointer: ObjId) -> None:
            ref = self._ref(name, use_current, pointer)
            assert _outcome(lambda: self.persist.mark_reference_as_deleted(ref)) == _outcome(
                lambda: self.model.mark_reference_as_deleted(ref)
            )

        @rule(name=names, use_current=st.booleans(), pointer=pointers)
        def purge(self, name: str, use_current: bool, pointer: ObjId) -> None:
            ref = self._ref(name, use_current, pointer)
            assert _outcome(lambda: self.persist.purge_reference(ref)) == _outcome(
                lambda: self.model.purge_reference(ref)
            )

        @rule(name=names, use_current=st.booleans(), pointer=pointers, new_pointer=pointers)
        def update_pointer(self, name: str, use_current: bool, pointer: ObjId, new_pointer: ObjId) -> None:
            ref = self._ref(name, use_current, pointer)
            actual = _outcome(lambda: self.persist.update_reference_pointer(ref, new_pointer))
            expected = _outcome(
                lambda: self.model.update_reference_pointer(ref, new_pointer, DEFAULT_CLOCK.micros())
            )
            assert actual == expected
            if actual[0] == "ok":
                assert _history(actual[1]) == _history(expected[1])

        # --- comparison after every step ------------------------------------------------------

        @invariant()
        def same_objects(self) -> None:
            assert self.persist.fetch_objs_if_exist(ALL_IDS) == self.model.fetch(ALL_IDS)

        @invariant()
        def same_references(self) -> None:
            stored = self.persist.fetch_references(REF_NAMES)
            modeled = [self.model.refs.get(n) for n in REF_NAMES]
            assert stored == modeled
            assert [_history(r) for r in stored] == [_history(r) for r in modeled]

        @invariant()
        def same_scan(self) -> None:
            with closing(self.persist.scan_all_objects()) as scanned:
                assert sorted(o.id for o in scanned) == sorted(self.model.objs)

    return PersistMachine


def _first_per_id(batch: list[Obj | None]) -> list[Obj | None]:
    seen: set[bytes] = set()
    out: list[Obj | None] = []
    for obj in batch:
        if obj is None or obj.id in seen:
            out.append(None)
        else:
            seen.add(obj.id)
            out.append(obj)
    return out


class PersistStatefulSuite(ConformanceSuite):
    area = "persist.stateful"
    #: Tuned so a server backend finishes in seconds; raise it locally to search harder.
    max_examples = 25
    steps = 30

    def test_backend_matches_model_under_random_operations(self, persist_factory: PersistFactory) -> None:
        machine = make_machine(persist_factory)
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=self.max_examples,
                stateful_step_count=self.steps,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                derandomize=False,
            ),
        )
