"""Custom objects in Nessie's layout: the Smile document of their fields, compressed as Nessie does.

Nessie stores a custom object as ``CustomProto{obj_type, data, compression, version_token}``, where
``data`` is what Jackson writes for the object (:mod:`persist_spi.smile`) and is gzipped when it is
longer than 8192 bytes. This module makes that ``data`` and ``compression`` and reads them back:

- a lochkit custom type (a dataclass :class:`~persist_spi.objs.Obj` registered with
  ``register_obj_type``) is a map of its fields in declaration order, each named in camelCase
  (``some_value`` becomes ``someValue``), which is how Jackson names a Java object's properties.
  ``id``, ``referenced`` and ``version_token`` are not in it, as in Nessie. Nessie, not knowing
  the type, reads the map as a ``GenericObj`` with those attributes. lochkit reads it back into the
  dataclass: ids, tuples, mappings and bytes are converted as the field's type hint says;
- a :class:`~persist_spi.objs.GenericObj` (a type this process does not know) is its attributes;
- an :class:`~persist_spi.objs.OpaqueCustomObj` is the data it was read with, unchanged.

Reading an unknown type gives a ``GenericObj`` whose attributes are the decoded map. Where lochkit
cannot decode the data (a compression it cannot undo, such as Snappy, or bytes that are no Smile
map), the object is an ``OpaqueCustomObj`` that is written back verbatim.
"""

from __future__ import annotations

import dataclasses
import gzip
import struct
import types
import typing
import zlib
from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from persist_spi.errors import CorruptData, InputError
from persist_spi.ids import ObjId
from persist_spi.objs import (
    STANDARD_OBJ_TYPES,
    Compression,
    GenericObj,
    Obj,
    OpaqueCustomObj,
    UpdateableObj,
)
from persist_spi.objtypes import OBJ_TYPES
from persist_spi.smile import SmileDecodeError, SmileEncodeError, decode_smile, encode_smile

#: Nessie keeps custom-object data of up to this many bytes uncompressed, and gzips longer data.
KEEP_UNCOMPRESSED: Final = 8192

#: The attribute Nessie's ``GenericObj`` keeps its version token in (and so writes into the data).
VERSION_TOKEN_ATTRIBUTE: Final = "versionToken"

_NOT_IN_DATA: Final = frozenset({"id", "referenced", "version_token"})
_STANDARD_CLASSES: Final = frozenset(t.cls for t in STANDARD_OBJ_TYPES)


class NotStorableInNessieLayout(InputError):
    """An object Nessie's storage format has no place for; nothing was written."""


class CustomData(NamedTuple):
    """A custom object's ``CustomProto`` data and the compression it is stored with."""

    data: bytes
    compression: Compression


# --- compression ---------------------------------------------------------------------------------

# Java's GZIPOutputStream header: no flags, no modification time, no extra flags, OS "unknown".
_JAVA_GZIP_HEADER: Final = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
_GZIP_TRAILER: Final = struct.Struct("<II")


def _gzip(data: bytes) -> bytes:
    """Gzip as Java's GZIPOutputStream writes it: zlib's default level, its header and trailer."""
    deflater = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(data) + deflater.flush()
    return _JAVA_GZIP_HEADER + body + _GZIP_TRAILER.pack(zlib.crc32(data), len(data) & 0xFFFFFFFF)


def compress_as_nessie(smile: bytes) -> CustomData:
    """``smile`` stored as Nessie stores it: as is up to 8192 bytes, gzipped above."""
    if len(smile) <= KEEP_UNCOMPRESSED:
        return CustomData(smile, Compression.NONE)
    return CustomData(_gzip(smile), Compression.GZIP)


def _uncompress(data: bytes, compression: Compression) -> bytes | None:
    """The stored bytes uncompressed; None for a compression lochkit cannot undo. Raises
    ``CorruptData`` for bytes that are not what their compression says."""
    try:
        if compression is Compression.NONE:
            return data
        if compression is Compression.GZIP:
            return gzip.decompress(data)
        if compression is Compression.DEFLATE:  # Java's DeflaterOutputStream: the zlib format
            return zlib.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise CorruptData(f"the data is not valid {compression.name} data: {e}") from None
    return None  # Snappy (Nessie's xerial framing), ZSTD and LZ4 need libraries lochkit has not


# --- lochkit's dataclass types -------------------------------------------------------------------


def java_property_name(field_name: str) -> str:
    """The camelCase name Jackson gives a Java property: ``some_value`` becomes ``someValue``."""
    head, *rest = field_name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_Convert = Callable[[Any], Any]


def _converter(hint: Any) -> _Convert | None:
    """How a decoded value becomes what a field of type ``hint`` holds; None to keep it as
    decoded (binary as bytes, arrays as tuples, maps as dicts)."""
    if hint is ObjId:
        return ObjId
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        options = [a for a in args if a is not type(None)]
        inner = _converter(options[0]) if len(options) == 1 else None
        return None if inner is None else _or_none(inner)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _converter(args[0])
        return None if item is None else _each(item, tuple)
    if origin is list:
        item = _converter(args[0]) if args else None
        return list if item is None else _each(item, list)
    if origin in (dict, Mapping) and len(args) == 2:
        value = _converter(args[1])
        return None if value is None else _each_value(value)
    return None


def _or_none(convert: _Convert) -> _Convert:
    return lambda v: None if v is None else convert(v)


def _each(convert: _Convert, container: Callable[[Any], Any]) -> _Convert:
    return lambda v: container(map(convert, v))


def _each_value(convert: _Convert) -> _Convert:
    return lambda v: {k: convert(x) for k, x in v.items()}


