"""Unsigned LEB128 varints (7 bits per byte, low group first), as Nessie's index format uses them."""

from __future__ import annotations

from typing import Final

from persist_spi.errors import CorruptData

#: The varints of 0..127, one byte each: looked up rather than built (most lengths in an index).
_ONE_BYTE: Final = tuple(bytes((n,)) for n in range(0x80))


def encode_varint(value: int) -> bytes:
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    if value < 0:
        raise ValueError(f"varint must not be negative, got {value}")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The value at ``pos`` and the position after it; ``ValueError`` if the bytes end first."""
    try:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        value = b & 0x7F
        shift = 7
        pos += 1
        while True:
            b = buf[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value, pos
            shift += 7
            if shift > 35:
                raise CorruptData("varint is longer than 5 bytes")
    except IndexError:
        raise CorruptData(f"varint is truncated at offset {pos}") from None


def varint_size(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size
