"""Content keys and content types (Iceberg tables and views, Delta Lake tables, UDFs, namespaces)
and their serialisation."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from persist_spi.errors import CorruptData, InputError
from persist_spi.keys import key_order
from persist_spi.versionstore.content_proto import decode_content, encode_content
from persist_spi.versionstore.path_string import elements_from_path_string, to_path_string

MAX_KEY_LENGTH: Final = 500


@functools.total_ordering
@dataclass(frozen=True)
class ContentKey:
    """A name such as ``db.schema.table``: one or more non-empty elements.

    Keys sort element by element in Nessie's order (:func:`persist_spi.keys.key_order`), which is
    also the order of their store keys in an index."""

    elements: tuple[str, ...]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, ContentKey):
            return NotImplemented
        return tuple(map(key_order, self.elements)) < tuple(map(key_order, other.elements))

    def __post_init__(self) -> None:
        if not self.elements:
            raise InputError("A content key needs at least one element")
        for element in self.elements:
            if not element:
                raise InputError(f"Content key {list(self.elements)!r} has an empty element")
            if "\x00" in element or "\x01" in element:
                raise InputError(
                    f"Content key element {element!r} contains a control character U+0000/U+0001"
                )
        if sum(len(e) for e in self.elements) + len(self.elements) - 1 > MAX_KEY_LENGTH:
            raise InputError(f"Key too long, max allowed length: {MAX_KEY_LENGTH}")

    @classmethod
    def of(cls, *elements: str) -> ContentKey:
        return cls(tuple(elements))

    @classmethod
    def parse(cls, dotted: str) -> ContentKey:
        return cls(tuple(dotted.split(".")))

    @classmethod
    def from_path_string(cls, encoded: str) -> ContentKey:
        """Nessie's path-string form (see :mod:`persist_spi.versionstore.path_string`)."""
        return cls(tuple(elements_from_path_string(encoded)))

    def to_path_string(self) -> str:
        return to_path_string(self.elements)

    @property
    def parent(self) -> ContentKey | None:
        return ContentKey(self.elements[:-1]) if len(self.elements) > 1 else None

    @property
    def name(self) -> str:
        return self.elements[-1]

    def starts_with(self, prefix: ContentKey) -> bool:
        return self.elements[: len(prefix.elements)] == prefix.elements

    def __str__(self) -> str:
        return ".".join(self.elements)


@dataclass(frozen=True)
class Content:
    """Base of content types. ``id`` is the content id: None for new content (the store assigns
    one), the existing id for updates and renames."""

    PAYLOAD: ClassVar[int] = 0
    TYPE_NAME: ClassVar[str] = "UNKNOWN"

    id: str | None = None

    def with_id(self, content_id: str) -> Content:
        return dataclasses.replace(self, id=content_id)

    def to_bytes(self, content_id: str | None = None) -> bytes:
        """The stored form: Nessie's ``nessie.store.Content`` message, byte for byte as Nessie
        writes it (:mod:`persist_spi.versionstore.content_proto`). The message carries the content
        id: ``content_id``, else this content's own."""
        if content_id is None:
            content_id = self.id
        if content_id is None:
            raise InputError(f"{self.TYPE_NAME} content needs a content id to be stored")
        values: Mapping[str, Any]
        if _fields_in_dict(type(self)):
            # Read by field name as it is (extra entries, such as "id", are ignored): no copy.
            values = self.__dict__
        else:
            values = {name: getattr(self, name) for name in _stored_field_names(type(self))}
        return encode_content(self.PAYLOAD, content_id, values)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_IN_DICT: dict[type, bool] = {}


def _fields_in_dict(cls: type) -> bool:
    """Whether instances keep every field in ``__dict__``: no class of the hierarchy has slots (a
    subclass with slots still has its base's ``__dict__``, without the fields kept in slots)."""
    found = _IN_DICT.get(cls)
    if found is None:
        found = _IN_DICT[cls] = all("__slots__" not in vars(k) for k in cls.__mro__ if k is not object)
    return found


def _stored_field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name != "id")
    return names


