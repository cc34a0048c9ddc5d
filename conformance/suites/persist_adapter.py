"""The adapter contract itself: :class:`~persist_spi.adapter.BackendAdapter` called directly.

The core hides some adapter mistakes from the Persist-level suites (it re-matches fetched rows by
id, for instance), but any other caller of the contract would be misled by them. These tests put
rows in through the adapter and check what comes back: results positional, ``None`` in place,
request order kept, every column compared, every call confined to its repository.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from contextlib import closing

import pytest

from conformance.harness import BackendUnderTest, PersistFactory
from conformance.rows import obj_row, ref_row, tag_rows, with_other_data
from conformance.samples import OtherVersionedTestObj, VersionedTestObj, all_samples, changed
from conformance.suites.base import ConformanceSuite
from persist_spi.adapter import BackendAdapter, ObjRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId, random_obj_id
from persist_spi.layouts import StorageLayout
from persist_spi.objs import GenericObj, tag_obj
from persist_spi.references import Reference

#: Request sizes around the chunk sizes databases and adapters commonly use (25 and 100 for
#: DynamoDB's batch calls, 500 or 1000 for IN lists, powers of two).
CHUNK_PROBES = (
    1,
    2,
    3,
    24,
    25,
    26,
    99,
    100,
    101,
    127,
    128,
    129,
    255,
    256,
    257,
    499,
    500,
    501,
    999,
    1000,
    1001,
)


def _scan(adapter: BackendAdapter, repo: str, types: frozenset[str] | None = None) -> list[ObjRow]:
    with closing(adapter.scan_objs(repo, types)) as rows:  # type: ignore[type-var]
        return list(rows)


def _differing_positions(got: Sequence[ObjRow | None], expected: Sequence[ObjRow | None]) -> str:
    """Where two long answers differ, briefly (a failing comparison of 1001 rows is unreadable)."""
    if len(got) != len(expected):
        return f"{len(got)} answers for {len(expected)} ids"
    positions = [i for i, (g, e) in enumerate(zip(got, expected, strict=True)) if g != e]
    return f"{len(positions)} of {len(expected)} positions differ, first {positions[:5]}"


def _one_id_one_token_in_each_updateable_type(layout: StorageLayout) -> list[ObjRow]:
    """The same id and version token as each updateable type; two of the type codes prefix each
    other (lt-versioned, lt-versioned2), the third is a type this process does not know."""
    obj_id = random_obj_id()
    return [
        obj_row(VersionedTestObj(id=obj_id, version_token="t", some_value="v"), 5, layout=layout),
        obj_row(OtherVersionedTestObj(id=obj_id, version_token="t", some_value="o"), 6, layout=layout),
        obj_row(GenericObj(id=obj_id, type_name="genericVersioned", version_token="t"), 7, layout=layout),
    ]


class PersistAdapterSuite(ConformanceSuite):
    area = "persist.adapter"

    # --- bulk reads: positional, None in place, order kept ---------------------------------------

    def test_fetch_objs_is_positional_with_none_in_place(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        rows = tag_rows(20, layout=adapter.layout)
        assert adapter.insert_objs(repo, rows) == [True] * 20
        missing = [bytes(random_obj_id()) for _ in range(10)]
        request = [r.obj_id for r in rows] + missing
        random.Random(20).shuffle(request)
        stored = {r.obj_id: r for r in rows}
        for ids in (request, request[::-1], missing[:1], [rows[3].obj_id]):
            assert adapter.fetch_objs(repo, ids) == [stored.get(i) for i in ids]

    def test_fetch_objs_answers_every_request_size(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """Sizes around common chunk sizes: an adapter that splits requests into chunks must answer
        for every id, whatever the size of the last chunk."""
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        rows = tag_rows(max(CHUNK_PROBES), layout=adapter.layout)
        assert all(adapter.insert_objs(repo, rows))
        ids = [r.obj_id for r in reversed(rows)]  # not in storage order
        for size in CHUNK_PROBES:
            fetched = adapter.fetch_objs(repo, ids[:size])
            assert len(fetched) == size, f"{size} ids asked for, {len(fetched)} answers"
            absent = [i for i, row in enumerate(fetched) if row is None]
            assert not absent, f"{size} ids asked for: positions {absent[:5]} came back missing"
            assert [row.obj_id for row in fetched if row is not None] == ids[:size]
        gappy = [i for pair in zip(ids, (bytes(random_obj_id()) for _ in ids), strict=False) for i in pair]
        fetched = adapter.fetch_objs(repo, gappy)
        assert [row is None for row in fetched] == [i % 2 == 1 for i in range(len(gappy))]

    def test_bulk_writes_answer_for_every_row_one_past_the_chunk_sizes(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """Inserts, upserts and deletes of 1001 rows: one more than 1000, 500, 100 and 25, so an
        adapter that chunks its writes ends on a chunk of one row, which must be written and
        answered for like the others; every step is read back in one bulk fetch."""
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        rows = tag_rows(1001, layout=adapter.layout)
        ids = [r.obj_id for r in rows]
        assert adapter.insert_objs(repo, rows[::2]) == [True] * 501
        inserted = adapter.insert_objs(repo, rows)
        assert inserted == [i % 2 == 1 for i in range(1001)], "insert_objs answers by position"
        fetched = adapter.fetch_objs(repo, ids)
        assert fetched == rows, f"after inserting: {_differing_positions(fetched, rows)}"
        changed = [with_other_data(r, f"changed {i}", adapter.layout) for i, r in enumerate(rows)]
        adapter.upsert_objs(repo, changed)
        fetched = adapter.fetch_objs(repo, ids)
        assert fetched == changed, f"after upserting: {_differing_positions(fetched, changed)}"
        adapter.delete_objs(repo, ids[:1000])
        fetched = adapter.fetch_objs(repo, ids)
        expected = [None] * 1000 + changed[1000:]
        assert fetched == expected, f"after deleting 1000: {_differing_positions(fetched, expected)}"

    def test_fetch_refs_is_positional_with_none_in_place(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        refs = [ref_row(f"refs/heads/r{i:02}", layout=adapter.layout) for i in range(12)]
        for ref in refs:
            assert adapter.insert_ref(repo, ref) is True
        names = [r.name for r in refs] + [f"refs/heads/missing-{i}" for i in range(6)]
        random.Random(12).shuffle(names)
        stored = {r.name: r for r in refs}
        for request in (names, names[::-1], ["refs/heads/missing-0"], [refs[5].name]):
            assert adapter.fetch_refs(repo, request) == [stored.get(n) for n in request]

    def test_insert_objs_results_are_positional(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """For an existing id the stored bytes stay, and only ``referenced`` takes the new value."""
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        rows = tag_rows(8, layout=adapter.layout)
        existing = rows[1::2]
        assert adapter.insert_objs(repo, existing) == [True] * 4
        other = with_other_data(rows[0], "other bytes", adapter.layout).data
        again = [r._replace(data=other, referenced=r.referenced + 50) for r in rows]
        assert adapter.insert_objs(repo, again) == [True, False] * 4
        fetched = adapter.fetch_objs(repo, [r.obj_id for r in rows])
        for i, (row, got) in enumerate(zip(rows, fetched, strict=True)):
            expected_data = row.data if i % 2 else other
            assert got == row._replace(data=expected_data, referenced=row.referenced + 50), f"row {i}"

    # --- references: insert-if-absent and compare-and-swap on every column -----------------------

    def test_insert_ref_never_replaces_a_row(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        first = ref_row("refs/heads/main", history=2, layout=adapter.layout)
        assert adapter.insert_ref(repo, first) is True
        assert (
            adapter.insert_ref(repo, ref_row("refs/heads/main", extended_info=b"x", layout=adapter.layout))
            is False
        )
        assert adapter.insert_ref(repo, first._replace(deleted=True)) is False
        assert adapter.fetch_refs(repo, ["refs/heads/main"]) == [first]

    def test_update_ref_compares_every_column_but_history(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        for ext in (None, bytes(random_obj_id())):
            name = f"refs/heads/ext-{ext is not None}"
            row = ref_row(name, extended_info=ext, history=1, layout=adapter.layout)
            assert adapter.insert_ref(repo, row) is True
            other_ext = bytes(random_obj_id()) if ext is None else None
            for stale in (
                row._replace(pointer=bytes(random_obj_id())),
                row._replace(deleted=True),
                row._replace(created_at_micros=row.created_at_micros + 1),
                row._replace(extended_info=other_ext),
            ):
                assert adapter.update_ref(repo, stale, stale._replace(pointer=b"\x01" * 32)) is False
                assert adapter.fetch_refs(repo, [name]) == [row]
            new = ref_row(
                name, extended_info=ext, created=row.created_at_micros, history=3, layout=adapter.layout
            )
            new = new._replace(deleted=True)
            assert adapter.update_ref(repo, row._replace(previous_pointers=b"ignored"), new) is True
            assert adapter.fetch_refs(repo, [name]) == [new], "every column of the new row is stored"
            assert adapter.update_ref(repo, row, new) is False
        ghost = ref_row("refs/heads/ghost", layout=adapter.layout)
        assert adapter.update_ref(repo, ghost, ghost._replace(pointer=b"\x02" * 32)) is False
        assert adapter.fetch_refs(repo, [ghost.name]) == [None]

    def test_delete_ref_compares_every_column_but_history(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        for ext in (None, bytes(random_obj_id())):
            name = f"refs/heads/ext-{ext is not None}"
            row = ref_row(name, extended_info=ext, history=2, layout=adapter.layout)._replace(deleted=True)
            assert adapter.insert_ref(repo, row) is True
            other_ext = bytes(random_obj_id()) if ext is None else None
            for stale in (
                row._replace(pointer=bytes(random_obj_id())),
                row._replace(deleted=False),
                row._replace(created_at_micros=row.created_at_micros + 1),
                row._replace(extended_info=other_ext),
            ):
                assert adapter.delete_ref(repo, stale) is False
                assert adapter.fetch_refs(repo, [name]) == [row]
            assert adapter.delete_ref(repo, row._replace(previous_pointers=b"")) is True
            assert adapter.fetch_refs(repo, [name]) == [None]
            assert adapter.delete_ref(repo, row) is False

    # --- objects: upserts and conditional writes --------------------------------------------------

    def test_upsert_objs_replaces_every_column(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        v1 = obj_row(
            VersionedTestObj(id=random_obj_id(), version_token="1", some_value="one"),
            5,
            layout=adapter.layout,
        )
        adapter.upsert_objs(repo, [v1])
        assert adapter.fetch_objs(repo, [v1.obj_id]) == [v1]
        v2 = obj_row(tag_obj("replacement"), 9, layout=adapter.layout)._replace(obj_id=v1.obj_id)
        adapter.upsert_objs(repo, [v2])
        assert adapter.fetch_objs(repo, [v1.obj_id]) == [v2]

    def test_delete_obj_if_referenced_compares_exactly(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        row = tag_rows(1, layout=adapter.layout)[0]
        assert adapter.delete_obj_if_referenced(repo, row.obj_id, row.referenced) is False
        adapter.insert_objs(repo, [row])
        for other in (row.referenced - 1, row.referenced + 1, 0):
            assert adapter.delete_obj_if_referenced(repo, row.obj_id, other) is False
            assert adapter.fetch_objs(repo, [row.obj_id]) == [row]
        assert adapter.delete_obj_if_referenced(repo, row.obj_id, row.referenced) is True
        assert adapter.fetch_objs(repo, [row.obj_id]) == [None]

    def test_update_obj_if_version_compares_type_and_token(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        v1 = obj_row(
            VersionedTestObj(id=random_obj_id(), version_token="1", some_value="one"),
            5,
            layout=adapter.layout,
        )
        v2 = obj_row(
            VersionedTestObj(id=ObjId(v1.obj_id), version_token="2", some_value="two"),
            6,
            layout=adapter.layout,
        )
        assert adapter.update_obj_if_version(repo, v1.obj_type, "1", v2) is False
        assert adapter.fetch_objs(repo, [v1.obj_id]) == [None], "a conditional update never creates"
        assert adapter.insert_objs(repo, [v1]) == [True]
        for wrong_type, wrong_token in (("other-type", "1"), (v1.obj_type, "2"), (v1.obj_type, "")):
            assert adapter.update_obj_if_version(repo, wrong_type, wrong_token, v2) is False
            assert adapter.fetch_objs(repo, [v1.obj_id]) == [v1]
        assert adapter.update_obj_if_version(repo, v1.obj_type, "1", v2) is True
        assert adapter.fetch_objs(repo, [v1.obj_id]) == [v2], "token, data and referenced are replaced"

    def test_delete_obj_if_version_compares_type_and_token(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        v1 = obj_row(
            VersionedTestObj(id=random_obj_id(), version_token="1", some_value="one"),
            5,
            layout=adapter.layout,
        )
        assert adapter.delete_obj_if_version(repo, v1.obj_id, v1.obj_type, "1") is False
        assert adapter.insert_objs(repo, [v1]) == [True]
        for wrong_type, wrong_token in (("other-type", "1"), (v1.obj_type, "2"), (v1.obj_type, "")):
            assert adapter.delete_obj_if_version(repo, v1.obj_id, wrong_type, wrong_token) is False
            assert adapter.fetch_objs(repo, [v1.obj_id]) == [v1]
        assert adapter.delete_obj_if_version(repo, v1.obj_id, v1.obj_type, "1") is True
        assert adapter.fetch_objs(repo, [v1.obj_id]) == [None]

    @pytest.mark.parametrize("operation", ["update_obj_if_version", "delete_obj_if_version"])
    def test_conditional_writes_match_the_stored_type_exactly(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory, operation: str
    ) -> None:
        """An id holds one object of one type: a conditional write that names another type fails,
        even with the stored version token, for every pair of updateable types (also when one type
        code prefixes the other); the same write naming the stored type then applies."""
        adapter = lochkit_backend.adapter
        kinds = _one_id_one_token_in_each_updateable_type(adapter.layout)
        for stored in kinds:
            repo = persist_factory().repository_id
            assert adapter.insert_objs(repo, [stored]) == [True]
            for other in (k for k in kinds if k.obj_type != stored.obj_type):
                if operation == "update_obj_if_version":
                    new = other._replace(version_token="t2")
                    written = adapter.update_obj_if_version(repo, other.obj_type, "t", new)
                else:
                    written = adapter.delete_obj_if_version(repo, stored.obj_id, other.obj_type, "t")
                assert written is False, f"{operation} for {other.obj_type!r} changed a {stored.obj_type!r}"
                assert adapter.fetch_objs(repo, [stored.obj_id]) == [stored]
            if operation == "update_obj_if_version":
                new = stored._replace(version_token="t2", referenced=9)
                assert adapter.update_obj_if_version(repo, stored.obj_type, "t", new) is True
                assert adapter.fetch_objs(repo, [stored.obj_id]) == [new]
            else:
                assert adapter.delete_obj_if_version(repo, stored.obj_id, stored.obj_type, "t") is True
                assert adapter.fetch_objs(repo, [stored.obj_id]) == [None]

    # --- scans, erase and repository isolation ----------------------------------------------------

    def test_a_scan_closed_half_way_lets_go_of_what_it_holds(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """``scan_objs`` must return a generator, or something else with ``close()``: a caller that
        stops reading closes it, and the adapter must then let go of its cursor, its transaction or
        its pooled connection. After several scans abandoned in a row, every call works as before."""
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        rows = tag_rows(250, layout=adapter.layout)  # more than one page of a scan that reads in pages
        assert all(adapter.insert_objs(repo, rows))
        for _ in range(5):  # more than a small connection pool holds
            scan = adapter.scan_objs(repo, None)
            close = getattr(scan, "close", None)
            assert callable(close), (
                f"scan_objs returned a {type(scan).__name__}, which has no close(): a caller cannot "
                "end a half-read scan, so its cursor stays open until garbage collection"
            )
            assert next(scan) in rows
            close()
            assert next(scan, None) is None, "a closed scan went on yielding rows"
        key = lambda r: r.obj_id  # noqa: E731
        assert sorted(_scan(adapter, repo), key=key) == sorted(rows, key=key)
        more = tag_rows(3, label="after the scans", layout=adapter.layout)
        assert adapter.insert_objs(repo, more) == [True] * 3
        assert adapter.fetch_objs(repo, [r.obj_id for r in more]) == more

    def test_scan_objs_filters_by_type_and_returns_every_row(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter, repo = lochkit_backend.adapter, persist_factory().repository_id
        rows = [
            obj_row(o, referenced=i + 1, layout=adapter.layout) for i, o in enumerate(all_samples())
        ] + tag_rows(230, layout=adapter.layout)
        assert all(adapter.insert_objs(repo, rows))
        key = lambda r: r.obj_id  # noqa: E731
        assert sorted(_scan(adapter, repo), key=key) == sorted(rows, key=key)
        for types in ({rows[0].obj_type}, {rows[0].obj_type, "tag"}, {"no-such-type"}):
            expected = sorted((r for r in rows if r.obj_type in types), key=key)
            assert sorted(_scan(adapter, repo, frozenset(types)), key=key) == expected

    def test_every_call_stays_within_its_repository(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """Two repositories whose ids prefix each other hold rows with the same ids and names; each
        call on one of them leaves the other exactly as it was."""
        adapter = lochkit_backend.adapter
        base = persist_factory().repository_id
        mine, theirs = base, persist_factory(base + "x").repository_id
        versioned = obj_row(
            VersionedTestObj(id=random_obj_id(), version_token="1", some_value="v"), 3, layout=adapter.layout
        )
        objs = [*tag_rows(5, layout=adapter.layout), versioned]
        ref = ref_row("refs/heads/shared", history=1, layout=adapter.layout)
        for repo in (mine, theirs):
            assert adapter.insert_objs(repo, objs) == [True] * len(objs)
            assert adapter.insert_ref(repo, ref) is True

        def untouched() -> None:
            assert adapter.fetch_objs(theirs, [o.obj_id for o in objs]) == objs
            assert adapter.fetch_refs(theirs, [ref.name]) == [ref]
            assert sorted(o.obj_id for o in _scan(adapter, theirs)) == sorted(o.obj_id for o in objs)

        moved = ref._replace(pointer=b"\x03" * 32)
        assert adapter.update_ref(mine, ref, moved) is True
        untouched()
        assert adapter.delete_ref(mine, moved) is True
        untouched()
        assert adapter.insert_ref(mine, ref._replace(pointer=b"\x04" * 32)) is True
        untouched()
        adapter.upsert_objs(mine, [with_other_data(o, "changed", adapter.layout) for o in objs[:2]])
        untouched()
        changed = obj_row(
            VersionedTestObj(id=ObjId(versioned.obj_id), version_token="2", some_value="v2"),
            3,
            layout=adapter.layout,
        )
        assert adapter.update_obj_if_version(mine, versioned.obj_type, "1", changed) is True
        untouched()
        assert adapter.delete_obj_if_version(mine, versioned.obj_id, versioned.obj_type, "2") is True
        untouched()
        assert adapter.delete_obj_if_referenced(mine, objs[2].obj_id, objs[2].referenced) is True
        untouched()
        adapter.delete_objs(mine, [o.obj_id for o in objs])
        untouched()
        assert adapter.fetch_objs(mine, [o.obj_id for o in objs]) == [None] * len(objs)
        assert _scan(adapter, mine) == []
        adapter.insert_objs(mine, objs)
        adapter.erase_repositories([mine])
        untouched()
        assert adapter.fetch_refs(mine, [ref.name]) == [None]

    def test_erase_repositories_erases_exactly_the_given_ones(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        adapter = lochkit_backend.adapter
        base = persist_factory().repository_id
        # An id extending another by ":" is where prefix-keyed layouts could mix two repositories;
        # an adapter that refuses such ids (repository_id_problem) is tested without it.
        colon = [base + ":"] if adapter.repository_id_problem(base + ":") is None else [base + "_"]
        repos = [base, base + "x", *colon, base + "-2", base + "-3"]
        for repo in repos:
            persist_factory(repo)
            adapter.insert_objs(repo, tag_rows(3, label=repo, layout=adapter.layout))
            adapter.insert_ref(repo, ref_row("refs/heads/main", layout=adapter.layout))
        doomed, kept = [repos[0], repos[3], repos[4]], [repos[1], repos[2]]
        adapter.erase_repositories(doomed)
        for repo in doomed:
            assert _scan(adapter, repo) == [], f"objects of {repo!r} survived erasing it"
            assert adapter.fetch_refs(repo, ["refs/heads/main"]) == [None]
        for repo in kept:
            assert len(_scan(adapter, repo)) == 3, f"objects of {repo!r} were erased with {doomed}"
            assert adapter.fetch_refs(repo, ["refs/heads/main"]) != [None]

    # --- durability --------------------------------------------------------------------------------

    @pytest.mark.lochkit_requires("durable")
    def test_what_was_written_is_there_after_closing_and_reopening(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        """What ``durable`` declares: the adapter is closed, the store is opened again through the
        factory with the same address and options (and set up again, as every opener does), and
        every object and reference written before is there as it was: upserted, moved, marked
        deleted. A backend with a server is reopened through a new connection; an embedded one on
        a store of the test's own."""
        repo = persist_factory().repository_id  # erased afterwards, also in a server's database
        config = StoreConfig(repository_id=repo)
        objs = all_samples()
        with lochkit_backend.reopenable_store() as open_store:
            first = open_store()
            try:
                persist = AdapterPersist(first, config)
                assert all(persist.store_objs(objs))
                objs[0] = changed(objs[0])
                persist.upsert_obj(objs[0])
                refs = [
                    persist.add_reference(Reference("refs/heads/main", objs[0].id)),
                    persist.update_reference_pointer(
                        persist.add_reference(Reference("refs/heads/moved", objs[1].id)), objs[2].id
                    ),
                    persist.mark_reference_as_deleted(
                        persist.add_reference(Reference("refs/tags/gone", objs[3].id))
                    ),
                ]
            finally:
                first.close()
            again = open_store()
            try:
                reopened = AdapterPersist(again, config)
                assert reopened.fetch_objs([o.id for o in objs]) == objs
                found = reopened.fetch_references([r.name for r in refs])
                assert found == refs
                assert [r.previous_pointers for r in found if r] == [r.previous_pointers for r in refs]
            finally:
                again.close()
