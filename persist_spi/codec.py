"""Serialisation of objects and reference history: the one place that turns objects into bytes.

Backends store the bytes this module produces and never look inside them. Every encoded object
starts with a format-version byte, so a later format can be introduced while old rows stay
readable. A different codec can be given to a Persist (anything with ``encode`` / ``decode``).

Format 1 is msgpack: standard types as a positional array of their fields, custom dataclass types
as a map of field name to value (object ids as msgpack extension type 1), unknown types as the
attribute map they were stored with.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple, Protocol

import msgpack

from persist_spi.errors import CorruptData, InputError, LochkitError
from persist_spi.headers import CommitHeaders
from persist_spi.ids import ObjId, trusted_obj_id
from persist_spi.keys import StoreKey
from persist_spi.objs import (
    CommitObj,
    CommitType,
    Compression,
    ContentValueObj,
    GenericObj,
    IndexObj,
    IndexSegmentsObj,
    IndexStripe,
    Obj,
    OpaqueCustomObj,
    RefObj,
    StringObj,
    TagObj,
    UniqueIdObj,
    UpdateableObj,
)
from persist_spi.objtypes import OBJ_TYPES
from persist_spi.references import PreviousPointer

FORMAT_V1: Final = 1
_OBJ_ID_EXT: Final = 1


class EncodedObj(NamedTuple):
    """What a backend stores for one object, besides its id and ``referenced``."""

    type_short_name: str
    version_token: str | None
    data: bytes


class ObjCodec(Protocol):
    def encode(self, obj: Obj) -> EncodedObj: ...

    def decode(
        self, obj_id: ObjId, type_short_name: str, data: bytes, referenced: int, version_token: str | None
    ) -> Obj: ...


class CorruptObject(LochkitError):
    """Stored bytes could not be decoded."""

    def __init__(self, obj_id: ObjId, reason: str) -> None:
        super().__init__(f"Object {obj_id} cannot be decoded: {reason}")


class CorruptReferenceHistory(CorruptData):
    """The history (former heads) stored with a reference row could not be decoded."""


# --- msgpack helpers -----------------------------------------------------------------------------


def _default(value: Any) -> Any:
    if isinstance(value, ObjId):
        return msgpack.ExtType(_OBJ_ID_EXT, bytes(value))
    if isinstance(value, CommitHeaders):
        return [[name, list(values)] for name, values in value.items()]
    if isinstance(value, (tuple, frozenset, set)):
        return list(value)
    raise TypeError(f"cannot serialise a {type(value).__name__}")


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _OBJ_ID_EXT:
        return ObjId(data)
    return msgpack.ExtType(code, data)


_FORMAT_V1_BYTE: Final = bytes([FORMAT_V1])


class PerThreadPacker:
    """msgpack packing through one ``msgpack.Packer`` per thread. ``msgpack.packb`` builds a new
    Packer per call, which costs several times the packing of a small object; a Packer is not
    thread-safe, hence one per thread."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._local = threading.local()

    def pack(self, value: Any) -> bytes:
        local = self._local
        try:
            packer: msgpack.Packer = local.packer
        except AttributeError:
            packer = local.packer = msgpack.Packer(**self._options)
        try:
            packed: bytes = packer.pack(value)
        except BaseException:
            # A failed pack may leave partial output in the packer's buffer: start the next one clean.
            local.__dict__.pop("packer", None)
            raise
        return packed


# ObjId is a bytes subclass, so plain ``bytes`` handling would swallow it; strict_types routes
# subclasses through ``_default``.
_PACKER: Final = PerThreadPacker(default=_default, use_bin_type=True, strict_types=True)


def _pack(value: Any) -> bytes:
    return _FORMAT_V1_BYTE + _PACKER.pack(value)


def _unpack(data: bytes) -> Any:
    if not data:
        raise CorruptData("no bytes")
    if data[0] != FORMAT_V1:
        raise CorruptData(f"unknown format version {data[0]}; this lochkit reads version {FORMAT_V1}")
    return msgpack.unpackb(data[1:], ext_hook=_ext_hook, raw=False, use_list=False, strict_map_key=False)


def _plain(value: Any) -> Any:
    """Values packed positionally: ids as plain bytes (smaller than the extension form)."""
    return bytes(value) if isinstance(value, ObjId) else value


def _id_or_none(raw: bytes | None) -> ObjId | None:
    return None if raw is None else trusted_obj_id(raw)


