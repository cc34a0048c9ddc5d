"""Index elements: a store key and the operation recorded for it."""

from __future__ import annotations

import uuid
from typing import NamedTuple

from persist_spi.errors import CorruptData
from persist_spi.ids import ObjId
from persist_spi.indexes.action import Action
from persist_spi.indexes.varint import decode_varint, encode_varint, varint_size
from persist_spi.keys import StoreKey

_ZERO_UUID = bytes(16)


_BY_BYTE = {a.code_byte: a for a in Action}


class CommitOp(NamedTuple):
    action: Action
    payload: int
    #: The content value object id; None for "no value".
    value: ObjId | None = None
    content_id: uuid.UUID | None = None

    @property
    def exists(self) -> bool:
        return self.action.exists

    def with_action(self, action: Action) -> CommitOp:
        return self._replace(action=action)

    def serialized_size(self) -> int:
        """Action byte, payload varint (one byte for 0..127), id with varint length, 16-byte content id."""
        value = self.value
        id_size = 1 if not value else len(value) + (1 if len(value) < 0x80 else 2)
        return 2 + id_size + 16


class IndexElement(NamedTuple):
    key: StoreKey
    op: CommitOp


def serialize_op(op: CommitOp) -> bytes:
    value = op.value
    cid = op.content_id.bytes if op.content_id is not None else _ZERO_UUID
    if not value:
        return bytes((op.action.code_byte, op.payload, 0)) + cid
    return bytes((op.action.code_byte,)) + encode_varint(op.payload) + encode_varint(len(value)) + value + cid


def serialized_op_size(op: CommitOp) -> int:
    """The exact length of :func:`serialize_op`'s output (``serialized_size`` assumes a one-byte
    payload, as Nessie's size estimate does)."""
    value, payload = op.value, op.payload
    if not value:
        return 19 if payload < 0x80 else 2 + varint_size(payload) + 16
    n = len(value)
    if n < 0x80 and payload < 0x80:  # always, for ids lochkit derives
        return 19 + n
    return 1 + varint_size(payload) + varint_size(n) + n + 16


def deserialize_op(buf: bytes, pos: int) -> tuple[CommitOp, int]:
    if pos >= len(buf):
        raise CorruptData(f"Index element is truncated (no action byte at offset {pos})")
    try:
        action = _BY_BYTE[buf[pos]]
    except KeyError:
        raise CorruptData(f"Unknown index element action byte {buf[pos]:#04x} at offset {pos}") from None
    payload, pos = decode_varint(buf, pos + 1)
    length, pos = decode_varint(buf, pos)
    value = ObjId(buf[pos : pos + length]) if length else None
    pos += length
    raw_cid = buf[pos : pos + 16]
    if len(raw_cid) != 16:
        raise CorruptData("Index element is truncated (content id)")
    content_id = None if raw_cid == _ZERO_UUID else uuid.UUID(bytes=raw_cid)
    return CommitOp(action, payload, value, content_id), pos + 16
