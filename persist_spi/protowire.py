"""Protocol Buffers' wire format, by hand: enough to write and read Nessie's stored messages.

Nessie stores its objects, references and content values as protobuf messages. Writing them byte
for byte as Java's protobuf runtime does is what makes ids match and lets both sides read each
other's rows, so this module is explicit about the rules that decide the bytes: fields go out in the
order the caller writes them (Java writes them in field-number order), and a proto3 scalar equal to
its default is left out unless the field is ``optional`` and set (callers decide; see ``present``).

It has no dependency: the ``protobuf`` package would bring generated code and a C extension for
about a dozen small messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from persist_spi.errors import CorruptData

#: Wire types (the low three bits of a field's tag).
VARINT: Final = 0
FIXED64: Final = 1
LENGTH_DELIMITED: Final = 2
FIXED32: Final = 5

_UINT64_MASK: Final = (1 << 64) - 1
#: The varints of 0..127, one byte each: most tags and lengths, so those are looked up, not built.
_ONE_BYTE: Final = tuple(bytes((n,)) for n in range(0x80))


def encode_uvarint(value: int) -> bytes:
    """An unsigned varint of up to 64 bits (a negative int64/int32 is first taken modulo 2**64, as
    Java writes it: ten bytes)."""
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    value &= _UINT64_MASK
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    value = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise CorruptData(f"protobuf varint is truncated at offset {pos}")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise CorruptData("protobuf varint is longer than 10 bytes")


def as_int64(value: int) -> int:
    """A decoded varint read as a signed 64-bit integer (int64 / int32 fields)."""
    value &= _UINT64_MASK
    return value - (1 << 64) if value >= 1 << 63 else value


def as_int32(value: int) -> int:
    """A decoded varint read as a signed 32-bit integer, as Java truncates it."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


@dataclass(slots=True)
class ProtoWriter:
    """Appends fields in the order they are written. The ``*_field`` methods write unconditionally;
    leaving out defaults is the caller's decision, because it depends on the field's presence rule."""

    _out: bytearray = field(default_factory=bytearray)

    def __init__(self) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        self._out = bytearray()

    def _tag(self, number: int, wire_type: int) -> None:
        tag = (number << 3) | wire_type
        if tag < 0x80:  # fields 1..15
            self._out.append(tag)
        else:
            self._out += encode_uvarint(tag)

    def varint_field(self, number: int, value: int) -> ProtoWriter:
        """int32, int64, uint32, uint64, enum: negative values take ten bytes, as in Java."""
        self._tag(number, VARINT)
        self._out += encode_uvarint(value)
        return self

    def bool_field(self, number: int, value: bool) -> ProtoWriter:
        return self.varint_field(number, 1 if value else 0)

    def bytes_field(self, number: int, value: bytes) -> ProtoWriter:
        """bytes, and embedded messages already serialised."""
        self._tag(number, LENGTH_DELIMITED)
        self._out += encode_uvarint(len(value))
        self._out += value
        return self

    def string_field(self, number: int, value: str) -> ProtoWriter:
        return self.bytes_field(number, value.encode("utf-8"))

    def copy_field(self, read: ProtoField) -> ProtoWriter:
        """A field as :func:`iter_fields` read it, written back unchanged (fields a caller does not
        know are kept, not dropped, when it rewrites a message)."""
        if read.wire_type in (FIXED64, FIXED32):
            self._tag(read.number, read.wire_type)
            self._out += read.as_uint().to_bytes(8 if read.wire_type == FIXED64 else 4, "little")
            return self
        if isinstance(read.value, bytes):
            return self.bytes_field(read.number, read.value)
        return self.varint_field(read.number, read.value)

    def to_bytes(self) -> bytes:
        return bytes(self._out)


@dataclass(frozen=True, slots=True)
class ProtoField:
    """One field as read: its number, wire type, and value (an int for varints and fixed-size
    fields, the raw bytes for length-delimited ones)."""

    number: int
    wire_type: int
    value: int | bytes

    def as_bytes(self) -> bytes:
        if not isinstance(self.value, bytes):
            raise CorruptData(f"protobuf field {self.number} is not length-delimited")
        return self.value

    def as_str(self) -> str:
        try:
            return self.as_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptData(f"protobuf field {self.number} is not UTF-8: {e}") from None

    def as_uint(self) -> int:
        if isinstance(self.value, bytes):
            raise CorruptData(f"protobuf field {self.number} is not a number")
        return self.value


def iter_fields(buf: bytes) -> Iterator[ProtoField]:
    """Every field of a serialised message, in the order they are stored (a repeated field yields
    one entry per element; unknown fields are yielded like known ones, so a caller can skip them)."""
    pos = 0
    end = len(buf)
    while pos < end:
        tag, pos = decode_uvarint(buf, pos)
        number, wire_type = tag >> 3, tag & 0x7
        if number == 0:
            raise CorruptData(f"protobuf field number 0 at offset {pos}")
        value: int | bytes
        if wire_type == VARINT:
            value, pos = decode_uvarint(buf, pos)
        elif wire_type == LENGTH_DELIMITED:
            length, pos = decode_uvarint(buf, pos)
            if pos + length > end:
                raise CorruptData(f"protobuf field {number} runs past the end of the message")
            value = bytes(buf[pos : pos + length])
            pos += length
        elif wire_type == FIXED64:
            if pos + 8 > end:
                raise CorruptData(f"protobuf field {number} runs past the end of the message")
            value = int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire_type == FIXED32:
            if pos + 4 > end:
                raise CorruptData(f"protobuf field {number} runs past the end of the message")
            value = int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise CorruptData(f"protobuf wire type {wire_type} of field {number} is not supported")
        yield ProtoField(number, wire_type, value)


def write_delimited(message: bytes) -> bytes:
    """``writeDelimitedTo``: the message's length as a varint, then the message."""
    return encode_uvarint(len(message)) + message


def iter_delimited(buf: bytes) -> Iterator[bytes]:
    """The messages of a concatenation of ``writeDelimitedTo`` records."""
    pos = 0
    while pos < len(buf):
        length, pos = decode_uvarint(buf, pos)
        if pos + length > len(buf):
            raise CorruptData("a length-delimited protobuf record runs past the end of the value")
        yield bytes(buf[pos : pos + length])
        pos += length
