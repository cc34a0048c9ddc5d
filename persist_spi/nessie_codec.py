"""Nessie's object codec: every object as the protobuf ``ObjProto`` Nessie's storage stores.

The bytes are the ones Nessie's ``ProtoSerialization`` writes, so a Nessie server and lochkit can
read each other's objects. What decides them:

- fields go out in field-number order; a proto3 scalar equal to its default is left out, except an
  ``optional`` field that is set (``reference_index``, a ref's ``extended_info_obj``, a string's
  ``filename``, a tag's ``message`` and ``signature``, a custom object's ``version_token``), which
  is written even when empty; ``referenced`` (field 11) is always written, 0 included;
- enums are matched by name and never written as 0 (Nessie refuses to read 0);
- object ids are their raw bytes;
- headers are written in the order the object's ``CommitHeaders`` holds them (Nessie writes the
  iteration order of its Java map; headers decoded here keep the order they were stored in).

Custom objects (lochkit's registered types, generic and opaque objects) go into ``CustomProto``:
their short type name, the Jackson Smile data :mod:`persist_spi.nessie_custom` makes of their
fields, its compression and (only where the backend wants it inside) the version token. A value
Smile has no form for raises :class:`NotStorableInNessieLayout`.

Size limits are not checked here: the Persist checks them before encoding, as for every codec.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, NamedTuple

from persist_spi.codec import CorruptObject, EncodedObj
from persist_spi.errors import CorruptData, InputError
from persist_spi.headers import CommitHeaders
from persist_spi.ids import ObjId
from persist_spi.keys import StoreKey
from persist_spi.nessie_custom import NotStorableInNessieLayout as NotStorableInNessieLayout
from persist_spi.nessie_custom import decode_custom, encode_custom
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
    RefObj,
    StringObj,
    TagObj,
    UniqueIdObj,
    UpdateableObj,
)
from persist_spi.protowire import ProtoField, ProtoWriter, as_int32, as_int64, iter_fields

# ObjProto's oneof field numbers, and field 11.
_COMMIT: Final = 2
_REF: Final = 3
_VALUE: Final = 4
_INDEX_SEGMENTS: Final = 5
_INDEX: Final = 6
_STRING: Final = 7
_TAG: Final = 8
_CUSTOM: Final = 9
_UNIQUE: Final = 10
_REFERENCED: Final = 11

# CommitTypeProto and CompressionProto numbers, by lochkit's enum (0 is "unknown" to Nessie).
_COMMIT_TYPE_NUMBERS: Final = {CommitType.NORMAL: 1, CommitType.INTERNAL: 2}
_COMPRESSION_NUMBERS: Final = {
    Compression.NONE: 1,
    Compression.GZIP: 2,
    Compression.DEFLATE: 3,
    Compression.ZSTD: 4,
    Compression.LZ4: 5,
    Compression.SNAPPY: 6,
}
_COMMIT_TYPES: Final = {number: t for t, number in _COMMIT_TYPE_NUMBERS.items()}
_COMPRESSIONS: Final = {number: c for c, number in _COMPRESSION_NUMBERS.items()}


# --- writing -------------------------------------------------------------------------------------


def _put_str(w: ProtoWriter, number: int, value: str) -> None:
    if value:
        w.string_field(number, value)


def _put_bytes(w: ProtoWriter, number: int, value: bytes) -> None:
    if value:
        w.bytes_field(number, value)


def _put_int(w: ProtoWriter, number: int, value: int) -> None:
    if value:
        w.varint_field(number, value)


def _headers(headers: CommitHeaders) -> Iterable[bytes]:
    for name, values in headers.items():
        entry = ProtoWriter()
        _put_str(entry, 1, name)
        for value in values:
            entry.string_field(2, value)  # repeated: every element, empty ones too
        yield entry.to_bytes()


def _stripe(stripe: IndexStripe) -> bytes:
    w = ProtoWriter()
    _put_str(w, 1, stripe.first_key)
    _put_str(w, 2, stripe.last_key)
    _put_bytes(w, 3, stripe.segment)
    return w.to_bytes()


def _commit(o: CommitObj, w: ProtoWriter) -> None:
    _put_int(w, 1, o.created)
    _put_int(w, 2, o.seq)
    for parent in o.tail:
        w.bytes_field(3, parent)
    for parent in o.secondary_parents:
        w.bytes_field(4, parent)
    for entry in _headers(o.headers):
        w.bytes_field(5, entry)
    _put_str(w, 6, o.message)
    if o.reference_index is not None:
        w.bytes_field(7, o.reference_index)
    for stripe in o.reference_index_stripes:
        w.bytes_field(8, _stripe(stripe))
    _put_bytes(w, 9, o.incremental_index)
    if o.incomplete_index:
        w.bool_field(10, True)
    w.varint_field(11, _COMMIT_TYPE_NUMBERS[o.commit_type])


def _ref(o: RefObj, w: ProtoWriter) -> None:
    _put_str(w, 1, o.name)
    _put_bytes(w, 2, o.initial_pointer)
    _put_int(w, 3, o.created_at_micros)
    if o.extended_info_obj is not None:
        w.bytes_field(4, o.extended_info_obj)


def _value(o: ContentValueObj, w: ProtoWriter) -> None:
    _put_str(w, 1, o.content_id)
    _put_int(w, 2, o.payload)
    _put_bytes(w, 3, o.data)


def _segments(o: IndexSegmentsObj, w: ProtoWriter) -> None:
    for stripe in o.stripes:
        w.bytes_field(1, _stripe(stripe))


def _index(o: IndexObj, w: ProtoWriter) -> None:
    _put_bytes(w, 1, o.index)


def _string(o: StringObj, w: ProtoWriter) -> None:
    _put_str(w, 1, o.content_type)
    w.varint_field(2, _COMPRESSION_NUMBERS[o.compression])
    if o.filename is not None:
        w.string_field(3, o.filename)
    for predecessor in o.predecessors:
        w.bytes_field(4, predecessor)
    _put_bytes(w, 54, o.text)


def _tag(o: TagObj, w: ProtoWriter) -> None:
    if o.message is not None:
        w.string_field(2, o.message)
    for entry in _headers(o.headers or CommitHeaders()):
        w.bytes_field(3, entry)
    if o.signature is not None:
        w.bytes_field(4, o.signature)


def _unique(o: UniqueIdObj, w: ProtoWriter) -> None:
    _put_str(w, 1, o.space)
    _put_bytes(w, 2, o.value)


def _custom(o: Obj, w: ProtoWriter, include_version_token: bool) -> None:
    data, compression = encode_custom(o)
    _put_str(w, 1, o.obj_type.short_name)
    _put_bytes(w, 2, data)
    w.varint_field(3, _COMPRESSION_NUMBERS[compression])
    token = _version_token(o)
    if include_version_token and token is not None:
        w.string_field(4, token)


def _version_token(o: Obj) -> str | None:
    return o.version_token if isinstance(o, (GenericObj, UpdateableObj)) else None


_Writer = Callable[[Any, ProtoWriter], None]
_WRITERS: Final[dict[type[Obj], tuple[int, _Writer]]] = {
    CommitObj: (_COMMIT, _commit),
    RefObj: (_REF, _ref),
    ContentValueObj: (_VALUE, _value),
    IndexSegmentsObj: (_INDEX_SEGMENTS, _segments),
    IndexObj: (_INDEX, _index),
    StringObj: (_STRING, _string),
    TagObj: (_TAG, _tag),
    UniqueIdObj: (_UNIQUE, _unique),
}


def encode_obj_proto(obj: Obj, *, include_version_token: bool) -> bytes:
    """The ``ObjProto`` Nessie stores for ``obj``, with ``obj.referenced`` in field 11."""
    message = ProtoWriter()
    writer = _WRITERS.get(type(obj))
    if writer is not None:
        number, write = writer
        write(obj, message)
    else:
        number = _CUSTOM
        _custom(obj, message, include_version_token)
    return (
        ProtoWriter()
        .bytes_field(number, message.to_bytes())
        .varint_field(_REFERENCED, obj.referenced)
        .to_bytes()
    )


# --- reading -------------------------------------------------------------------------------------


def _fields(data: bytes) -> Iterable[ProtoField]:
    return iter_fields(data)


def _id(field: ProtoField) -> ObjId:
    return ObjId(field.as_bytes())


def _optional_id(field: ProtoField) -> ObjId | None:
    """An optional id field that is present: empty bytes mean no id, as Nessie reads them."""
    raw = field.as_bytes()
    return ObjId(raw) if raw else None


def _enum(field: ProtoField, values: dict[int, Any], what: str) -> Any:
    found = values.get(field.as_uint())
    if found is None:
        raise CorruptData(f"{what} {field.as_uint()} is not one Nessie writes")
    return found


def _read_headers(entries: Sequence[bytes]) -> CommitHeaders:
    merged: dict[str, list[str]] = {}
    for entry in entries:
        name = ""
        values: list[str] = []
        for f in _fields(entry):
            if f.number == 1:
                name = f.as_str()
            elif f.number == 2:
                values.append(f.as_str())
        if values:  # Nessie adds a header per value: a name without values is no header
            merged.setdefault(name.lower(), []).extend(values)
    return CommitHeaders(merged)


def _read_stripe(data: bytes) -> IndexStripe:
    first = last = ""
    segment = ObjId()
    for f in _fields(data):
        if f.number == 1:
            first = f.as_str()
        elif f.number == 2:
            last = f.as_str()
        elif f.number == 3:
            segment = _id(f)
    return IndexStripe(StoreKey(first), StoreKey(last), segment)


def _read_commit(obj_id: ObjId, referenced: int, data: bytes) -> CommitObj:
    created = seq = 0
    tail: list[ObjId] = []
    secondary: list[ObjId] = []
    headers: list[bytes] = []
    message = ""
    reference_index: ObjId | None = None
    stripes: list[IndexStripe] = []
    incremental = b""
    incomplete = False
    commit_type: CommitType | None = None
    for f in _fields(data):
        match f.number:
            case 1:
                created = as_int64(f.as_uint())
            case 2:
                seq = as_int64(f.as_uint())
            case 3:
                tail.append(_id(f))
            case 4:
                secondary.append(_id(f))
            case 5:
                headers.append(f.as_bytes())
            case 6:
                message = f.as_str()
            case 7:
                reference_index = _optional_id(f)
            case 8:
                stripes.append(_read_stripe(f.as_bytes()))
            case 9:
                incremental = f.as_bytes()
            case 10:
                incomplete = bool(f.as_uint())
            case 11:
                commit_type = _enum(f, _COMMIT_TYPES, "commit type")
    if commit_type is None:
        raise CorruptData("the commit has no commit type")
    return CommitObj(
        id=obj_id,
        referenced=referenced,
        created=created,
        seq=seq,
        tail=tuple(tail),
        secondary_parents=tuple(secondary),
        headers=_read_headers(headers),
        message=message,
        incremental_index=incremental,
        reference_index=reference_index,
        reference_index_stripes=tuple(stripes),
        incomplete_index=incomplete,
        commit_type=commit_type,
    )


def _read_ref(obj_id: ObjId, referenced: int, data: bytes) -> RefObj:
    name = ""
    initial_pointer = ObjId()
    created = 0
    extended_info: ObjId | None = None
    for f in _fields(data):
        match f.number:
            case 1:
                name = f.as_str()
            case 2:
                initial_pointer = _id(f)
            case 3:
                created = as_int64(f.as_uint())
            case 4:
                extended_info = _optional_id(f)
    return RefObj(
        id=obj_id,
        referenced=referenced,
        name=name,
        initial_pointer=initial_pointer,
        created_at_micros=created,
        extended_info_obj=extended_info,
    )


def _read_value(obj_id: ObjId, referenced: int, data: bytes) -> ContentValueObj:
    content_id = ""
    payload = 0
    value = b""
    for f in _fields(data):
        match f.number:
            case 1:
                content_id = f.as_str()
            case 2:
                payload = as_int32(f.as_uint())
            case 3:
                value = f.as_bytes()
    return ContentValueObj(
        id=obj_id, referenced=referenced, content_id=content_id, payload=payload, data=value
    )


def _read_segments(obj_id: ObjId, referenced: int, data: bytes) -> IndexSegmentsObj:
    stripes = tuple(_read_stripe(f.as_bytes()) for f in _fields(data) if f.number == 1)
    return IndexSegmentsObj(id=obj_id, referenced=referenced, stripes=stripes)


def _read_index(obj_id: ObjId, referenced: int, data: bytes) -> IndexObj:
    index = b""
    for f in _fields(data):
        if f.number == 1:
            index = f.as_bytes()
    return IndexObj(id=obj_id, referenced=referenced, index=index)


def _read_string(obj_id: ObjId, referenced: int, data: bytes) -> StringObj:
    content_type = ""
    compression: Compression | None = None
    filename: str | None = None
    predecessors: list[ObjId] = []
    text = b""
    for f in _fields(data):
        match f.number:
            case 1:
                content_type = f.as_str()
            case 2:
                compression = _enum(f, _COMPRESSIONS, "compression")
            case 3:
                filename = f.as_str()
            case 4:
                predecessors.append(_id(f))
            case 54:
                text = f.as_bytes()
    if compression is None:
        raise CorruptData("the string object has no compression")
    return StringObj(
        id=obj_id,
        referenced=referenced,
        content_type=content_type,
        compression=compression,
        filename=filename,
        predecessors=tuple(predecessors),
        text=text,
    )


def _read_tag(obj_id: ObjId, referenced: int, data: bytes) -> TagObj:
    message: str | None = None
    headers: list[bytes] = []
    signature: bytes | None = None
    for f in _fields(data):
        match f.number:
            case 2:
                message = f.as_str()
            case 3:
                headers.append(f.as_bytes())
            case 4:
                signature = f.as_bytes()
    return TagObj(
        id=obj_id,
        referenced=referenced,
        message=message,
        headers=_read_headers(headers) if headers else None,  # no entries: no headers, as in Nessie
        signature=signature,
    )


def _read_unique(obj_id: ObjId, referenced: int, data: bytes) -> UniqueIdObj:
    space = ""
    value = b""
    for f in _fields(data):
        match f.number:
            case 1:
                space = f.as_str()
            case 2:
                value = f.as_bytes()
    return UniqueIdObj(id=obj_id, referenced=referenced, space=space, value=value)


class _Custom(NamedTuple):
    type_name: str
    data: bytes
    compression: Compression
    version_token: str | None


def _read_custom_fields(data: bytes) -> _Custom:
    type_name = ""
    payload = b""
    compression: Compression | None = None
    token: str | None = None
    for f in _fields(data):
        match f.number:
            case 1:
                type_name = f.as_str()
            case 2:
                payload = f.as_bytes()
            case 3:
                compression = _enum(f, _COMPRESSIONS, "compression")
            case 4:
                token = f.as_str()
    if not type_name:
        raise CorruptData("the custom object names no type")
    if compression is None:
        raise CorruptData("the custom object has no compression")
    return _Custom(type_name, payload, compression, token)


_Reader = Callable[[ObjId, int, bytes], Obj]
_READERS: Final[dict[int, tuple[str, _Reader]]] = {
    _COMMIT: (CommitObj.TYPE.short_name, _read_commit),
    _REF: (RefObj.TYPE.short_name, _read_ref),
    _VALUE: (ContentValueObj.TYPE.short_name, _read_value),
    _INDEX_SEGMENTS: (IndexSegmentsObj.TYPE.short_name, _read_segments),
    _INDEX: (IndexObj.TYPE.short_name, _read_index),
    _STRING: (StringObj.TYPE.short_name, _read_string),
    _TAG: (TagObj.TYPE.short_name, _read_tag),
    _UNIQUE: (UniqueIdObj.TYPE.short_name, _read_unique),
}


class ObjFrame(NamedTuple):
    """What a backend keeps beside an object but RocksDB keeps only inside it: its type's short
    name, the version token stored inside (None if none) and ``referenced``."""

    type_short_name: str
    version_token: str | None
    referenced: int


def _split(data: bytes) -> tuple[int, bytes, int]:
    """The oneof field number, its message bytes, and ``referenced`` (0 when absent)."""
    number = 0
    message = b""
    referenced = 0
    for f in _fields(data):
        if f.number == _REFERENCED:
            referenced = as_int64(f.as_uint())
        elif f.number in _READERS or f.number == _CUSTOM:
            number, message = f.number, f.as_bytes()  # a oneof: the last one set wins
    if not number:
        raise CorruptData("the bytes hold no object (no ObjProto field Nessie writes)")
    return number, message, referenced


def obj_frame(data: bytes) -> ObjFrame:
    """Type, inner version token and ``referenced`` of stored ``ObjProto`` bytes, for a backend
    that keeps them nowhere else (RocksDB). ``CorruptData`` if the bytes are no object."""
    number, message, referenced = _split(data)
    if number == _CUSTOM:
        custom = _read_custom_fields(message)
        return ObjFrame(custom.type_name, custom.version_token, referenced)
    return ObjFrame(_READERS[number][0], None, referenced)


# --- RocksDB's stored form ------------------------------------------------------------------------
#
# The core hands an adapter the column form (what the column backends store: the version token in
# its own column, ``referenced`` in field 11 as the codec wrote it). Nessie's RocksDB backend keeps
# both inside the value: field 11 holds the row's ``referenced`` and a custom object's
# ``CustomProto`` holds the token (field 4, written last). These helpers move between the two forms.


def _reframe(data: bytes, referenced: int, token: str | None, keep_token: bool) -> bytes:
    """``data`` with field 11 set to ``referenced`` (written last, as Nessie does) and the custom
    object's token replaced by ``token`` (None: none) unless ``keep_token``. Fields unknown here are
    kept in their place."""
    out = ProtoWriter()
    kind = 0  # the oneof field number: the object's kind
    for f in _fields(data):
        if f.number == _REFERENCED:
            continue
        if f.number == _CUSTOM and not keep_token:
            out.bytes_field(_CUSTOM, _custom_with_token(f.as_bytes(), token))
        else:
            out.copy_field(f)
        if f.number in _READERS or f.number == _CUSTOM:
            kind = f.number
    if not kind:
        raise CorruptData("the bytes hold no object (no ObjProto field Nessie writes)")
    if token is not None and not keep_token and kind != _CUSTOM:
        raise InputError(
            "Nessie's layout keeps a version token only inside custom objects; this object is of a "
            "standard type, which has none"
        )
    return out.varint_field(_REFERENCED, referenced).to_bytes()


def _custom_with_token(message: bytes, token: str | None) -> bytes:
    out = ProtoWriter()
    for f in _fields(message):
        if f.number != 4:
            out.copy_field(f)
    if token is not None:
        out.string_field(4, token)
    return out.to_bytes()


def stored_obj_value(column_data: bytes, version_token: str | None, referenced: int) -> bytes:
    """The value Nessie's RocksDB backend stores for an object given in the column form: the token
    inside the custom object (``serializeObj(..., includeVersionToken=true)``) and ``referenced`` in
    field 11. ``CorruptData`` if ``column_data`` is no object, ``InputError`` for a token on a
    standard object (Nessie's layout has no place for it)."""
    return _reframe(column_data, referenced, version_token, keep_token=False)


def column_obj_data(stored: bytes) -> tuple[bytes, ObjFrame]:
    """The column form of a stored RocksDB value (no token inside, field 11 zero, so it equals what
    the codec writes for a new object) and the value's frame (:func:`obj_frame`), which carries
    type, token and ``referenced`` beside it: one pass over the value for both."""
    out = ProtoWriter()
    frame: ObjFrame | None = None
    referenced = 0
    for f in _fields(stored):
        if f.number == _REFERENCED:
            referenced = as_int64(f.as_uint())
        elif f.number == _CUSTOM:
            message = f.as_bytes()
            custom = _read_custom_fields(message)
            frame = ObjFrame(custom.type_name, custom.version_token, 0)
            out.bytes_field(_CUSTOM, _custom_with_token(message, None))
        else:
            out.copy_field(f)
            if f.number in _READERS:
                frame = ObjFrame(_READERS[f.number][0], None, 0)
    if frame is None:
        raise CorruptData("the bytes hold no object (no ObjProto field Nessie writes)")
    return out.varint_field(_REFERENCED, 0).to_bytes(), frame._replace(referenced=referenced)


def restamped_obj_value(stored: bytes, referenced: int) -> bytes:
    """A stored RocksDB value with only ``referenced`` changed: what Nessie writes when an object
    that is already there is stored again (the existing object, re-serialised)."""
    return _reframe(stored, referenced, None, keep_token=True)


def decode_obj_proto(
    obj_id: ObjId, type_short_name: str, data: bytes, referenced: int, version_token: str | None
) -> Obj:
    """The object stored as ``data``. As in Nessie, ``referenced`` comes from the backend's column
    unless that is 0, and the version token from the column unless that is None; an empty
    ``type_short_name`` means the backend does not know the type (RocksDB)."""
    try:
        number, message, stored_referenced = _split(data)
        referenced = referenced or stored_referenced
        if number == _CUSTOM:
            custom = _read_custom_fields(message)
            stored_type = custom.type_name
            obj: Obj = decode_custom(
                obj_id,
                referenced,
                custom.type_name,
                custom.data,
                custom.compression,
                version_token if version_token is not None else custom.version_token,
            )
        else:
            stored_type, read = _READERS[number]
            obj = read(obj_id, referenced, message)
        if type_short_name and type_short_name != stored_type:
            raise CorruptData(f"the row says type {type_short_name!r}, the bytes hold type {stored_type!r}")
        return obj
    except (CorruptData, ValueError) as e:  # ObjId lengths, UTF-8, wire types: all corrupt bytes
        raise CorruptObject(obj_id, f"{type(e).__name__}: {e}") from e


class NessieObjCodec:
    """An :class:`~persist_spi.codec.ObjCodec` storing Nessie's ``ObjProto``.

    ``include_version_token`` is what Nessie's backends choose: False for the column backends
    (JDBC2, MONGODB2, CASSANDRA2, DYNAMODB2), which keep the token in a column of its own, True for
    RocksDB, which keeps it inside the custom object's bytes."""

    def __init__(self, *, include_version_token: bool) -> None:
        self.include_version_token = include_version_token

    def encode(self, obj: Obj) -> EncodedObj:
        data = encode_obj_proto(obj, include_version_token=self.include_version_token)
        return EncodedObj(obj.obj_type.short_name, _version_token(obj), data)

    def decode(
        self, obj_id: ObjId, type_short_name: str, data: bytes, referenced: int, version_token: str | None
    ) -> Obj:
        return decode_obj_proto(obj_id, type_short_name, data, referenced, version_token)
