"""Objects: insert-if-absent, reads in every form, upserts, deletes and positional bulk calls."""

from __future__ import annotations

import dataclasses
import random

import pytest

from conformance.samples import SimpleTestObj, all_samples, changed, sample_id
from conformance.suites.base import ConformanceSuite
from persist_spi.errors import ObjNotFound
from persist_spi.ids import EMPTY_OBJ_ID, ZERO_LENGTH_OBJ_ID, ObjId, random_obj_id
from persist_spi.objs import (
    CommitObj,
    ContentValueObj,
    GenericObj,
    Obj,
    TagObj,
    content_value,
    tag_obj,
)
from persist_spi.persist import Persist

SAMPLES = all_samples()


def _other_type_than(obj: Obj) -> type[Obj]:
    return TagObj if not isinstance(obj, TagObj) else CommitObj


def _assert_absent(persist: Persist, obj: Obj) -> None:
    with pytest.raises(ObjNotFound) as e:
        persist.fetch_obj(obj.id)
    assert e.value.obj_ids == (obj.id,)
    with pytest.raises(ObjNotFound):
        persist.fetch_obj_type(obj.id)
    with pytest.raises(ObjNotFound):
        persist.fetch_typed_obj(obj.id, obj.obj_type)
    with pytest.raises(ObjNotFound):
        persist.fetch_objs([obj.id])
    assert persist.fetch_objs_if_exist([obj.id]) == [None]


