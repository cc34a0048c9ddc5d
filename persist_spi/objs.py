"""The object model: every object the logic layers store, and how each one's id is derived.

Objects are frozen dataclasses. ``referenced`` (when the object was last written, set only by the
backend) is left out of equality. The ``*_obj`` / ``content_value`` ... functions build an object
and derive its id from its fields exactly as Nessie does.
"""

from __future__ import annotations

import enum
import hashlib
import struct
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from persist_spi.errors import InputError
from persist_spi.hashing import ObjIdHasher
from persist_spi.headers import EMPTY_COMMIT_HEADERS, CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, trusted_obj_id
from persist_spi.keys import StoreKey
from persist_spi.objtypes import Obj as Obj  # defined beside ObjType (each names the other)
from persist_spi.objtypes import ObjType, register_obj_type


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateableObj(Obj):
    """An object that may change in place, guarded by a version token (conditional update/delete)."""

    version_token: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GenericObj(Obj):
    """An object of a type this process does not know: its type name and attributes, kept verbatim."""

    type_name: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    version_token: str | None = None

    @property
    def obj_type(self) -> ObjType:
        return ObjType(self.type_name, self.type_name, GenericObj)


# --- enums persisted as one character ------------------------------------------------------------


class CommitType(enum.Enum):
    NORMAL = "n"
    INTERNAL = "i"


class Compression(enum.Enum):
    NONE = "N"
    GZIP = "G"
    DEFLATE = "D"
    ZSTD = "Z"
    LZ4 = "L"
    SNAPPY = "S"


@dataclass(frozen=True, slots=True, kw_only=True)
class OpaqueCustomObj(GenericObj):
    """A custom object read from a database in Nessie's layout whose data lochkit cannot decode.

    Nessie stores custom objects as Jackson Smile, possibly compressed; data compressed in a way
    lochkit cannot undo (Snappy, for one), or that is no Smile map, is kept verbatim (``data``,
    compressed as ``compression`` says), so writing the object back stores exactly what was read.
    ``attributes`` stays empty."""

    data: bytes = b""
    compression: Compression = Compression.NONE


# --- standard objects ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexStripe:
    """One stripe of a reference index: its key range and the index segment holding it."""

    first_key: StoreKey
    last_key: StoreKey
    segment: ObjId

    def hash_into(self, hasher: ObjIdHasher) -> None:
        hasher.put_str(self.first_key).put_str(self.last_key).put_bytes(self.segment)


@register_obj_type("COMMIT", "c")
@dataclass(frozen=True, slots=True, kw_only=True)
class CommitObj(Obj):
    """A commit. Its id covers parent, message, headers and operations (see the commit logic)."""

    #: µs timestamp when the commit was built; not part of the id nor of equality.
    created: int = field(default=0, compare=False)
    seq: int
    #: Ancestor ids, nearest first: ``[parent] + parent.tail[:parents_per_commit - 1]``.
    tail: tuple[ObjId, ...]
    secondary_parents: tuple[ObjId, ...] = ()
    headers: CommitHeaders = EMPTY_COMMIT_HEADERS
    message: str = ""
    #: Serialised incremental index (this commit's operations plus changes since the last spill).
    incremental_index: bytes = b""
    #: Id of an IndexSegmentsObj (or, for old data, a single IndexObj); only above the stripe limit.
    reference_index: ObjId | None = None
    reference_index_stripes: tuple[IndexStripe, ...] = ()
    incomplete_index: bool = False
    commit_type: CommitType = CommitType.NORMAL

    @property
    def direct_parent(self) -> ObjId:
        return self.tail[0] if self.tail else EMPTY_OBJ_ID

    @property
    def has_reference_index(self) -> bool:
        return self.reference_index is not None or bool(self.reference_index_stripes)


@register_obj_type("VALUE", "v")
@dataclass(frozen=True, slots=True, kw_only=True)
class ContentValueObj(Obj):
    content_id: str
    payload: int
    #: The serialised content; opaque to the storage layer.
    data: bytes


@register_obj_type("REF", "r")
@dataclass(frozen=True, slots=True, kw_only=True)
class RefObj(Obj):
    """Records a reference's creation (the value stored in ``int/refs``), not its current head."""

    name: str
    initial_pointer: ObjId
    created_at_micros: int
    extended_info_obj: ObjId | None = None


@register_obj_type("TAG", "t")
@dataclass(frozen=True, slots=True, kw_only=True)
class TagObj(Obj):
    message: str | None = None
    headers: CommitHeaders | None = None
    signature: bytes | None = None


