"""A reference row (:class:`~persist_spi.adapter.RefRow`, history as the nessie layout encodes it)
as the one ``ReferenceProto`` value Nessie's RocksDB and Bigtable stores keep per reference, and
back.

The backends that store the whole message share this conversion, so the bytes are the same
wherever lochkit writes them, and they are the bytes Nessie's ``ProtoSerialization`` writes (which
matters on Bigtable, whose compare-and-swap compares the whole stored value).
"""

from __future__ import annotations

from persist_spi.adapter import RefRow
from persist_spi.ids import ObjId
from persist_spi.nessie_references import (
    decode_nessie_previous_pointers,
    decode_reference_proto,
    encode_nessie_previous_pointers,
    encode_reference_proto,
)
from persist_spi.references import Reference


def ref_row_proto(row: RefRow) -> bytes:
    """The ``ReferenceProto`` of ``row``, its history embedded."""
    return encode_reference_proto(
        Reference(
            row.name,
            ObjId(row.pointer),
            row.deleted,
            row.created_at_micros,
            None if row.extended_info is None else ObjId(row.extended_info),
            decode_nessie_previous_pointers(row.previous_pointers),
        )
    )


def ref_row_of_proto(name: str, raw: bytes) -> RefRow:
    """The row a stored ``ReferenceProto`` holds (``name`` is the one its key gives)."""
    ref = decode_reference_proto(raw)
    history = encode_nessie_previous_pointers(ref.previous_pointers)
    return RefRow(
        name,
        bytes(ref.pointer),
        ref.deleted,
        ref.created_at_micros,
        None if ref.extended_info_obj is None else bytes(ref.extended_info_obj),
        history or b"",
    )