@dataclass(frozen=True)
class IcebergTable(Content):
    PAYLOAD: ClassVar[int] = 1
    TYPE_NAME: ClassVar[str] = "ICEBERG_TABLE"

    metadata_location: str = ""
    snapshot_id: int = -1
    schema_id: int = 0
    spec_id: int = 0
    sort_order_id: int = 0


@dataclass(frozen=True)
class DeltaLakeTable(Content):
    PAYLOAD: ClassVar[int] = 2
    TYPE_NAME: ClassVar[str] = "DELTA_LAKE_TABLE"

    metadata_location_history: tuple[str, ...] = ()
    checkpoint_location_history: tuple[str, ...] = ()
    last_checkpoint: str | None = None


@dataclass(frozen=True)
class IcebergView(Content):
    PAYLOAD: ClassVar[int] = 3
    TYPE_NAME: ClassVar[str] = "ICEBERG_VIEW"

    metadata_location: str = ""
    version_id: int = 0
    schema_id: int = 0
    #: Optional in Nessie's model (None: not given, and not served).
    sql_text: str | None = None
    dialect: str | None = None


@dataclass(frozen=True)
class Namespace(Content):
    PAYLOAD: ClassVar[int] = 4
    TYPE_NAME: ClassVar[str] = "NAMESPACE"

    elements: tuple[str, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class UDF(Content):
    """A user-defined function: where its metadata lives, and which version and signature."""

    PAYLOAD: ClassVar[int] = 5
    TYPE_NAME: ClassVar[str] = "UDF"

    #: Every field is optional in Nessie's model (None: not given, and not served).
    metadata_location: str | None = None
    version_id: str | None = None
    signature_id: str | None = None
    #: Deprecated in Nessie's model, still stored and served when given.
    sql_text: str | None = None
    dialect: str | None = None


CONTENT_TYPES: Final[dict[int, type[Content]]] = {
    c.PAYLOAD: c for c in (IcebergTable, DeltaLakeTable, IcebergView, Namespace, UDF)
}
_BY_NAME: Final[dict[str, type[Content]]] = {c.TYPE_NAME: c for c in CONTENT_TYPES.values()}


def content_type_named(name: str) -> type[Content]:
    """The content type called ``name`` (case-insensitive, as Nessie parses it)."""
    found = _BY_NAME.get(name.strip().upper())
    if found is None:
        raise InputError(f"Unknown content type '{name}'; known: {', '.join(sorted(_BY_NAME))}")
    return found


NAMESPACE_PAYLOAD: Final = Namespace.PAYLOAD


def content_from_bytes(payload: int, content_id: str, data: bytes) -> Content:
    """The content a stored value holds: Nessie's ``nessie.store.Content`` message, or the JSON
    object lochkit wrote before it wrote Nessie's form (a message never starts with ``{``: that
    would be field 15, which ``Content`` does not have). ``CorruptData`` when it is neither."""
    if data[:1] == b"{":
        return _content_from_json(payload, content_id, data)
    cls = CONTENT_TYPES.get(payload)
    if cls is None:
        raise CorruptData(f"Content value {content_id} has unknown payload {payload}")
    _, values = decode_content(payload, data)
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
    return cls(id=content_id, **kwargs)


def _content_from_json(payload: int, content_id: str, data: bytes) -> Content:
    """lochkit's earlier stored form: the sorted JSON object of the content's fields and "type"."""
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise CorruptData(f"Content value {content_id} is neither protobuf nor JSON: {e}") from None
    if not isinstance(doc, dict):
        raise CorruptData(f"Content value {content_id} is JSON but not an object")
    kind = doc.pop("type", "")
    cls = (_BY_NAME.get(kind, None) if isinstance(kind, str) else None) or CONTENT_TYPES.get(payload)
    if cls is None:
        raise CorruptData(f"Content value {content_id} has unknown payload {payload}")
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {k: (tuple(v) if isinstance(v, list) else v) for k, v in doc.items() if k in names}
    return cls(id=content_id, **kwargs)
