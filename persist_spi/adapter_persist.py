"""The Persist every backend gets: serialisation, size checks and reference semantics over an adapter."""

from __future__ import annotations

from collections.abc import Collection, Generator, Sequence

from mypy_extensions import mypyc_attr

from persist_spi.adapter import BackendAdapter, ObjRow, RefRow
from persist_spi.clock import DEFAULT_CLOCK, Clock
from persist_spi.codec import ObjCodec
from persist_spi.config import INT_MAX, StoreConfig
from persist_spi.errors import InputError, ObjTooLarge, RefAlreadyExists, RefConditionFailed, RefNotFound
from persist_spi.ids import ObjId, trusted_obj_id
from persist_spi.layouts import StorageLayout
from persist_spi.live_objects import LIVE_OBJ_TYPES, LiveObjectStore, LiveObjRow
from persist_spi.objs import CommitObj, GenericObj, IndexObj, Obj, UpdateableObj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist, StoredAndMoved, is_fetchable
from persist_spi.references import Reference


# Compiled in the kernel, but a plain Python class: its base (Persist) is not compiled, and
# a compiled class over an interpreted base crashes the garbage collector.
@mypyc_attr(native_class=False)
class AdapterPersist(Persist):
    """Binds a :class:`BackendAdapter` to one repository (``config.repository_id``)."""

    def __init__(
        self,
        adapter: BackendAdapter,
        config: StoreConfig | None = None,
        *,
        codec: ObjCodec | None = None,
        clock: Clock = DEFAULT_CLOCK,
    ) -> None:
        self._adapter = adapter
        self._config = config if config is not None else StoreConfig()
        self._repo = self._config.repository_id
        problem = adapter.repository_id_problem(self._repo)
        if problem is not None:
            raise InputError(f"repository id {self._repo!r} cannot be used on {adapter.address}: {problem}")
        #: The adapter's layout decides the bytes; ``codec`` overrides its object codec (tests).
        self._layout = adapter.layout
        self._codec = codec if codec is not None else self._layout.codec
        self._clock = clock
        limit = adapter.capabilities.hard_object_size_limit
        self._hard_limit = INT_MAX if limit is None else limit
        #: The adapter, where it keeps objects as themselves (persist_spi.live_objects). Not with
        #: a size limit (checking it needs the bytes) nor with a codec given by a test (whose
        #: bytes the test wants written).
        self._live: LiveObjectStore | None = (
            adapter
            if isinstance(adapter, LiveObjectStore)
            and adapter.takes_live_objects
            and limit is None
            and codec is None
            else None
        )

    @property
    def adapter(self) -> BackendAdapter:
        return self._adapter

    @property
    def config(self) -> StoreConfig:
        return self._config

    @property
    def hard_object_size_limit(self) -> int:
        return self._hard_limit

    def __repr__(self) -> str:
        return f"AdapterPersist({self._adapter.name}, repository_id={self._repo!r})"

    # --- objects ---------------------------------------------------------------------------------

    def fetch_typed_objs_if_exist(
        self, ids: Sequence[ObjId | None], obj_type: ObjType | None
    ) -> list[Obj | None]:
        wanted = list(dict.fromkeys(i for i in ids if i is not None and is_fetchable(i)))
        if not wanted:
            return [None] * len(ids)
        live = self._live
        rows = (
            self._adapter.fetch_objs(self._repo, wanted)
            if live is None
            else live.fetch_live_objs(self._repo, wanted)
        )
        by_id: dict[bytes, Obj] = {}
        for row in rows:
            if row is None or (obj_type is not None and row.obj_type != obj_type.short_name):
                continue
            if isinstance(row, LiveObjRow):
                kept = row.obj
                by_id[row.obj_id] = (
                    kept if kept.referenced == row.referenced else kept.with_referenced(row.referenced)
                )
            else:
                by_id[row.obj_id] = self._decode(row)
        return [by_id.get(i) if i is not None else None for i in ids]

    def store_objs(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool = False
    ) -> list[bool]:
        live = self._live
        if live is not None:
            kept, slots = self._rows_or_live(objs, ignore_soft_size_restrictions)
            inserted = live.insert_live_objs(self._repo, kept) if kept else []
            return [False if s is None else inserted[s] for s in slots]
        rows, slots = self._rows(objs, ignore_soft_size_restrictions)
        if not rows:
            return [False] * len(objs)
        inserted = self._adapter.insert_objs(self._repo, rows)
        return [False if s is None else inserted[s] for s in slots]

    def store_objs_and_update_reference(
        self, objs: Sequence[Obj], ref: Reference, new_pointer: ObjId
    ) -> StoredAndMoved:
        live = self._live
        if live is None:
            rows, slots = self._rows(objs, False)
        else:
            kept, slots = self._rows_or_live(objs, False)
        expected, updated = self._pointer_swap(ref, new_pointer)
        new_row = _to_row(updated, self._layout)
        inserted, swapped = (
            self._adapter.insert_objs_and_update_ref(self._repo, rows, expected, new_row)
            if live is None
            else live.insert_live_objs_and_update_ref(self._repo, kept, expected, new_row)
        )
        stored = [False if s is None else inserted[s] for s in slots]
        if swapped is None:
            return StoredAndMoved(stored, None)
        if not swapped:
            self._raise_ref_change_failed(ref.name)
        return StoredAndMoved(stored, updated)

    def _rows(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool
    ) -> tuple[list[ObjRow], list[int | None]]:
        """The rows to send (every size checked first) and each input's position among them
        (None = not sent: no object, or a duplicate id, of which the first occurrence is written)."""
        unique, slots = _first_of_each_id(objs)
        now = self._clock.micros()
        return [self._encode(obj, now, ignore_soft_size_restrictions) for obj in unique], slots

    def _rows_or_live(
        self, objs: Sequence[Obj | None], ignore_soft_size_restrictions: bool
    ) -> tuple[list[ObjRow | LiveObjRow], list[int | None]]:
        """:meth:`_rows` for an adapter that keeps objects live: an object of a type it may keep
        is checked as it would be and not serialised; the others become rows."""
        unique, slots = _first_of_each_id(objs)
        now = self._clock.micros()
        return [self._row_or_live(obj, now, ignore_soft_size_restrictions) for obj in unique], slots

    def _row_or_live(self, obj: Obj, now: int, ignore_soft_size_restrictions: bool) -> ObjRow | LiveObjRow:
        type_name = LIVE_OBJ_TYPES.get(type(obj))
        if type_name is None:
            return self._encode(obj, now, ignore_soft_size_restrictions)
        self._check_storable(obj, ignore_soft_size_restrictions)
        return LiveObjRow(obj.id, type_name, None, obj, now)

    def upsert_objs(self, objs: Sequence[Obj | None]) -> None:
        now = self._clock.micros()
        rows = {o.id: self._encode(o, now, False) for o in objs if o is not None}
        if rows:
            self._adapter.upsert_objs(self._repo, list(rows.values()))

    def delete_objs(self, ids: Sequence[ObjId | None]) -> None:
        wanted = list(dict.fromkeys(i for i in ids if i is not None))
        if wanted:
            self._adapter.delete_objs(self._repo, wanted)

    def delete_with_referenced(self, obj: Obj) -> bool:
        return self._adapter.delete_obj_if_referenced(self._repo, obj.id, obj.referenced)

    def update_conditional(self, expected: Obj, new: Obj) -> bool:
        expected_token = _version_token(expected)
        new_token = _version_token(new)
        if expected.id != new.id:
            raise InputError(f"Conditional update must keep the id: {expected.id} != {new.id}")
        if expected.obj_type != new.obj_type:
            raise InputError(f"Conditional update must keep the type: {expected.obj_type} != {new.obj_type}")
        if expected_token == new_token:
            raise InputError(
                f"Conditional update of {new.id} needs a new version token, got the same '{new_token}'"
            )
        row = self._encode(new, self._clock.micros(), False)
        return self._adapter.update_obj_if_version(
            self._repo, expected.obj_type.short_name, expected_token, row
        )

    def delete_conditional(self, obj: Obj) -> bool:
        return self._adapter.delete_obj_if_version(
            self._repo, obj.id, obj.obj_type.short_name, _version_token(obj)
        )

    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        codes = frozenset(t.short_name for t in types) if types else None
        rows = self._adapter.scan_objs(self._repo, codes)
        try:
            for row in rows:
                yield self._decode(row)
        finally:
            close = getattr(rows, "close", None)
            if close is not None:
                close()

    def erase(self) -> None:
        self._adapter.erase_repositories([self._repo])

    # --- references ------------------------------------------------------------------------------

    def add_reference(self, ref: Reference) -> Reference:
        if ref.deleted:
            raise InputError(f"Reference {ref.name} must not be marked deleted when added")
        if not self._adapter.insert_ref(self._repo, _to_row(ref, self._layout)):
            raise RefAlreadyExists(self.fetch_reference(ref.name), ref.name)
        return ref

    def mark_reference_as_deleted(self, ref: Reference) -> Reference:
        expected = _to_row(ref.with_deleted(False), self._layout)
        new = expected._replace(deleted=True)
        if not self._adapter.update_ref(self._repo, expected, new):
            self._raise_ref_change_failed(ref.name)
        return ref.with_deleted(True)

    def purge_reference(self, ref: Reference) -> None:
        if not self._adapter.delete_ref(self._repo, _to_row(ref.with_deleted(True), self._layout)):
            self._raise_ref_change_failed(ref.name)

    def update_reference_pointer(self, ref: Reference, new_pointer: ObjId) -> Reference:
        expected, updated = self._pointer_swap(ref, new_pointer)
        if not self._adapter.update_ref(self._repo, expected, _to_row(updated, self._layout)):
            self._raise_ref_change_failed(ref.name)
        return updated

    def _pointer_swap(self, ref: Reference, new_pointer: ObjId) -> tuple[RefRow, Reference]:
        """The expected row of moving ``ref`` (live) to ``new_pointer``, and the reference after it."""
        current = ref.with_deleted(False)
        updated = current.for_new_pointer(new_pointer, self._config, self._clock.micros())
        return _to_row(current, self._layout), updated

    def fetch_references(self, names: Sequence[str | None]) -> list[Reference | None]:
        wanted = list(dict.fromkeys(n for n in names if n is not None))
        if not wanted:
            return [None] * len(names)
        rows = self._adapter.fetch_refs(self._repo, wanted)
        by_name = {row.name: _from_row(row, self._layout) for row in rows if row is not None}
        return [by_name.get(n) if n is not None else None for n in names]

    def _raise_ref_change_failed(self, name: str) -> None:
        current = self.fetch_reference(name)
        if current is None:
            raise RefNotFound(name)
        raise RefConditionFailed(current)

    # --- encoding and size checks ----------------------------------------------------------------

    def _encode(self, obj: Obj, now: int, ignore_soft_size_restrictions: bool) -> ObjRow:
        self._check_storable(obj, ignore_soft_size_restrictions)
        encoded = self._codec.encode(obj)
        if len(encoded.data) > self._hard_limit:
            raise ObjTooLarge(len(encoded.data), self._hard_limit, obj.id, f"serialised {obj.obj_type}")
        return ObjRow(obj.id, encoded.type_short_name, encoded.version_token, encoded.data, now)

    def _check_storable(self, obj: Obj, ignore_soft_size_restrictions: bool) -> None:
        """What every object stored is checked for before anything is written: an id, and
        (unless ignored) the soft size limits."""
        if not isinstance(obj.id, ObjId) or not obj.id:
            raise InputError(f"{type(obj).__name__} has no id; derive it before storing")
        if not ignore_soft_size_restrictions:
            self._check_soft_limits(obj)

    def _check_soft_limits(self, obj: Obj) -> None:
        if isinstance(obj, CommitObj):
            limit = self.effective_incremental_index_size_limit
            if len(obj.incremental_index) > limit:
                raise ObjTooLarge(len(obj.incremental_index), limit, obj.id, "incremental index of commit")
        elif isinstance(obj, IndexObj):
            limit = self.effective_index_segment_size_limit
            if len(obj.index) > limit:
                raise ObjTooLarge(len(obj.index), limit, obj.id, "index segment")

    def _decode(self, row: ObjRow) -> Obj:
        return self._codec.decode(
            trusted_obj_id(row.obj_id), row.obj_type, row.data, row.referenced, row.version_token
        )