class PersistObjectsSuite(ConformanceSuite):
    area = "persist.objects"

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_object_lifecycle_store_fetch_delete(self, persist: Persist, obj: Obj) -> None:
        """Absent before storing; stored once (True) then found by every read; a typed read with
        another type misses; deleting (also twice) makes it absent again; it can be stored anew."""
        _assert_absent(persist, obj)
        assert persist.store_obj(obj) is True
        assert persist.store_obj(obj) is False
        assert persist.fetch_obj(obj.id) == obj
        assert persist.fetch_obj_type(obj.id) == obj.obj_type
        assert persist.fetch_typed_obj(obj.id, obj.obj_type) == obj
        assert persist.fetch_objs([obj.id]) == [obj]
        assert persist.fetch_objs_if_exist([obj.id]) == [obj]
        other = _other_type_than(obj)
        with pytest.raises(ObjNotFound):
            persist.fetch_typed_obj(obj.id, other.TYPE)
        assert persist.fetch_typed_objs_if_exist([obj.id], other.TYPE) == [None]
        persist.delete_obj(obj.id)
        persist.delete_objs([obj.id])
        _assert_absent(persist, obj)
        assert persist.store_obj(obj) is True
        assert persist.fetch_obj(obj.id) == obj

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_store_existing_object_returns_false(self, persist: Persist, obj: Obj) -> None:
        assert persist.store_obj(obj) is True
        assert persist.store_obj(obj) is False

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_store_objs_existing_object_returns_false(self, persist: Persist, obj: Obj) -> None:
        assert persist.store_objs([obj]) == [True]
        assert persist.store_objs([obj]) == [False]

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_store_keeps_existing_content_for_same_id(self, persist: Persist, obj: Obj) -> None:
        """Insert-if-absent never replaces: a different object under an existing id is not written."""
        assert persist.store_obj(obj) is True
        assert persist.store_obj(changed(obj)) is False
        assert persist.fetch_obj(obj.id) == obj

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_upsert_creates_missing_object(self, persist: Persist, obj: Obj) -> None:
        persist.upsert_obj(obj)
        assert persist.fetch_obj(obj.id) == obj

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_upsert_objs_creates_missing_object(self, persist: Persist, obj: Obj) -> None:
        persist.upsert_objs([obj])
        assert persist.fetch_objs([obj.id]) == [obj]

    @pytest.mark.parametrize("obj", SAMPLES, ids=sample_id)
    def test_upsert_replaces_object_with_same_id(self, persist: Persist, obj: Obj) -> None:
        assert persist.store_obj(obj) is True
        persist.upsert_obj(obj)
        assert persist.fetch_obj(obj.id) == obj
        replacement = changed(obj)
        assert replacement != obj
        persist.upsert_obj(replacement)
        assert persist.fetch_obj(obj.id) == replacement

    def test_upsert_many_changed_objects_returns_them_in_request_order(self, persist: Persist) -> None:
        assert all(persist.store_objs(SAMPLES))
        replacements = [changed(o) for o in SAMPLES]
        persist.upsert_objs(replacements)
        assert persist.fetch_objs([o.id for o in SAMPLES]) == replacements

    def test_upsert_mix_of_existing_and_new_ids(self, persist: Persist) -> None:
        """200 stored commits; 400 upserts where even slots reuse existing ids and odd ones are new."""
        commits = [_commit(i) for i in range(200)]
        assert all(persist.store_objs(commits))
        upserts: list[Obj] = []
        for i in range(400):
            if i % 2 == 0:
                upserts.append(dataclasses.replace(commits[i // 2], message=f"updated {i}"))
            else:
                upserts.append(_commit(1000 + i))
        persist.upsert_objs(upserts)
        assert persist.fetch_objs([o.id for o in upserts]) == upserts

    @pytest.mark.parametrize("obj", [o for o in SAMPLES if isinstance(o, SimpleTestObj)], ids=sample_id)
    def test_object_of_unknown_type_round_trips_as_generic(self, persist: Persist, obj: Obj) -> None:
        """A type this process does not know is stored and read back verbatim."""
        generic = GenericObj(
            id=obj.id,
            type_name=f"genericType_{obj.id.hex()[:12]}",
            version_token="token-1",
            attributes={"text": getattr(obj, "text", None), "list": [1, "two", None], "map": {"k": "v"}},
        )
        assert persist.store_obj(generic) is True
        fetched = persist.fetch_obj(obj.id)
        assert fetched == generic
        assert persist.fetch_typed_obj(obj.id, generic.obj_type) == generic

    def test_store_objs_results_are_positional(self, persist: Persist) -> None:
        objs = SAMPLES[:12]
        for n in range(1, len(objs) + 1):
            result = persist.store_objs(objs[:n])
            assert result == [False] * (n - 1) + [True]
            assert persist.fetch_objs([o.id for o in objs[:n]]) == objs[:n]
            assert persist.fetch_objs_if_exist([o.id for o in objs[:n]]) == objs[:n]

    def test_store_and_fetch_957_objects_in_one_call(self, persist: Persist) -> None:
        """Backends must chunk large requests internally."""
        tags = [tag_obj(f"tag #{i}", None, None) for i in range(957)]
        assert persist.store_objs(tags) == [True] * 957
        ids = [t.id for t in tags]
        assert persist.fetch_objs(ids) == tags
        assert persist.fetch_objs_if_exist(ids) == tags

    def test_store_every_sample_at_once(self, persist: Persist) -> None:
        assert persist.store_objs(SAMPLES) == [True] * len(SAMPLES)
        assert None not in persist.fetch_objs([o.id for o in SAMPLES])
        assert persist.fetch_objs_if_exist([o.id for o in SAMPLES]) == SAMPLES

    def test_fetch_nothing_returns_nothing(self, persist: Persist) -> None:
        assert persist.fetch_objs([]) == []
        assert persist.fetch_objs_if_exist([]) == []
        assert persist.store_objs([]) == []

    def test_missing_objects_are_all_named(self, persist: Persist) -> None:
        missing = random_obj_id()
        for fetch in (
            persist.fetch_obj,
            persist.fetch_obj_type,
            lambda i: persist.fetch_typed_obj(i, None),
            lambda i: persist.fetch_typed_obj(i, CommitObj.TYPE),
        ):
            with pytest.raises(ObjNotFound) as e:
                fetch(missing)
            assert e.value.obj_ids == (missing,)
        with pytest.raises(ObjNotFound) as e:
            persist.fetch_objs([EMPTY_OBJ_ID, missing])
        assert set(e.value.obj_ids) == {EMPTY_OBJ_ID, missing}
        third = random_obj_id()
        with pytest.raises(ObjNotFound) as e:
            persist.fetch_objs([EMPTY_OBJ_ID, missing, third])
        assert set(e.value.obj_ids) == {EMPTY_OBJ_ID, missing, third}
        assert persist.fetch_objs_if_exist([EMPTY_OBJ_ID, missing, third]) == [None] * 3
        assert persist.fetch_typed_objs_if_exist([missing], CommitObj.TYPE) == [None]

    def test_missing_objects_among_present_ones_are_named(self, persist: Persist) -> None:
        present = SAMPLES[:3]
        persist.store_objs(present)
        missing = [random_obj_id(), random_obj_id()]
        ids = [present[0].id, missing[0], present[1].id, missing[1], present[2].id]
        with pytest.raises(ObjNotFound) as e:
            persist.fetch_objs(ids)
        assert set(e.value.obj_ids) == set(missing)
        assert persist.fetch_objs_if_exist(ids) == [present[0], None, present[1], None, present[2]]

    def test_empty_obj_id_is_never_found(self, persist: Persist) -> None:
        for obj_id in (EMPTY_OBJ_ID, ZERO_LENGTH_OBJ_ID, ObjId(bytes(32))):
            with pytest.raises(ObjNotFound):
                persist.fetch_obj(obj_id)
            with pytest.raises(ObjNotFound):
                persist.fetch_obj_type(obj_id)
            with pytest.raises(ObjNotFound):
                persist.fetch_typed_obj(obj_id, CommitObj.TYPE)

    def test_none_elements_are_ignored_positionally(self, persist: Persist) -> None:
        for n in (1, 2):
            nones: list[Obj | None] = [None] * n
            assert persist.store_objs(nones) == [False] * n
            persist.upsert_objs(nones)
            assert persist.fetch_objs([None] * n) == [None] * n
            assert persist.fetch_objs_if_exist([None] * n) == [None] * n
            persist.delete_objs([None] * n)
        obj = SAMPLES[0]
        assert persist.store_objs([None, obj, None]) == [False, True, False]
        assert persist.fetch_objs([None, obj.id, None]) == [None, obj, None]

    def test_wrong_type_counts_as_missing_in_bulk_reads(self, persist: Persist) -> None:
        value = content_value("cid", 1, b"x")
        tag = tag_obj("m", None, None)
        persist.store_objs([value, tag])
        found = persist.fetch_typed_objs_if_exist([value.id, tag.id], ContentValueObj.TYPE)
        assert found == [value, None]
        with pytest.raises(ObjNotFound) as e:
            persist.fetch_typed_objs([value.id, tag.id], ContentValueObj.TYPE)
        assert e.value.obj_ids == (tag.id,)

    def test_duplicate_ids_in_one_store_call_write_once(self, persist: Persist) -> None:
        obj = SAMPLES[0]
        assert persist.store_objs([obj, obj]) == [True, False]
        assert persist.fetch_objs([obj.id, obj.id]) == [obj, obj]

    def test_deleting_missing_objects_is_silent(self, persist: Persist) -> None:
        persist.delete_obj(random_obj_id())
        persist.delete_objs([random_obj_id(), None, random_obj_id()])

    def test_delete_objs_removes_only_the_given_ids(self, persist: Persist) -> None:
        objs = [tag_obj(f"t{i}") for i in range(30)]
        persist.store_objs(objs)
        rng = random.Random(7)
        doomed = rng.sample(objs, 10)
        persist.delete_objs([o.id for o in doomed])
        remaining = persist.fetch_objs_if_exist([o.id for o in objs])
        for obj, found in zip(objs, remaining, strict=True):
            assert found == (None if obj in doomed else obj)


def _commit(i: int) -> CommitObj:
    return CommitObj(
        id=ObjId(random.Random(i).randbytes(32)), seq=i + 1, tail=(EMPTY_OBJ_ID,), message=f"commit {i}"
    )
