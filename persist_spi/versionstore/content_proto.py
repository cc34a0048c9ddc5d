"""Content values as Nessie stores them: the protobuf message ``nessie.store.Content``.

A content value's bytes enter its VALUE id, and through it every commit id, so they must be the
bytes Nessie's serialisers write for the same content (``DefaultStoreWorker.toStoreOnReferenceState``
and the per-type serialisers of nessie-server-store). What decides them:

- ``Content`` holds one of the per-type messages (the ``object_type`` oneof) and the content id as
  field 5; Java writes fields in field-number order, so the id comes after a table, a view or a
  Delta Lake table (fields 2, 3, 4) and before a namespace or a UDF (fields 6, 7). An empty id is
  left out (a proto3 string at its default).
- Plain numbers are left out when 0 (proto3 defaults); ``optional`` strings are written whenever
  the serialiser sets them, which is whenever they are not null, even when empty.
- The chosen per-type message is written even when empty (a oneof member is present once set).
- Map entries (namespace properties) are written in the map's insertion order, key and value each
  always present, as Java's map fields write them outside deterministic mode.

This module knows the wire layout only; :mod:`persist_spi.versionstore.content` maps its content
classes onto it by attribute name.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from persist_spi.errors import CorruptData, InputError
from persist_spi.protowire import LENGTH_DELIMITED, VARINT, ProtoWriter, as_int32, as_int64, iter_fields

#: ``Content.id``.
CONTENT_ID_FIELD: Final = 5
#: The ``object_type`` oneof member that only Nessie before 0.26 wrote: a table's or view's
#: metadata location kept as "global state", outside the commit.
LEGACY_METADATA_POINTER_FIELD: Final = 1


class Kind(enum.Enum):
    INT64 = "int64"
    INT32 = "int32"
    #: ``optional string``: written when not None.
    STRING = "optional string"
    REPEATED_STRING = "repeated string"
    STRING_MAP = "map<string, string>"


_INT64_LIMIT: Final = 1 << 63
_INT32_LIMIT: Final = 1 << 31


@dataclass(frozen=True)
class StateField:
    number: int
    attribute: str
    kind: Kind


@dataclass(frozen=True)
class StateMessage:
    """A content type's message: its field in ``Content``, and its fields."""

    name: str
    content_field: int
    fields: tuple[StateField, ...]
    #: Nessie cannot read the value without this attribute (Iceberg tables and views point at
    #: their metadata through it).
    required: str | None = None


_I64, _I32, _STR = Kind.INT64, Kind.INT32, Kind.STRING

#: By payload (1 Iceberg table, 2 Delta Lake table, 3 Iceberg view, 4 namespace, 5 UDF).
STATE_MESSAGES: Final[dict[int, StateMessage]] = {
    1: StateMessage(
        "IcebergRefState",
        2,
        (
            StateField(1, "snapshot_id", _I64),
            StateField(2, "schema_id", _I32),
            StateField(3, "spec_id", _I32),
            StateField(4, "sort_order_id", _I32),
            StateField(5, "metadata_location", _STR),
        ),
        required="metadata_location",
    ),
    2: StateMessage(
        "DeltaLakeTable",
        4,
        (
            StateField(1, "last_checkpoint", _STR),
            StateField(2, "checkpoint_location_history", Kind.REPEATED_STRING),
            StateField(3, "metadata_location_history", Kind.REPEATED_STRING),
        ),
    ),
    3: StateMessage(
        "IcebergViewState",
        3,
        (
            StateField(1, "version_id", _I64),
            StateField(2, "schema_id", _I32),
            StateField(3, "sql_text", _STR),
            StateField(4, "dialect", _STR),
            StateField(5, "metadata_location", _STR),
        ),
        required="metadata_location",
    ),
    4: StateMessage(
        "Namespace",
        6,
        (
            StateField(1, "elements", Kind.REPEATED_STRING),
            StateField(2, "properties", Kind.STRING_MAP),
        ),
    ),
    5: StateMessage(
        "UDF",
        7,
        (
            StateField(1, "sql_text", _STR),
            StateField(2, "dialect", _STR),
            StateField(3, "version_id", _STR),
            StateField(4, "signature_id", _STR),
            StateField(5, "metadata_location", _STR),
        ),
    ),
}
_CONTENT_FIELDS: Final = frozenset(m.content_field for m in STATE_MESSAGES.values())


def _message(payload: int) -> StateMessage:
    message = STATE_MESSAGES.get(payload)
    if message is None:
        raise InputError(f"Unknown content payload {payload}; known: {sorted(STATE_MESSAGES)}")
    return message


# --- writing ---------------------------------------------------------------------------------------


def encode_content(payload: int, content_id: str, values: Mapping[str, Any]) -> bytes:
    """``nessie.store.Content`` for content of ``payload`` with the attribute ``values``."""
    message = _message(payload)
    state = _encode_state(message, values)
    out = ProtoWriter()
    if message.content_field < CONTENT_ID_FIELD:
        out.bytes_field(message.content_field, state)
    if content_id:
        out.bytes_field(CONTENT_ID_FIELD, _utf8(content_id, "the content id"))
    if message.content_field > CONTENT_ID_FIELD:
        out.bytes_field(message.content_field, state)
    return out.to_bytes()


