"""Reference rows as Nessie stores them: the whole ``ReferenceProto`` (RocksDB), and a history of
former heads as delimited ``ReferencePreviousProto`` records (the column backends' ``prev_ptr``).

These are the Nessie-layout counterparts of :func:`persist_spi.codec.encode_previous_pointers` and
:func:`~persist_spi.codec.decode_previous_pointers`; a backend picks the pair its layout needs. The
bytes are those of Nessie's ``ProtoSerialization``: proto3 defaults left out, ``created_at_micros``
written only when nonzero, ``extended_info_obj`` whenever there is one, and no value at all (None,
stored as NULL or an absent attribute) for an empty history.
"""

from __future__ import annotations

from collections.abc import Sequence

from persist_spi.codec import CorruptReferenceHistory
from persist_spi.errors import CorruptData
from persist_spi.ids import ObjId
from persist_spi.protowire import ProtoWriter, as_int64, iter_delimited, iter_fields, write_delimited
from persist_spi.references import PreviousPointer, Reference


def _previous_pointer(entry: PreviousPointer) -> bytes:
    w = ProtoWriter()
    if entry.pointer:
        w.bytes_field(1, entry.pointer)
    if entry.timestamp_micros:
        w.varint_field(2, entry.timestamp_micros)
    return w.to_bytes()


def _read_previous_pointer(data: bytes) -> PreviousPointer:
    pointer = ObjId()
    timestamp = 0
    for f in iter_fields(data):
        if f.number == 1:
            pointer = ObjId(f.as_bytes())
        elif f.number == 2:
            timestamp = as_int64(f.as_uint())
    return PreviousPointer(pointer, timestamp)


def encode_nessie_previous_pointers(entries: Sequence[PreviousPointer]) -> bytes | None:
    """A history as Nessie's column backends store it; None (no value) when it is empty."""
    if not entries:
        return None
    return b"".join(write_delimited(_previous_pointer(e)) for e in entries)


def decode_nessie_previous_pointers(data: bytes | None) -> tuple[PreviousPointer, ...]:
    """A history stored by :func:`encode_nessie_previous_pointers` (or by Nessie); no value or empty
    bytes mean no history."""
    if not data:
        return ()
    try:
        return tuple(_read_previous_pointer(record) for record in iter_delimited(data))
    except (CorruptData, ValueError) as e:
        raise CorruptReferenceHistory(f"A reference's history cannot be decoded: {e}") from e


def encode_reference_proto(ref: Reference) -> bytes:
    """The whole reference, history included, as Nessie's RocksDB backend stores it."""
    w = ProtoWriter()
    if ref.name:
        w.string_field(1, ref.name)
    if ref.pointer:
        w.bytes_field(2, ref.pointer)
    if ref.deleted:
        w.bool_field(3, True)
    if ref.created_at_micros:
        w.varint_field(4, ref.created_at_micros)
    if ref.extended_info_obj is not None:
        w.bytes_field(5, ref.extended_info_obj)
    for entry in ref.previous_pointers:
        w.bytes_field(6, _previous_pointer(entry))
    return w.to_bytes()


def decode_reference_proto(data: bytes) -> Reference:
    """A reference stored by :func:`encode_reference_proto` (or by Nessie). Empty extended-info
    bytes mean none, as Nessie reads them."""
    name = ""
    pointer = ObjId()
    deleted = False
    created = 0
    extended_info: ObjId | None = None
    history: list[PreviousPointer] = []
    try:
        for f in iter_fields(data):
            match f.number:
                case 1:
                    name = f.as_str()
                case 2:
                    pointer = ObjId(f.as_bytes())
                case 3:
                    deleted = bool(f.as_uint())
                case 4:
                    created = as_int64(f.as_uint())
                case 5:
                    raw = f.as_bytes()
                    extended_info = ObjId(raw) if raw else None
                case 6:
                    history.append(_read_previous_pointer(f.as_bytes()))
    except (CorruptData, ValueError) as e:
        raise CorruptData(f"A stored reference cannot be decoded: {e}") from e
    return Reference(name, pointer, deleted, created, extended_info, tuple(history))