class _Field(NamedTuple):
    name: str
    property_name: str
    convert: _Convert | None


class _TypeFields:
    """The fields of a lochkit custom type as Nessie's data holds them."""

    def __init__(self, cls: type[Obj]) -> None:
        if not dataclasses.is_dataclass(cls):
            raise NotStorableInNessieLayout(
                f"{cls.__name__} is not a dataclass; custom object types must be dataclasses"
            )
        try:
            hints = typing.get_type_hints(cls)
        except (NameError, TypeError):  # hints that do not resolve: values stay as decoded
            hints = {}
        self.cls = cls
        self.updateable = issubclass(cls, UpdateableObj)
        self.fields = tuple(
            _Field(f.name, java_property_name(f.name), _converter(hints.get(f.name)))
            for f in dataclasses.fields(cls)
            if f.name not in _NOT_IN_DATA
        )
        self.by_property = {f.property_name: f for f in self.fields}
        if len(self.by_property) != len(self.fields):
            names = [f.property_name for f in self.fields]
            clashes = [f.name for f in self.fields if names.count(f.property_name) > 1]
            raise NotStorableInNessieLayout(
                f"{cls.__name__}'s fields {', '.join(clashes)} have the same camelCase name in "
                "Nessie's layout; rename one of them"
            )

    def document(self, obj: Obj) -> dict[str, Any]:
        return {f.property_name: getattr(obj, f.name) for f in self.fields}

    def build(self, obj_id: ObjId, referenced: int, doc: dict[str, Any], version_token: str | None) -> Obj:
        kwargs: dict[str, Any] = {}
        for property_name, value in doc.items():
            field = self.by_property.get(property_name)
            if field is None:
                if property_name == VERSION_TOKEN_ATTRIBUTE:
                    continue  # Nessie's GenericObj writes its token; the token comes from the row
                raise CorruptData(
                    f"the data has the attribute {property_name!r}, which is no field of {self.cls.__name__}"
                )
            kwargs[field.name] = value if field.convert is None else field.convert(value)
        if self.updateable:
            kwargs["version_token"] = version_token
        return self.cls(id=obj_id, referenced=referenced, **kwargs)


_TYPE_FIELDS: dict[type[Obj], _TypeFields] = {}


def _type_fields(cls: type[Obj]) -> _TypeFields:
    found = _TYPE_FIELDS.get(cls)
    if found is None:
        found = _TYPE_FIELDS[cls] = _TypeFields(cls)  # racing threads build equal ones
    return found


# --- encoding and decoding -----------------------------------------------------------------------


def encode_custom(obj: Obj) -> CustomData:
    """The ``CustomProto`` data and compression of a custom object. ``NotStorableInNessieLayout``
    if one of its values has no Smile form (a set, a map with keys that are not strings, ...)."""
    if isinstance(obj, OpaqueCustomObj):
        return CustomData(obj.data, obj.compression)
    document = obj.attributes if isinstance(obj, GenericObj) else _type_fields(type(obj)).document(obj)
    try:
        smile = encode_smile(document)
    except SmileEncodeError as e:
        raise NotStorableInNessieLayout(
            f"{type(obj).__name__} {obj.id} (type {obj.obj_type.name!r}) cannot be stored in Nessie's "
            f"layout, which stores custom objects as Smile: {e}"
        ) from None
    return compress_as_nessie(smile)


def decode_custom(
    obj_id: ObjId,
    referenced: int,
    type_name: str,
    data: bytes,
    compression: Compression,
    version_token: str | None,
) -> Obj:
    """The custom object stored as ``data``: its lochkit type if registered, else a ``GenericObj``
    (an ``OpaqueCustomObj`` if lochkit cannot decode the data). ``CorruptData`` for data of a
    registered type that does not decode to it."""
    obj_type = OBJ_TYPES.by_short_name(type_name)
    if obj_type is None or obj_type.cls is GenericObj:
        return _generic(obj_id, referenced, type_name, data, compression, version_token)
    if obj_type.cls in _STANDARD_CLASSES:
        raise CorruptData(f"a custom object names the standard type {type_name!r}")
    smile = _uncompress(data, compression)
    if smile is None:
        raise CorruptData(f"the data is compressed with {compression.name}, which lochkit cannot undo")
    doc = decode_smile(smile, sequence=tuple)
    if not isinstance(doc, dict):
        kind = "an array" if isinstance(doc, tuple) else f"a {type(doc).__name__}"
        raise CorruptData(f"the data holds {kind}, not the map of an object's fields")
    try:
        return _type_fields(obj_type.cls).build(obj_id, referenced, doc, version_token)
    except (TypeError, ValueError, AttributeError) as e:  # fields of the wrong shape
        raise CorruptData(f"the data does not fit {obj_type.cls.__name__}: {type(e).__name__}: {e}") from e


def _generic(
    obj_id: ObjId,
    referenced: int,
    type_name: str,
    data: bytes,
    compression: Compression,
    version_token: str | None,
) -> GenericObj:
    try:
        smile = _uncompress(data, compression)
        attributes = None if smile is None else decode_smile(smile)
    except (CorruptData, SmileDecodeError):
        attributes = None  # not lochkit's to judge: carried as it is
    if isinstance(attributes, dict):
        return GenericObj(
            id=obj_id,
            referenced=referenced,
            type_name=type_name,
            attributes=attributes,
            version_token=version_token,
        )
    return OpaqueCustomObj(
        id=obj_id,
        referenced=referenced,
        type_name=type_name,
        data=data,
        compression=compression,
        version_token=version_token,
    )