@register_obj_type("STRING", "s")
@dataclass(frozen=True, slots=True, kw_only=True)
class StringObj(Obj):
    content_type: str
    compression: Compression
    filename: str | None = None
    predecessors: tuple[ObjId, ...] = ()
    text: bytes


@register_obj_type("INDEX_SEGMENTS", "I")
@dataclass(frozen=True, slots=True, kw_only=True)
class IndexSegmentsObj(Obj):
    stripes: tuple[IndexStripe, ...]


@register_obj_type("INDEX", "i")
@dataclass(frozen=True, slots=True, kw_only=True)
class IndexObj(Obj):
    """One serialised index segment."""

    index: bytes


@register_obj_type("UNIQUE", "u")
@dataclass(frozen=True, slots=True, kw_only=True)
class UniqueIdObj(Obj):
    """Claims a value in an id space: storing it returns True only for the first claimer."""

    space: str
    value: bytes

    @property
    def value_as_uuid(self) -> uuid.UUID:
        return uuid.UUID(bytes=self.value)


STANDARD_OBJ_TYPES: tuple[ObjType, ...] = (
    RefObj.TYPE,
    CommitObj.TYPE,
    TagObj.TYPE,
    ContentValueObj.TYPE,
    StringObj.TYPE,
    IndexSegmentsObj.TYPE,
    IndexObj.TYPE,
    UniqueIdObj.TYPE,
)


# --- builders that derive ids --------------------------------------------------------------------


def content_value(content_id: str, payload: int, data: bytes) -> ContentValueObj:
    check_payload(payload)
    # The bytes ObjIdHasher("VALUE").put_str(content_id).put_int(payload).put_bytes(data) feeds,
    # hashed in one call: every put of every commit builds one of these.
    digest = hashlib.sha256(b"VALUE" + content_id.encode("utf-8") + _JAVA_INT.pack(payload) + data).digest()
    return ContentValueObj(id=trusted_obj_id(digest), content_id=content_id, payload=payload, data=data)


_JAVA_INT: Final = struct.Struct("<i")


def ref_obj(
    name: str, initial_pointer: ObjId, created_at_micros: int, extended_info_obj: ObjId | None = None
) -> RefObj:
    obj_id = (
        ObjIdHasher("REF").put_str(name).put_bytes(initial_pointer).put_long(created_at_micros).generate()
    )
    return RefObj(
        id=obj_id,
        name=name,
        initial_pointer=initial_pointer,
        created_at_micros=created_at_micros,
        extended_info_obj=extended_info_obj,
    )


def tag_obj(
    message: str | None = None, headers: CommitHeaders | None = None, signature: bytes | None = None
) -> TagObj:
    hasher = ObjIdHasher("TAG").put_str(message).put_hashable(headers).put_bytes(signature)
    return TagObj(id=hasher.generate(), message=message, headers=headers, signature=signature)


def string_data(
    content_type: str,
    compression: Compression,
    filename: str | None,
    predecessors: Iterable[ObjId],
    text: bytes,
) -> StringObj:
    preds = tuple(predecessors)
    hasher = ObjIdHasher("STRING").put_str(content_type).put_char(compression.value).put_str(filename)
    for pred in preds:
        hasher.put_bytes(pred)
    hasher.put_bytes(text)
    return StringObj(
        id=hasher.generate(),
        content_type=content_type,
        compression=compression,
        filename=filename,
        predecessors=preds,
        text=text,
    )


def index_obj(index: bytes) -> IndexObj:
    return IndexObj(id=ObjIdHasher("INDEX").put_bytes(index).generate(), index=index)


def index_segments(stripes: Iterable[IndexStripe]) -> IndexSegmentsObj:
    stripes = tuple(stripes)
    hasher = ObjIdHasher("INDEX_SEGMENTS")
    for stripe in stripes:
        hasher.put_hashable(stripe)
    return IndexSegmentsObj(id=hasher.generate(), stripes=stripes)


def unique_id(space: str, value: bytes) -> UniqueIdObj:
    obj_id = ObjIdHasher("UNIQUE").put_str(space).put_bytes(value).generate()
    return UniqueIdObj(id=obj_id, space=space, value=value)


def unique_id_for_uuid(space: str, value: uuid.UUID) -> UniqueIdObj:
    """The value is the UUID's 16 bytes, big-endian (most significant half first)."""
    return unique_id(space, value.bytes)


def check_payload(payload: int) -> None:
    if not 0 <= payload <= 127:
        raise InputError(f"Payload {payload} is out of range; payloads are 0..127")
