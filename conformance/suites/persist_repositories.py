"""Scans and erasure, and the isolation of repositories that share one database."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import closing

import pytest

from conformance.harness import BackendUnderTest, PersistFactory
from conformance.samples import (
    AnotherTestObj,
    JsonTestObj,
    SimpleTestObj,
    VersionedTestObj,
    all_samples,
)
from conformance.suites.base import ConformanceSuite
from conformance.suites.cache import skip_if_references_cached
from persist_spi.adapter import BackendAdapter
from persist_spi.errors import InputError
from persist_spi.ids import EMPTY_OBJ_ID, random_obj_id
from persist_spi.objs import (
    STANDARD_OBJ_TYPES,
    CommitObj,
    Compression,
    ContentValueObj,
    IndexObj,
    Obj,
    StringObj,
    TagObj,
    content_value,
    string_data,
)
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist
from persist_spi.references import Reference


def _scan(persist: Persist, types: list[ObjType] | None = None) -> list[Obj]:
    with closing(persist.scan_all_objects(types)) as objs:
        return list(objs)


def _ids(objs: list[Obj]) -> set[bytes]:
    return {o.id for o in objs}


def _trio(n: int) -> tuple[list[Obj], list[Obj], list[Obj]]:
    values: list[Obj] = [content_value(str(uuid.uuid4()), 1, f"value {i}".encode()) for i in range(n)]
    strings: list[Obj] = [
        string_data("text/plain", Compression.NONE, None, (), f"s{i}".encode()) for i in range(n)
    ]
    commits: list[Obj] = [
        CommitObj(id=random_obj_id(), seq=1, tail=(EMPTY_OBJ_ID,), message=f"c{i}") for i in range(n)
    ]
    return values, strings, commits


def _keepable(adapter: BackendAdapter, names: Sequence[str]) -> list[str]:
    """``names`` with ":" turned into ";" in the ids ``adapter`` refuses: layouts keyed by
    ``repo + ":"`` refuse ids holding ":" (``repository_id_problem``), and ";", the next byte,
    probes the same boundary of their key ranges."""
    return [n.replace(":", ";") if adapter.repository_id_problem(n) is not None else n for n in names]


def _populate(persist: Persist, refs: int, objs: int) -> None:
    persist.add_reference(Reference("refs/heads/main", EMPTY_OBJ_ID))
    for i in range(refs):
        persist.add_reference(Reference(f"refs/heads/branch-{i}", random_obj_id()))
    persist.store_objs(
        [
            string_data("text/plain", Compression.NONE, None, (), f"{persist.repository_id}-{i}".encode())
            for i in range(objs)
        ]
    )


def _count_refs(persist: Persist, refs: int) -> int:
    names = ["refs/heads/main", *(f"refs/heads/branch-{i}" for i in range(refs))]
    return sum(r is not None for r in persist.fetch_references(names))


class PersistRepositoriesSuite(ConformanceSuite):
    area = "persist.repositories"

    @pytest.mark.parametrize("n", [0, 1, 3, 10, 50])
    def test_scan_filters_by_type(self, persist: Persist, n: int) -> None:
        values, strings, commits = _trio(n)
        persist.store_objs([*values, *strings, *commits])
        everything = _ids(values) | _ids(strings) | _ids(commits)
        assert _ids(_scan(persist, list(STANDARD_OBJ_TYPES))) == everything
        assert _ids(_scan(persist, [])) == everything
        assert _ids(_scan(persist)) == everything
        assert len(_scan(persist)) == 3 * n
        assert _ids(_scan(persist, [ContentValueObj.TYPE, StringObj.TYPE])) == _ids(values) | _ids(strings)
        assert _ids(_scan(persist, [ContentValueObj.TYPE, CommitObj.TYPE])) == _ids(values) | _ids(commits)
        assert _ids(_scan(persist, [CommitObj.TYPE])) == _ids(commits)
        assert _ids(_scan(persist, [CommitObj.TYPE, TagObj.TYPE, IndexObj.TYPE])) == _ids(commits)
        assert _scan(persist, [TagObj.TYPE, IndexObj.TYPE]) == []

    def test_scan_returns_equal_objects(self, persist: Persist) -> None:
        samples = all_samples()
        persist.upsert_obj(samples[0])
        persist.upsert_objs(samples[1:])
        assert persist.fetch_objs([o.id for o in samples]) == samples
        assert sorted(_scan(persist), key=lambda o: o.id) == sorted(samples, key=lambda o: o.id)
        by_type = {
            "standard": list(STANDARD_OBJ_TYPES),
            "json": [JsonTestObj.TYPE],
            "custom": [SimpleTestObj.TYPE, AnotherTestObj.TYPE, VersionedTestObj.TYPE],
            "simple": [SimpleTestObj.TYPE],
            "commit": [CommitObj.TYPE],
        }
        for types in by_type.values():
            expected = {o.id for o in samples if o.obj_type in types}
            assert _ids(_scan(persist, types)) == expected

    def test_scan_and_erase_are_scoped_to_one_repository(self, persist_factory: PersistFactory) -> None:
        first, second = persist_factory("first"), persist_factory("some-other")
        trios = {first.repository_id: _trio(10), second.repository_id: _trio(10)}
        for persist in (first, second):
            persist.store_objs([o for group in trios[persist.repository_id] for o in group])
        for persist in (first, second):
            values, strings, commits = trios[persist.repository_id]
            assert _ids(_scan(persist)) == _ids(values) | _ids(strings) | _ids(commits)
            assert _ids(_scan(persist, [])) == _ids(_scan(persist, list(STANDARD_OBJ_TYPES)))
            only_commits = _scan(persist, [CommitObj.TYPE])
            assert all(isinstance(o, CommitObj) for o in only_commits)
            assert _ids(only_commits) == _ids(commits)
        a = trios[first.repository_id][0]
        assert second.fetch_objs_if_exist([o.id for o in a]) == [None] * 10
        first.erase()
        assert _scan(first) == []
        assert _ids(_scan(second)) == set().union(*(_ids(group) for group in trios[second.repository_id]))

    def test_same_id_in_two_repositories_are_independent_objects(
        self, persist_factory: PersistFactory
    ) -> None:
        first, second = persist_factory(), persist_factory()
        obj = content_value("cid", 1, b"x")
        assert first.store_obj(obj) is True
        assert second.store_obj(obj) is True
        second.delete_obj(obj.id)
        assert first.fetch_obj(obj.id) == obj
        ref = Reference("refs/heads/main", random_obj_id())
        first.add_reference(ref)
        assert second.fetch_reference(ref.name) is None
        second.add_reference(ref.with_deleted(False))
        first.update_reference_pointer(ref, EMPTY_OBJ_ID)
        assert second.fetch_reference(ref.name) == ref

    def test_deletes_in_one_repository_keep_the_same_objects_in_another(
        self, persist_factory: PersistFactory
    ) -> None:
        """Ids are content hashes, so repositories sharing a database often hold the same objects:
        deleting them in bulk, one by one or conditionally removes them from one repository only."""
        mine, theirs = persist_factory(), persist_factory()
        plain: list[Obj] = [content_value(f"shared-{i}", 1, b"shared %d" % i) for i in range(20)]
        versioned = VersionedTestObj(id=random_obj_id(), version_token="1", some_value="shared")
        everything = [*plain, versioned]
        for persist in (mine, theirs):
            assert persist.store_objs(everything) == [True] * len(everything)
        mine.delete_objs([o.id for o in plain[:10]])
        mine.delete_obj(plain[10].id)
        assert mine.delete_conditional(versioned) is True
        ids = [o.id for o in everything]
        assert mine.fetch_objs_if_exist(ids) == [None] * 11 + plain[11:] + [None]
        assert theirs.fetch_objs_if_exist(ids) == everything
        assert _ids(_scan(theirs)) == _ids(everything)

    def test_repository_ids_that_prefix_each_other_do_not_mix(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """Backends that build row keys by concatenation must delimit the repository id, or refuse
        the ids they cannot keep apart (Nessie's layouts keyed ``repo + ":"``) before any write; those
        are then probed with ";" in place of ":" (the next byte, the same key-range boundary)."""
        names = ["a", "a:", "a:b", "ab", "", "ä", "a/b"]
        adapter = lochkit_backend.adapter
        refused = [r for r in names if adapter.repository_id_problem(persist_factory.repository_id_for(r))]
        assert all(":" in r for r in refused), f"only ids that share a key prefix may be refused: {refused}"
        for repo in refused:
            with pytest.raises(InputError, match="cannot be used"):
                persist_factory(repo)
        repos = _keepable(adapter, names)
        persists = {r: persist_factory(r) for r in repos}
        for repo, persist in persists.items():
            persist.add_reference(Reference(f"b:{repo}", EMPTY_OBJ_ID))
            persist.add_reference(Reference("shared", random_obj_id()))
            persist.store_obj(content_value(repo, 1, repo.encode()))
        for repo, persist in persists.items():
            assert [o.data for o in _scan(persist)] == [repo.encode()]  # type: ignore[attr-defined]
            assert persist.fetch_reference(f"b:{repo}") is not None
            assert [persist.fetch_reference(f"b:{other}") is not None for other in repos].count(True) == 1
        persists["a"].erase()
        for repo, persist in persists.items():
            assert len(_scan(persist)) == (0 if repo == "a" else 1)
            assert (persist.fetch_reference("shared") is None) == (repo == "a")

    def test_erase_repository_via_persist(self, persist_factory: PersistFactory) -> None:
        persist = persist_factory("foo-main")
        _populate(persist, refs=0, objs=250)
        strings = _scan(persist, [StringObj.TYPE])
        assert len(strings) == 250
        assert {o.content_type for o in strings if isinstance(o, StringObj)} == {"text/plain"}
        persist.erase()
        assert persist.fetch_reference("refs/heads/main") is None
        assert _scan(persist) == []

    @pytest.mark.parametrize("count", [1, 3, 10])
    def test_erase_many_repositories_at_once(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory, count: int
    ) -> None:
        persists = [persist_factory() for _ in range(count)]
        skip_if_references_cached(persists[0], "erases through the adapter")
        for persist in persists:
            _populate(persist, refs=2, objs=5)
        lochkit_backend.adapter.erase_repositories([p.repository_id for p in persists])
        for persist in persists:
            assert _count_refs(persist, 2) == 0
            assert _scan(persist) == []

    def test_erasing_some_repositories_keeps_the_others(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        persists = [persist_factory() for _ in range(10)]
        skip_if_references_cached(persists[0], "erases through the adapter")
        for persist in persists:
            _populate(persist, refs=25, objs=250)
        doomed, kept = persists[:5], persists[5:]
        lochkit_backend.adapter.erase_repositories([p.repository_id for p in doomed])
        for persist in doomed:
            assert _count_refs(persist, 25) == 0
            assert _scan(persist) == []
        for persist in kept:
            assert _count_refs(persist, 25) == 26
            assert len(_scan(persist)) == 250

    def test_the_empty_repository_id_is_a_repository_like_any_other(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """``""`` is the id every lochkit command uses unless told otherwise."""
        if not lochkit_backend.provisioned.started_here:
            pytest.skip(
                "the database was given by address: the suites write only into scratch "
                "repositories there, and repository '' may be someone's data"
            )
        empty = lochkit_backend.new_persist(repository_id="")
        other = persist_factory()
        try:
            for persist in (empty, other):
                persist.add_reference(Reference("refs/heads/main", random_obj_id()))
                persist.store_obj(content_value(persist.repository_id, 1, b"x"))
            assert empty.fetch_reference("refs/heads/main") != other.fetch_reference("refs/heads/main")
            assert [o.id for o in _scan(empty)] != [o.id for o in _scan(other)]
            if lochkit_backend.capabilities.lists_repositories:
                assert "" in set(lochkit_backend.adapter.list_repositories())
            empty.erase()
            assert empty.fetch_reference("refs/heads/main") is None
            assert _scan(empty) == []
            assert len(_scan(other)) == 1
        finally:
            empty.erase()

    @pytest.mark.lochkit_requires("lists_repositories")
    def test_listing_names_each_repository_with_references_once(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """Ids that prefix each other, and one that is not ASCII, each listed exactly once
        however many references it holds."""
        persists = [
            persist_factory(name) for name in _keepable(lochkit_backend.adapter, ["a", "a:", "ab", "ä/b"])
        ]
        for count, persist in enumerate(persists, start=1):
            for i in range(count):
                persist.add_reference(Reference(f"refs/heads/b{i}", random_obj_id()))
        listed = list(lochkit_backend.adapter.list_repositories())
        assert len(listed) == len(set(listed)), f"a repository is listed more than once: {sorted(listed)}"
        assert {p.repository_id for p in persists} <= set(listed)

    @pytest.mark.lochkit_requires("lists_repositories")
    def test_listing_leaves_out_erased_repositories(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        kept, erased = persist_factory(), persist_factory()
        for persist in (kept, erased):
            _populate(persist, refs=3, objs=3)
        erased.erase()
        listed = set(lochkit_backend.adapter.list_repositories())
        assert kept.repository_id in listed
        assert erased.repository_id not in listed

    def test_abandoned_scan_can_be_closed(self, persist: Persist) -> None:
        values, _, _ = _trio(20)
        persist.store_objs(values)
        scan = persist.scan_all_objects()
        first = next(scan)
        assert first.id in _ids(values)
        scan.close()
        assert len(_scan(persist)) == 20