def _first_of_each_id(objs: Sequence[Obj | None]) -> tuple[list[Obj], list[int | None]]:
    """The objects to send, each id once (its first occurrence), and each input's position among
    them (None: no object, or an id seen before)."""
    unique: list[Obj] = []
    slots: list[int | None] = []
    seen: set[bytes] = set()
    for obj in objs:
        if obj is None or obj.id in seen:
            slots.append(None)
            continue
        seen.add(obj.id)
        slots.append(len(unique))
        unique.append(obj)
    return unique, slots


def _version_token(obj: Obj) -> str:
    token = obj.version_token if isinstance(obj, (UpdateableObj, GenericObj)) else None
    if token is None:
        raise InputError(
            f"{type(obj).__name__} {obj.id} has no version token; only updateable objects can be "
            "updated or deleted conditionally"
        )
    return token


def _to_row(ref: Reference, layout: StorageLayout) -> RefRow:
    """The row of ``ref``; as the expected row of a compare-and-swap it carries the history the
    caller holds: most adapters compare only :meth:`RefRow.same_condition`'s fields, but one that
    compares the whole stored reference (Bigtable in Nessie's layout) needs the history too."""
    return RefRow(
        ref.name,
        bytes(ref.pointer),
        ref.deleted,
        ref.created_at_micros,
        None if ref.extended_info_obj is None else bytes(ref.extended_info_obj),
        layout.encode_history(ref.previous_pointers),
    )


def _from_row(row: RefRow, layout: StorageLayout) -> Reference:
    return Reference(
        name=row.name,
        pointer=trusted_obj_id(row.pointer),
        deleted=row.deleted,
        created_at_micros=row.created_at_micros,
        extended_info_obj=None if row.extended_info is None else trusted_obj_id(row.extended_info),
        previous_pointers=layout.decode_history(row.previous_pointers),
    )
