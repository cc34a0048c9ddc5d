"""Every Persist wrapper forwards the whole Persist contract to the Persist it wraps.

The contract's members are read from the class itself (every public method and property of
``Persist``, abstract or not), so a member the contract gains is checked for every wrapper without
touching this test. The wrapped Persist is a recording fake that plays a cache: it holds an object
``get_immediate`` returns, and ``fetch_references_for_update`` answers a newer row than
``fetch_references``. A wrapper that answers a member on its own, with the contract's default,
answers differently from it and fails here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Generator, Sequence

import pytest

from backends.inmemory import InMemoryBackendFactory
from conformance.faults import FaultInjectingPersist
from conformance.suites.cache import CountingPersist
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.cache import CachingPersist, ObjectCache
from persist_spi.config import StoreConfig
from persist_spi.errors import ObjNotFound
from persist_spi.ids import ObjId
from persist_spi.objs import Obj, TagObj, tag_obj
from persist_spi.objtypes import ObjType
from persist_spi.observing import ObservingPersist
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.overlay import OverlayPersist
from reliability.intercept import InterceptingPersist

OBJ = tag_obj("held")
OTHER = tag_obj("other")
ROW = Reference("refs/heads/main", OBJ.id, created_at_micros=1)
#: The row a cache underneath still serves from ``fetch_references``.
STALE_ROW = Reference("refs/heads/main", OTHER.id, created_at_micros=1)


class RecordingCachePersist(Persist):
    """A fake for unit tests of wrappers: records every member of the contract it is asked for and
    answers like a cache holding ``OBJ`` and a stale copy of ``ROW``. Its derived reads and writes
    are the contract's own (recorded as the primitives they call)."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self._config = StoreConfig(repository_id="fake")

    def _record(self, name: str) -> None:
        self.calls.append(name)

    @property
    def config(self) -> StoreConfig:
        self._record("config")
        return self._config

    @property
    def repository_id(self) -> str:
        self._record("repository_id")
        return self._config.repository_id

    @property
    def is_caching(self) -> bool:
        self._record("is_caching")
        return True

    @property
    def hard_object_size_limit(self) -> int:
        self._record("hard_object_size_limit")
        return 100_000

    # A database may limit indexes below what the configuration and object size limit give.
    @property
    def effective_incremental_index_size_limit(self) -> int:
        self._record("effective_incremental_index_size_limit")
        return 1234

    @property
    def effective_index_segment_size_limit(self) -> int:
        self._record("effective_index_segment_size_limit")
        return 4321

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        self._record("fetch_typed_objs_if_exist")
        return [OBJ if i == OBJ.id and obj_type in (None, OBJ.obj_type) else None for i in ids]

    def get_immediate(self, obj_id: ObjId) -> Obj | None:
        self._record("get_immediate")
        return OBJ if obj_id == OBJ.id else None

    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        self._record("store_objs")
        return [o is not None and o.id != OBJ.id for o in objs]

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        self._record("upsert_objs")

    def delete_objs(self, ids: Sequence[ObjId | None]) -> None:
        self._record("delete_objs")

    def delete_with_referenced(self, obj: Obj) -> bool:
        self._record("delete_with_referenced")
        return True

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        self._record("update_conditional")
        return True

    def delete_conditional(self, obj: Obj) -> bool:
        self._record("delete_conditional")
        return True

    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        self._record("scan_all_objects")
        yield OBJ

    def erase(self) -> None:
        self._record("erase")

    def add_reference(self, ref: Reference) -> Reference:
        self._record("add_reference")
        return ref

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        self._record("mark_reference_as_deleted")
        return ref.with_deleted(True)

    def purge_reference(self, ref: Reference) -> None:
        self._record("purge_reference")

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        self._record("update_reference_pointer")
        return Reference(ref.name, new_pointer, created_at_micros=ref.created_at_micros)

    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        self._record("fetch_references")
        return [STALE_ROW if n == ROW.name else None for n in names]

    def fetch_references_for_update(self, names: Sequence[str | None]) -> list[Reference | None]:
        self._record("fetch_references_for_update")
        return [ROW if n == ROW.name else None for n in names]


def _ignore(*_: object) -> None:
    pass


WRAPPERS: dict[str, Callable[[Persist], Persist]] = {
    "ObservingPersist": lambda d: ObservingPersist(d, _ignore),
    "OverlayPersist": OverlayPersist,
    "CachingPersist": lambda d: CachingPersist(d, ObjectCache()),
    "InterceptingPersist": InterceptingPersist,
    "CountingPersist": CountingPersist,
    "FaultInjectingPersist": FaultInjectingPersist,
}

