"""Deriving object ids: SHA-256 over a type name followed by fields.

The byte stream matches what Nessie feeds Guava's SHA-256 hasher, so an id derived here equals the
one Nessie derives for the same object: primitives are little-endian, strings are UTF-8 with no
length prefix or terminator, ids contribute their raw bytes, and a null (``None``) contributes
nothing at all.
"""

from __future__ import annotations

import hashlib
import struct
import uuid
from typing import Protocol

from persist_spi.ids import ObjId

_INT = struct.Struct("<i")
_LONG = struct.Struct("<q")
_CHAR = struct.Struct("<H")
_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")


class Hashable(Protocol):
    """A value that feeds its own fields into an id hasher (headers, index stripes)."""

    def hash_into(self, hasher: ObjIdHasher) -> None: ...


class ObjIdHasher:
    """Builder for an id; call the ``put_*`` methods in a fixed field order, then :meth:`generate`."""

    __slots__ = ("_sha",)

    def __init__(self, type_name: str) -> None:
        self._sha = hashlib.sha256()
        self._sha.update(type_name.encode("utf-8"))

    def put_bool(self, value: bool | None) -> ObjIdHasher:
        if value is not None:
            self._sha.update(b"\x01" if value else b"\x00")
        return self

    def put_int(self, value: int | None) -> ObjIdHasher:
        """A Java ``int``: 4 bytes, little-endian, two's complement."""
        if value is not None:
            self._sha.update(_INT.pack(value))
        return self

    def put_long(self, value: int | None) -> ObjIdHasher:
        """A Java ``long``: 8 bytes, little-endian, two's complement."""
        if value is not None:
            self._sha.update(_LONG.pack(value))
        return self

    def put_char(self, value: str | None) -> ObjIdHasher:
        """A Java ``char`` (one UTF-16 code unit): 2 bytes, little-endian."""
        if value is not None:
            self._sha.update(_CHAR.pack(ord(value)))
        return self

    def put_float(self, value: float | None) -> ObjIdHasher:
        if value is not None:
            self._sha.update(_FLOAT.pack(value))
        return self

    def put_double(self, value: float | None) -> ObjIdHasher:
        if value is not None:
            self._sha.update(_DOUBLE.pack(value))
        return self

    def put_str(self, value: str | None) -> ObjIdHasher:
        if value is not None:
            self._sha.update(value.encode("utf-8"))
        return self

    def put_bytes(self, value: bytes | None) -> ObjIdHasher:
        """Raw bytes, also used for object ids (no length prefix)."""
        if value is not None:
            self._sha.update(value)
        return self

    def put_uuid(self, value: uuid.UUID | None) -> ObjIdHasher:
        """Most significant long, then least significant long, each little-endian."""
        if value is not None:
            # Each half of the big-endian 16 bytes, byte-reversed: two little-endian longs.
            raw = value.bytes
            self._sha.update(raw[7::-1] + raw[15:7:-1])
        return self

    def put_hashable(self, value: Hashable | None) -> ObjIdHasher:
        if value is not None:
            value.hash_into(self)
        return self

    def generate(self) -> ObjId:
        return ObjId(self._sha.digest())
