"""How rows become RocksDB keys and values (RocksDB has no statements: it stores bytes by key).

A row key is the repository id, length-prefixed (two bytes, big-endian), followed by the ref name
(UTF-8) or the object id, so each repository's rows are contiguous. Values are msgpack arrays of
the row's other columns.
"""

from __future__ import annotations

import struct

import msgpack

from persist_spi.adapter import ObjRow, RefRow


def repo_prefix(repo: str) -> bytes:
    raw = repo.encode("utf-8")
    return struct.pack(">H", len(raw)) + raw


def repo_of_key(key: bytes) -> str:
    """The repository id a row key starts with."""
    (length,) = struct.unpack_from(">H", key)
    return key[2 : 2 + length].decode("utf-8")


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix``."""
    trimmed = prefix.rstrip(b"\xff")
    return trimmed[:-1] + bytes([trimmed[-1] + 1]) if trimmed else prefix + b"\xff" * 8


def pack_ref(row: RefRow) -> bytes:
    packed: bytes = msgpack.packb(
        [row.pointer, row.deleted, row.created_at_micros, row.extended_info, row.previous_pointers],
        use_bin_type=True,
    )
    return packed


def unpack_ref(name: str, raw: bytes) -> RefRow:
    pointer, deleted, created, ext, prev = msgpack.unpackb(raw)
    return RefRow(name, pointer, deleted, created, ext, prev)


def pack_obj(row: ObjRow) -> bytes:
    packed: bytes = msgpack.packb(
        [row.obj_type, row.version_token, row.referenced, row.data], use_bin_type=True
    )
    return packed


def unpack_obj(obj_id: bytes, raw: bytes) -> ObjRow:
    obj_type, token, referenced, data = msgpack.unpackb(raw)
    return ObjRow(obj_id, obj_type, token, data, referenced)
