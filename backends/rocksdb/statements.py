"""How rows become RocksDB keys and values (RocksDB has no statements: it stores bytes by key), in
each layout the backend offers.

lochkit's layout: column families ``refs`` and ``objs``; a row key is the repository id,
length-prefixed (two bytes, big-endian), followed by the ref name (UTF-8) or the object id, so each
repository's rows are contiguous; values are msgpack arrays of the row's other columns.

Nessie's layout (``layout=nessie``): column families ``nessie_refs`` and ``nessie_objects``; a row
key is ``UTF-8(repo + ":")`` followed by the ref name (UTF-8) or the raw object id; a reference's
value is the whole ``ReferenceProto`` (history embedded), an object's is its ``ObjProto`` with
``referenced`` and the version token inside. The prefix is not escaped, so ids holding ":" are
refused (see :meth:`RowFormat.repository_id_problem`): with that, the keys of repository ``a`` are
exactly the keys starting with ``a:``, and RocksDB's bytewise order keeps them contiguous.
"""

from __future__ import annotations

import struct
from typing import Final, NamedTuple

import msgpack

from persist_spi.adapter import ObjRow, RefRow
from persist_spi.codec import PerThreadPacker
from persist_spi.layouts import NESSIE_LAYOUT, StorageLayout
from persist_spi.nessie_codec import column_obj_data, obj_frame, restamped_obj_value, stored_obj_value
from persist_spi.nessie_ref_rows import ref_row_of_proto, ref_row_proto


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix``."""
    trimmed = prefix.rstrip(b"\xff")
    return trimmed[:-1] + bytes([trimmed[-1] + 1]) if trimmed else prefix + b"\xff" * 8


class ObjVersion(NamedTuple):
    """What the conditional object writes compare, read from a stored value."""

    obj_type: str
    version_token: str | None
    referenced: int


#: Every commit packs two or more values; a kept Packer is about five times faster than ``packb``.
_PACKER: Final = PerThreadPacker(use_bin_type=True)
#: Repositories whose key prefix is remembered; a process works with a handful.
_MAX_PREFIXES: Final = 1024


class RowFormat:
    """lochkit's own keys and values; :class:`NessieRowFormat` overrides what Nessie's differ in."""

    refs_family = "refs"
    objs_family = "objs"

    def __init__(self) -> None:
        self._prefixes: dict[str, bytes] = {}

    def repository_id_problem(self, repo: str) -> str | None:
        return None

    def repo_prefix(self, repo: str) -> bytes:
        """The key prefix of ``repo``'s rows; built once per repository (every call of the
        adapter needs it)."""
        prefix = self._prefixes.get(repo)
        if prefix is None:
            if len(self._prefixes) >= _MAX_PREFIXES:
                self._prefixes = {}
            prefix = self._prefixes[repo] = self._make_prefix(repo)
        return prefix

    def _make_prefix(self, repo: str) -> bytes:
        raw = repo.encode("utf-8")
        return struct.pack(">H", len(raw)) + raw

    def repo_of_key(self, key: bytes) -> str:
        """The repository id a row key starts with."""
        (length,) = struct.unpack_from(">H", key)
        return key[2 : 2 + length].decode("utf-8")

    def pack_ref(self, row: RefRow) -> bytes:
        return _PACKER.pack(
            [row.pointer, row.deleted, row.created_at_micros, row.extended_info, row.previous_pointers]
        )

    def unpack_ref(self, name: str, raw: bytes) -> RefRow:
        pointer, deleted, created, ext, prev = msgpack.unpackb(raw)
        return RefRow(name, pointer, deleted, created, ext, prev)

    def pack_obj(self, row: ObjRow) -> bytes:
        return _PACKER.pack([row.obj_type, row.version_token, row.referenced, row.data])

    def unpack_obj(self, obj_id: bytes, raw: bytes) -> ObjRow:
        obj_type, token, referenced, data = msgpack.unpackb(raw)
        return ObjRow(obj_id, obj_type, token, data, referenced)

    def obj_version(self, raw: bytes) -> ObjVersion:
        obj_type, token, referenced, _ = msgpack.unpackb(raw)
        return ObjVersion(obj_type, token, referenced)

    def unpack_obj_of_types(self, obj_id: bytes, raw: bytes, types: frozenset[str] | None) -> ObjRow | None:
        """The row, if its type is one of ``types`` (None: any)."""
        row = self.unpack_obj(obj_id, raw)
        return row if types is None or row.obj_type in types else None

    def restamped_obj(self, obj_id: bytes, raw: bytes, referenced: int) -> bytes:
        """A stored object value with only ``referenced`` changed."""
        return self.pack_obj(self.unpack_obj(obj_id, raw)._replace(referenced=referenced))


class NessieRowFormat(RowFormat):
    """The keys and values of Nessie's RocksDB backend."""

    refs_family = "nessie_refs"
    objs_family = "nessie_objects"

    def repository_id_problem(self, repo: str) -> str | None:
        if ":" in repo:
            return (
                "in Nessie's layout RocksDB keys start with the repository id and ':' unescaped, so an "
                "id holding ':' would share keys with another repository; choose an id without ':'"
            )
        return None

    def _make_prefix(self, repo: str) -> bytes:
        return (repo + ":").encode("utf-8")

    def repo_of_key(self, key: bytes) -> str:
        return key.partition(b":")[0].decode("utf-8")

    def pack_ref(self, row: RefRow) -> bytes:
        return ref_row_proto(row)

    def unpack_ref(self, name: str, raw: bytes) -> RefRow:
        return ref_row_of_proto(name, raw)

    def pack_obj(self, row: ObjRow) -> bytes:
        return stored_obj_value(row.data, row.version_token, row.referenced)

    def unpack_obj(self, obj_id: bytes, raw: bytes) -> ObjRow:
        data, frame = column_obj_data(raw)
        return ObjRow(obj_id, frame.type_short_name, frame.version_token, data, frame.referenced)

    def obj_version(self, raw: bytes) -> ObjVersion:
        frame = obj_frame(raw)
        return ObjVersion(frame.type_short_name, frame.version_token, frame.referenced)

    def unpack_obj_of_types(self, obj_id: bytes, raw: bytes, types: frozenset[str] | None) -> ObjRow | None:
        # The type is known only by decoding the value: peek at it before converting the value.
        if types is not None and self.obj_version(raw).obj_type not in types:
            return None
        return self.unpack_obj(obj_id, raw)

    def restamped_obj(self, obj_id: bytes, raw: bytes, referenced: int) -> bytes:
        return restamped_obj_value(raw, referenced)


LOCHKIT_ROWS: Final = RowFormat()
NESSIE_ROWS: Final = NessieRowFormat()


def row_format(layout: StorageLayout) -> RowFormat:
    return NESSIE_ROWS if layout is NESSIE_LAYOUT else LOCHKIT_ROWS