def _encode_state(message: StateMessage, values: Mapping[str, Any]) -> bytes:
    out = ProtoWriter()
    for f in message.fields:
        value = values.get(f.attribute)
        kind = f.kind
        if kind is Kind.STRING:
            if value is not None:
                out.bytes_field(f.number, _string(value, message, f))
        elif kind is Kind.REPEATED_STRING:
            for element in value or ():
                out.bytes_field(f.number, _string(element, message, f))
        elif kind is Kind.STRING_MAP:
            for key, item in (value or {}).items():
                entry = ProtoWriter()
                entry.bytes_field(1, _string(key, message, f))
                entry.bytes_field(2, _string(item, message, f))
                out.bytes_field(f.number, entry.to_bytes())
        else:
            if type(value) is not int:  # bool is an int, but not a number Nessie stores
                raise _wrong_type(value, int, message, f)
            limit = _INT64_LIMIT if kind is Kind.INT64 else _INT32_LIMIT
            if not -limit <= value < limit:
                raise InputError(
                    f"Content field {_where(message, f)} is {value}, outside the range of a protobuf "
                    f"{kind.value} ({-limit}..{limit - 1}), which Nessie stores it as"
                )
            if value:
                out.varint_field(f.number, value)
    return out.to_bytes()


# Error texts are built only when raised: every content value written runs through here.


def _where(message: StateMessage, f: StateField) -> str:
    return f"{message.name}.{f.attribute}"


def _string(value: Any, message: StateMessage, f: StateField) -> bytes:
    if type(value) is not str:
        raise _wrong_type(value, str, message, f)
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return _utf8(value, _where(message, f))  # raises the error naming the field


def _wrong_type(value: Any, expected: type, message: StateMessage, f: StateField) -> InputError:
    return InputError(
        f"Content field {_where(message, f)} must be {expected.__name__}, "
        f"not {type(value).__name__} {value!r}"
    )


def _utf8(text: str, where: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(
            f"Content field {where} holds an unpaired surrogate ({e.reason} at {e.start}); "
            "it cannot be stored as UTF-8"
        ) from None


# --- reading ---------------------------------------------------------------------------------------


def decode_content(payload: int, data: bytes) -> tuple[str, dict[str, Any]]:
    """The content id and the attribute values of a stored ``nessie.store.Content``."""
    message = STATE_MESSAGES.get(payload)
    if message is None:
        raise CorruptData(f"Unknown content payload {payload}; known: {sorted(STATE_MESSAGES)}")
    content_id = ""
    state = b""
    for field in iter_fields(data):
        if field.number == CONTENT_ID_FIELD:
            _wire(field.wire_type, LENGTH_DELIMITED, "Content.id")
            content_id = field.as_str()
        elif field.number == message.content_field:
            _wire(field.wire_type, LENGTH_DELIMITED, f"Content.{message.name}")
            state = field.as_bytes()
        elif field.number == LEGACY_METADATA_POINTER_FIELD:
            raise CorruptData(
                "Content value keeps its metadata location in global state (written by Nessie "
                "before 0.26), which lochkit cannot read"
            )
        elif field.number in _CONTENT_FIELDS:
            raise CorruptData(
                f"Content value of payload {payload} ({message.name}) holds content field "
                f"{field.number}, another content type's"
            )
        # Other field numbers: unknown to this version, skipped as Java's parser keeps them aside.
    return content_id, _decode_state(message, state)


def _decode_state(message: StateMessage, data: bytes) -> dict[str, Any]:
    by_number = {f.number: f for f in message.fields}
    values: dict[str, Any] = {f.attribute: _default(f.kind) for f in message.fields}
    for field in iter_fields(data):
        f = by_number.get(field.number)
        if f is None:
            continue
        where = f"{message.name}.{f.attribute}"
        if f.kind in (Kind.INT64, Kind.INT32):
            _wire(field.wire_type, VARINT, where)
            raw = field.as_uint()
            values[f.attribute] = as_int64(raw) if f.kind is Kind.INT64 else as_int32(raw)
            continue
        _wire(field.wire_type, LENGTH_DELIMITED, where)
        if f.kind is Kind.STRING:
            values[f.attribute] = field.as_str()
        elif f.kind is Kind.REPEATED_STRING:
            values[f.attribute].append(field.as_str())
        else:
            key, value = "", ""
            for part in iter_fields(field.as_bytes()):
                if part.number == 1:
                    key = part.as_str()
                elif part.number == 2:
                    value = part.as_str()
            values[f.attribute][key] = value
    if message.required is not None and values[message.required] is None:
        raise CorruptData(
            f"Content value {message.name} has no {message.required} (its metadata is kept in "
            "global state, written by Nessie before 0.26), which lochkit cannot read"
        )
    return values


def _default(kind: Kind) -> Any:
    if kind is Kind.STRING:
        return None
    if kind is Kind.REPEATED_STRING:
        return []
    if kind is Kind.STRING_MAP:
        return {}
    return 0


def _wire(actual: int, expected: int, where: str) -> None:
    if actual != expected:
        raise CorruptData(f"Content field {where} has wire type {actual}, expected {expected}")
