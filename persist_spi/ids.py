"""Object ids: content hashes that name every stored object."""

from __future__ import annotations

import hashlib
import os
import re
from typing import Final

from persist_spi.errors import InputError

MAX_OBJ_ID_LENGTH: Final = 256
_HEX: Final = re.compile(r"[0-9a-fA-F]*")


class ObjId(bytes):
    """An object id: normally the 32 bytes of a SHA-256 digest.

    It is a ``bytes`` subclass so ids hash, compare and serialise at native speed; ``str()`` gives
    the lowercase hex text form. Lengths other than 32 exist only for ids imported from elsewhere.
    """

    __slots__ = ()

    def __new__(cls, raw: bytes = b"") -> ObjId:
        if len(raw) > MAX_OBJ_ID_LENGTH:
            raise InputError(f"Object id is {len(raw)} bytes long; the maximum is {MAX_OBJ_ID_LENGTH} bytes")
        return super().__new__(cls, raw)

    @classmethod
    def from_hex(cls, text: str) -> ObjId:
        """Parse the hex text form, rejecting odd lengths and non-hex characters."""
        if not _HEX.fullmatch(text):
            raise InputError(f"Object id '{text}' contains characters that are not hex digits")
        if len(text) % 2:
            raise InputError(
                f"Object id '{text}' has an odd number of hex digits ({len(text)}); "
                "an id is two hex digits per byte"
            )
        try:
            return cls(bytes.fromhex(text))
        except ValueError:
            raise InputError(f"Object id '{text}' contains characters that are not hex digits") from None

    @property
    def hex_text(self) -> str:
        return self.hex()

    def __str__(self) -> str:
        return self.hex()

    def __repr__(self) -> str:
        return f"ObjId({self.hex()})"

    @property
    def serialized_size(self) -> int:
        """Bytes this id takes inside an index: a varint length, then the id bytes."""
        n = len(self)
        return n + (1 if n < 0x80 else 2)


_bytes_new = bytes.__new__


def trusted_obj_id(raw: bytes) -> ObjId:
    """An ObjId from bytes already known to be an id (read back from lochkit's own serialised
    forms, whose ids were checked when written): skips the length check, which as a Python-level
    ``__new__`` costs several times the construction itself on paths that decode many ids."""
    return _bytes_new(ObjId, raw)


#: SHA-256 of UTF-8 ``empty``: the "no ancestor" commit, the pointer of an empty branch. Never stored.
EMPTY_OBJ_ID: Final = ObjId(hashlib.sha256(b"empty").digest())

#: The zero-length id, used as "no value" inside index elements.
ZERO_LENGTH_OBJ_ID: Final = ObjId(b"")


def random_obj_id() -> ObjId:
    """32 random bytes; for tests and tools only (real ids are content hashes)."""
    return ObjId(os.urandom(32))