def _ids(raw: Sequence[bytes]) -> tuple[ObjId, ...]:
    return tuple(map(trusted_obj_id, raw))


def _headers_out(headers: CommitHeaders | None) -> list[list[Any]] | None:
    if headers is None:
        return None
    return [[name, list(values)] for name, values in headers.items()]


def _headers_in(raw: Sequence[Sequence[Any]] | None) -> CommitHeaders | None:
    if raw is None:
        return None
    return CommitHeaders({name: tuple(values) for name, values in raw})


def _stripes_out(stripes: Sequence[IndexStripe]) -> list[list[Any]]:
    return [[s.first_key, s.last_key, bytes(s.segment)] for s in stripes]


def _stripes_in(raw: Sequence[Sequence[Any]]) -> tuple[IndexStripe, ...]:
    return tuple(IndexStripe(StoreKey(f), StoreKey(la), trusted_obj_id(seg)) for f, la, seg in raw)


# --- standard types: positional field arrays ------------------------------------------------------

_Encoder = Callable[[Any], list[Any]]
_Decoder = Callable[[ObjId, int, Sequence[Any]], Obj]


def _enc_commit(o: CommitObj) -> list[Any]:
    return [
        o.created,
        o.seq,
        [bytes(t) for t in o.tail],
        [bytes(p) for p in o.secondary_parents],
        _headers_out(o.headers),
        o.message,
        o.incremental_index,
        _plain(o.reference_index),
        _stripes_out(o.reference_index_stripes),
        o.incomplete_index,
        o.commit_type.value,
    ]


def _dec_commit(i: ObjId, r: int, f: Sequence[Any]) -> CommitObj:
    headers = _headers_in(f[4])
    return CommitObj(
        id=i,
        referenced=r,
        created=f[0],
        seq=f[1],
        tail=_ids(f[2]),
        secondary_parents=_ids(f[3]),
        headers=headers if headers is not None else CommitHeaders(),
        message=f[5],
        incremental_index=f[6],
        reference_index=_id_or_none(f[7]),
        reference_index_stripes=_stripes_in(f[8]),
        incomplete_index=f[9],
        commit_type=CommitType(f[10]),
    )


def _enc_value(o: ContentValueObj) -> list[Any]:
    return [o.content_id, o.payload, o.data]


def _dec_value(i: ObjId, r: int, f: Sequence[Any]) -> ContentValueObj:
    return ContentValueObj(id=i, referenced=r, content_id=f[0], payload=f[1], data=f[2])


def _enc_ref(o: RefObj) -> list[Any]:
    return [o.name, bytes(o.initial_pointer), o.created_at_micros, _plain(o.extended_info_obj)]


def _dec_ref(i: ObjId, r: int, f: Sequence[Any]) -> RefObj:
    return RefObj(
        id=i,
        referenced=r,
        name=f[0],
        initial_pointer=trusted_obj_id(f[1]),
        created_at_micros=f[2],
        extended_info_obj=_id_or_none(f[3]),
    )


def _enc_tag(o: TagObj) -> list[Any]:
    return [o.message, _headers_out(o.headers), o.signature]


def _dec_tag(i: ObjId, r: int, f: Sequence[Any]) -> TagObj:
    return TagObj(id=i, referenced=r, message=f[0], headers=_headers_in(f[1]), signature=f[2])


def _enc_string(o: StringObj) -> list[Any]:
    return [o.content_type, o.compression.value, o.filename, [bytes(p) for p in o.predecessors], o.text]


def _dec_string(i: ObjId, r: int, f: Sequence[Any]) -> StringObj:
    return StringObj(
        id=i,
        referenced=r,
        content_type=f[0],
        compression=Compression(f[1]),
        filename=f[2],
        predecessors=_ids(f[3]),
        text=f[4],
    )


def _enc_segments(o: IndexSegmentsObj) -> list[Any]:
    return [_stripes_out(o.stripes)]


def _dec_segments(i: ObjId, r: int, f: Sequence[Any]) -> IndexSegmentsObj:
    return IndexSegmentsObj(id=i, referenced=r, stripes=_stripes_in(f[0]))


def _enc_index(o: IndexObj) -> list[Any]:
    return [o.index]


def _dec_index(i: ObjId, r: int, f: Sequence[Any]) -> IndexObj:
    return IndexObj(id=i, referenced=r, index=f[0])


def _enc_unique(o: UniqueIdObj) -> list[Any]:
    return [o.space, o.value]