#: Sample arguments, by the contract's parameter names.
ARGUMENTS: dict[str, object] = {
    "ids": [OBJ.id, None],
    "obj_id": OBJ.id,
    "obj_type": None,
    "types": None,
    "cls": TagObj,
    "objs": [OBJ, OTHER],
    "obj": OBJ,
    "expected": OBJ,
    "new": OTHER,
    "ignore_soft_size_restrictions": False,
    "ref": ROW,
    "new_pointer": OTHER.id,
    "names": [ROW.name, None],
    "name": ROW.name,
}

#: Members a wrapper answers itself, by design, and what it does instead.
OWN_ANSWERS: dict[str, dict[str, str]] = {
    # The cache is the one holding objects: it answers from what it holds, and says it caches.
    "CachingPersist": {"get_immediate": "answer", "is_caching": "answer"},
    # A dry run keeps its writes in memory and refuses what it cannot keep.
    "OverlayPersist": {
        "upsert_objs": "keep",
        "upsert_obj": "keep",
        **dict.fromkeys(
            (
                "delete_objs",
                "delete_obj",
                "delete_with_referenced",
                "update_conditional",
                "delete_conditional",
                "erase",
                "add_reference",
                "mark_reference_as_deleted",
                "purge_reference",
                "update_reference_pointer",
                "store_objs_and_update_reference",
            ),
            "refuse",
        ),
    },
}


def contract_members() -> list[str]:
    """Every public method and property of the Persist contract, abstract or built on others."""
    return sorted(
        name
        for name, member in inspect.getmembers(Persist)
        if not name.startswith("_") and (isinstance(member, property) or inspect.isfunction(member))
    )


def _ask(persist: Persist, name: str) -> object:
    member = inspect.getattr_static(Persist, name)
    if isinstance(member, property):
        return getattr(persist, name)
    signature = inspect.signature(member)
    missing = [p for p in list(signature.parameters)[1:] if p not in ARGUMENTS]
    assert not missing, f"Persist.{name} takes {missing}: add sample values to ARGUMENTS"
    args = [ARGUMENTS[p] for p in list(signature.parameters)[1:]]
    result = getattr(persist, name)(*args)
    return list(result) if isinstance(result, Generator) else result


def test_the_contract_is_read_from_the_class() -> None:
    members = contract_members()
    assert {"fetch_typed_objs_if_exist", "get_immediate", "fetch_references_for_update"} <= set(members)
    assert {"config", "is_caching", "store_obj", "fetch_as"} <= set(members)


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("member", contract_members())
def test_every_wrapper_forwards_every_member_of_the_contract(wrapper: str, member: str) -> None:
    delegate = RecordingCachePersist()
    wrapped = WRAPPERS[wrapper](delegate)
    delegate.calls.clear()
    own = OWN_ANSWERS.get(wrapper, {}).get(member)
    if own == "refuse":
        with pytest.raises(RuntimeError):
            _ask(wrapped, member)
        assert delegate.calls == []
        return
    answer = _ask(wrapped, member)
    if own == "keep":
        assert not {"upsert_objs", "store_objs"} & set(delegate.calls)
        return
    if own == "answer":
        return
    assert delegate.calls, f"{wrapper}.{member} never reached the Persist it wraps"
    assert answer == _ask(RecordingCachePersist(), member), (
        f"{wrapper}.{member} answers differently from the Persist it wraps"
    )


@pytest.mark.parametrize("wrapper", sorted(set(WRAPPERS) - {"CachingPersist"}))
def test_a_cache_underneath_answers_get_immediate_through_every_wrapper(wrapper: str) -> None:
    backend = AdapterPersist(InMemoryBackendFactory().create(), StoreConfig(repository_id="r"))
    cache = CachingPersist(backend, ObjectCache())
    cache.store_obj(OBJ)
    wrapped = WRAPPERS[wrapper](cache)
    assert wrapped.get_immediate(OBJ.id) == OBJ
    assert wrapped.get_immediate(OTHER.id) is None


def test_observing_reports_each_call_under_nessies_name_and_times_a_scan_to_its_end() -> None:
    seen: list[tuple[str, str, str, str | None]] = []
    observing = ObservingPersist(
        RecordingCachePersist(),
        lambda layer, cls, method, _s, error: seen.append((layer, cls, method, error)),
    )
    observing.fetch_obj(OBJ.id)
    observing.get_immediate(OBJ.id)
    observing.fetch_reference_for_update(ROW.name)
    scan = observing.scan_all_objects()
    assert next(scan) == OBJ
    assert [m for _, _, m, _ in seen] == ["fetchTypedObjsIfExist", "getImmediate", "fetchReferencesForUpdate"]
    assert list(scan) == []
    assert seen[-1] == ("persist", "RecordingCachePersist", "scanAllObjects", None)
    with pytest.raises(ObjNotFound):
        observing.fetch_obj(OTHER.id)  # a miss is no error of the call: the contract's check raises
    assert seen[-1] == ("persist", "RecordingCachePersist", "fetchTypedObjsIfExist", None)