def _dec_unique(i: ObjId, r: int, f: Sequence[Any]) -> UniqueIdObj:
    return UniqueIdObj(id=i, referenced=r, space=f[0], value=f[1])


_STANDARD: Final[dict[type[Obj], tuple[_Encoder, _Decoder]]] = {
    CommitObj: (_enc_commit, _dec_commit),
    ContentValueObj: (_enc_value, _dec_value),
    RefObj: (_enc_ref, _dec_ref),
    TagObj: (_enc_tag, _dec_tag),
    StringObj: (_enc_string, _dec_string),
    IndexSegmentsObj: (_enc_segments, _dec_segments),
    IndexObj: (_enc_index, _dec_index),
    UniqueIdObj: (_enc_unique, _dec_unique),
}
_STANDARD_BY_SHORT: Final[dict[str, _Decoder]] = {
    cls.TYPE.short_name: dec for cls, (_, dec) in _STANDARD.items()
}
_NOT_IN_BLOB: Final = frozenset({"id", "referenced", "version_token"})


class _DecodedStripes:
    """Decoded stripe lists of index-segments objects, by their serialised bytes (a bounded LRU).

    Every commit on a large tree reads its reference index's stripe list, which has one entry per
    ~200 KiB of index; decoding it each time would make commit cost grow with the number of keys.
    Equal bytes always decode to the same (immutable) tuple, so sharing it is safe."""

    def __init__(self, max_entries: int = 256) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[bytes, tuple[IndexStripe, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, data: bytes) -> tuple[IndexStripe, ...]:
        with self._lock:
            found = self._entries.get(data)
            if found is not None:
                self._entries.move_to_end(data)
                return found
        stripes = _dec_segments(ObjId(), 0, _unpack(data)).stripes  # the table's decoder, id-free
        with self._lock:
            self._entries[data] = stripes
            if len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return stripes


_SEGMENTS_SHORT: Final = IndexSegmentsObj.TYPE.short_name
_DECODED_STRIPES: Final = _DecodedStripes()


class BinaryCodec:
    """The default codec (format 1)."""

    def encode(self, obj: Obj) -> EncodedObj:
        cls = type(obj)
        standard = _STANDARD.get(cls)
        if standard is not None:
            return EncodedObj(cls.TYPE.short_name, None, _pack(standard[0](obj)))
        if isinstance(obj, OpaqueCustomObj):
            raise InputError(
                f"Object {obj.id} of type {obj.type_name!r} holds data a Nessie server stored that "
                "lochkit cannot decode; only Nessie's layout can store it"
            )
        if isinstance(obj, GenericObj):
            return EncodedObj(obj.type_name, obj.version_token, _pack(dict(obj.attributes)))
        if not dataclasses.is_dataclass(obj):
            raise TypeError(f"{cls.__name__} is not a dataclass; custom object types must be dataclasses")
        fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.name not in _NOT_IN_BLOB}
        token = obj.version_token if isinstance(obj, UpdateableObj) else None
        return EncodedObj(obj.obj_type.short_name, token, _pack(fields))

    def decode(
        self, obj_id: ObjId, type_short_name: str, data: bytes, referenced: int, version_token: str | None
    ) -> Obj:
        try:
            if type_short_name == _SEGMENTS_SHORT:
                stripes = _DECODED_STRIPES.get(data)
                return IndexSegmentsObj(id=obj_id, referenced=referenced, stripes=stripes)
            decoder = _STANDARD_BY_SHORT.get(type_short_name)
            fields = _unpack(data)
            if decoder is not None:
                return decoder(obj_id, referenced, fields)
            obj_type = OBJ_TYPES.by_short_name(type_short_name)
            if obj_type is None or obj_type.cls is GenericObj:
                return GenericObj(
                    id=obj_id,
                    referenced=referenced,
                    type_name=type_short_name,
                    attributes=_thaw(fields),
                    version_token=version_token,
                )
            kwargs: dict[str, Any] = dict(fields)
            if issubclass(obj_type.cls, UpdateableObj):
                kwargs["version_token"] = version_token
            return obj_type.cls(id=obj_id, referenced=referenced, **kwargs)
        except (
            ValueError,
            TypeError,
            KeyError,
            IndexError,
            AttributeError,
            OverflowError,
            msgpack.UnpackException,
        ) as e:  # fields of the wrong shape fail in many ways; each is a corrupt object
            raise CorruptObject(obj_id, f"{type(e).__name__}: {e}") from e


def _thaw(value: Any) -> Any:
    """Generic attributes come back as plain dicts and lists, whatever they were when stored."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


DEFAULT_CODEC: Final = BinaryCodec()


# --- reference history ---------------------------------------------------------------------------


class _PreviousPointersMemo:
    """Reference histories this process encoded or decoded lately (bounded maps).

    Every commit reads its branch's row and writes it back with one more history entry, so each
    history is encoded twice: as the expected row of the compare-and-swap (a history this process
    decoded or wrote itself) and as the new row (the same entries, one more in front, the oldest
    perhaps dropped). Remembering decoded tuples by their bytes turns the next decode into a
    dictionary hit; remembering the bytes of tuples and of single entries by identity turns the
    first encode into a hit and the second into one packed entry and a join. An object held in
    a map cannot be freed, so its ``id`` names no other object while it is there; equal bytes
    always mean an equal (immutable) tuple, so sharing it is safe."""

    def __init__(self, max_entries: int = 1024) -> None:
        self._max_entries = max_entries
        self._decoded: dict[bytes, tuple[PreviousPointer, ...]] = {}
        self._encoded: dict[int, tuple[tuple[PreviousPointer, ...], bytes]] = {}
        self._entries: dict[int, tuple[PreviousPointer, bytes]] = {}

    def encode(self, entries: tuple[PreviousPointer, ...]) -> bytes:
        known = self._encoded.get(id(entries))
        if known is not None and known[0] is entries:
            return known[1]
        # Byte for byte what packing the whole list writes: a msgpack array is its header
        # followed by its items, each packed on its own.
        data = _FORMAT_V1_BYTE + _array_header(len(entries)) + b"".join([self._entry(e) for e in entries])
        self._remember(data, entries)
        return data

    def decode(self, data: bytes) -> tuple[PreviousPointer, ...]:
        found = self._decoded.get(data)
        if found is None:
            found = _decode_previous_pointers_checked(data)
            self._remember(data, found)
        return found

    def _entry(self, entry: PreviousPointer) -> bytes:
        known = self._entries.get(id(entry))
        if known is not None and known[0] is entry:
            return known[1]
        packed = _pack([bytes(entry.pointer), entry.timestamp_micros])[1:]
        entries = self._entries
        if len(entries) >= self._max_entries * 4:
            entries = self._entries = {}
        entries[id(entry)] = (entry, packed)
        return packed

    def _remember(self, data: bytes, entries: tuple[PreviousPointer, ...]) -> None:
        # Whole-map resets instead of LRU bookkeeping: a miss costs one decode or encode, and the
        # maps only need the handful of rows a process is working on. Racing threads may both
        # reset or insert; the worst outcome is a miss.
        decoded = self._decoded
        encoded = self._encoded
        if len(decoded) >= self._max_entries or len(encoded) >= self._max_entries:
            decoded = self._decoded = {}
            encoded = self._encoded = {}
        decoded[data] = entries
        encoded[id(entries)] = (entries, data)


def _array_header(length: int) -> bytes:
    """The header msgpack writes before an array of ``length`` items."""
    if length < 16:
        return bytes((0x90 | length,))
    if length < 0x10000:
        return b"\xdc" + length.to_bytes(2, "big")
    return b"\xdd" + length.to_bytes(4, "big")


_PREVIOUS_POINTERS: Final = _PreviousPointersMemo()


def encode_previous_pointers(entries: Sequence[PreviousPointer]) -> bytes:
    if not entries:
        return b""
    return _PREVIOUS_POINTERS.encode(tuple(entries))


def decode_previous_pointers(data: bytes | None) -> tuple[PreviousPointer, ...]:
    if not data:
        return ()
    return _PREVIOUS_POINTERS.decode(data)


def _decode_previous_pointers_checked(data: bytes) -> tuple[PreviousPointer, ...]:
    """A history read from the database, every id and timestamp checked (bytes the memo has not
    seen may be damaged: they came from storage, not from this process)."""
    try:
        entries = [(ObjId(p), ts) for p, ts in _unpack(data)]
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        raise CorruptReferenceHistory(
            f"A reference's history cannot be decoded: {type(e).__name__}: {e}"
        ) from e
    if not all(isinstance(ts, int) and not isinstance(ts, bool) for _, ts in entries):
        raise CorruptReferenceHistory("A reference's history holds a timestamp that is not an integer")
    return tuple(PreviousPointer(p, ts) for p, ts in entries)
