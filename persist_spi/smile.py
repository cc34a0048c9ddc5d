"""Jackson's Smile format (binary JSON), by hand: the encoding Nessie stores custom objects in.

Values are JSON-like: None, bool, int (any size), float, :class:`~decimal.Decimal`, str, bytes
(an :class:`~persist_spi.ids.ObjId` too), lists and tuples, and mappings with str keys.

The writer produces the bytes Jackson's ``SmileMapper`` does with its default features, which is
how Nessie's ``SmileSerialization`` configures it: the 4-byte header, property names shared by
back-reference, string values never shared, binary as 7-bit groups, no end marker. What decides
the bytes, as Jackson writes them:

- an int takes the smallest form: a token byte for -16..15, 32-bit, 64-bit, then BigInteger;
- a float is a 64-bit double; a Decimal a BigDecimal (scale and unscaled value);
- a string of at most 64 UTF-8 bytes is a short string; a longer one ends with 0xFC, and is marked
  ASCII only if it is ASCII and at most 2666 characters long (Jackson marks longer ones Unicode
  without looking: three bytes a character would not fit its 8000-byte buffer);
- a property name of at most 64 ASCII or 56 UTF-8 bytes is a short name, a longer one ends with
  0xFC; a name seen before is a back-reference to its index (in order of first appearance, up to
  1024, then the table starts empty again; indexes ending in 0xFE/0xFF are never referred to);
- mappings are written in their iteration order.

The reader takes every form of the format, whatever features the writer had (shared string
values, raw binary, 32-bit floats, an end marker).

No dependency: the format is small enough to write by hand, as :mod:`persist_spi.protowire` does for
protobuf.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

from persist_spi.errors import CorruptData, InputError

#: ":)\n", format version 0, flags: shared property names (0x01). Jackson's default header.
SMILE_HEADER: Final = b":)\n\x01"

_HAS_SHARED_NAMES: Final = 0x01
_HAS_SHARED_VALUES: Final = 0x02
_MAX_SHARED: Final = 1024
_MAX_SHORT_VALUE_BYTES: Final = 64
_MAX_SHORT_ASCII_NAME: Final = 64
_MAX_SHORT_UNICODE_NAME: Final = 56
#: Jackson writes a longer ASCII string value with the Unicode token (see the module doc).
_MAX_LONG_ASCII_CHARS: Final = 2666
_END_OF_STRING: Final = 0xFC

_INT32_MIN: Final = -(2**31)
_INT32_MAX: Final = 2**31 - 1
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

_DOUBLE: Final = struct.Struct(">d")
_LONG_BITS: Final = struct.Struct(">Q")
_FLOAT: Final = struct.Struct(">f")
_INT_BITS: Final = struct.Struct(">I")
_DOUBLE_SHIFTS: Final = tuple(7 * (9 - k) for k in range(10))


class SmileEncodeError(InputError):
    """A value Smile has no form for (names where it is: ``$.field[2]``); nothing was written."""


class SmileDecodeError(CorruptData):
    """Bytes that are not a Smile document (says what is wrong and at which offset)."""


class _Unencodable(Exception):
    """Raised inside the writer; the containers it passes through add their part of the path."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(what, why)
        self.what = what
        self.why = why
        self.path: list[str] = []


# --- writing -------------------------------------------------------------------------------------


def encode_smile(value: Any) -> bytes:
    """``value`` as the Smile document Jackson's default ``SmileMapper`` writes for it."""
    writer = _Writer()
    try:
        writer.value(value)
    except _Unencodable as e:
        where = "$" + "".join(reversed(e.path))
        raise SmileEncodeError(f"The {e.what} at {where} cannot be written as Smile: {e.why}") from None
    except RecursionError:
        raise SmileEncodeError("The value is nested too deeply to be written as Smile") from None
    return bytes(writer.out)


_SMILE_TYPES: Final = (
    "Smile holds None, bool, int, float, Decimal, str, bytes, lists/tuples and mappings with str keys"
)


def _zigzag(value: int, bits: int) -> int:
    return (value << 1) ^ (value >> (bits - 1))


def _vint(out: bytearray, value: int) -> None:
    """An unsigned value in Smile's variable length form: 7-bit groups, most significant first,
    the last one 6 bits with bit 7 set."""
    if value < 0x2000:  # one or two bytes: most lengths and ints
        if value >= 0x40:
            out.append(value >> 6)
        out.append(0x80 | (value & 0x3F))
        return
    last = 0x80 | (value & 0x3F)
    value >>= 6
    if value:
        groups = bytearray()
        while value:
            groups.append(value & 0x7F)
            value >>= 7
        groups.reverse()
        out += groups
    out.append(last)


# Spreading 7-byte groups into eight 7-bit bytes, for all groups at once: each group sits in an
# 8-byte slot of one big int, and three mask-and-shift steps move its bits apart (28 | 28, then
# 14 | 14, then 7 | 7 bits). Cost grows with the length, not with the number of groups times
# Python's per-group overhead.
_SPREAD_STEPS: Final = (
    (0x0000_0000_0FFF_FFFF, 0x00FF_FFFF_F000_0000, 4),
    (0x0000_3FFF_0000_3FFF, 0x0FFF_C000_0FFF_C000, 2),
    (0x007F_007F_007F_007F, 0x3F80_3F80_3F80_3F80, 1),
)


@functools.lru_cache(maxsize=64)
def _masks(groups: int) -> tuple[tuple[int, int, int], ...]:
    """The spreading steps' 64-bit masks repeated for ``groups`` slots."""
    return tuple((_repeat(keep, groups), _repeat(move, groups), shift) for keep, move, shift in _SPREAD_STEPS)


def _repeat(mask: int, groups: int) -> int:
    return int.from_bytes(mask.to_bytes(8, "big") * groups, "big")


def _seven_bit(out: bytearray, data: bytes) -> None:
    """Length, then every 7 bytes as eight 7-bit groups; a last part of n bytes as n 7-bit groups
    and one group of the remaining n bits."""
    n = len(data)
    _vint(out, n)
    groups, rest = divmod(n, 7)
    if groups:
        slots = bytearray(8 * groups)  # each group in the low 7 bytes of an 8-byte slot
        for i in range(7):
            slots[i + 1 :: 8] = data[i : 7 * groups : 7]
        value = int.from_bytes(slots, "big")
        for keep, move, shift in _masks(groups):
            value = (value & keep) | ((value & move) << shift)
        out += value.to_bytes(8 * groups, "big")
    if rest:
        bits = rest * 8
        tail = int.from_bytes(data[7 * groups :], "big")
        out += bytes((tail >> (bits - 7 * (k + 1))) & 0x7F for k in range(rest))
        out.append(tail & ((1 << rest) - 1))


def _java_bytes(value: int) -> bytes:
    """Java's ``BigInteger.toByteArray()``: two's complement, big-endian, with a sign bit."""
    bit_length = (~value if value < 0 else value).bit_length()
    return value.to_bytes(bit_length // 8 + 1, "big", signed=True)


class _Writer:
    __slots__ = ("_count", "names", "out")

    def __init__(self) -> None:
        self.out = bytearray(SMILE_HEADER)
        self.names: dict[str, int] = {}  # name -> back-reference index
        self._count = 0  # names written in full since the table (re)started

    def value(self, value: Any) -> None:
        write = _WRITERS.get(type(value))  # the exact type first: one lookup, no isinstance chain
        if write is not None:
            write(self, value)
        elif isinstance(value, bool):
            self.boolean(value)
        elif isinstance(value, int):  # an IntEnum, for one
            self.integer(value)
        elif isinstance(value, str):
            self.string(value)
        elif isinstance(value, Mapping):
            self.mapping(value)
        elif isinstance(value, (list, tuple)):  # a NamedTuple, for one
            self.sequence(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):  # an ObjId, for one
            self.binary(value)
        elif isinstance(value, float):
            self.double(value)
        elif isinstance(value, Decimal):
            self.decimal(value)
        else:
            raise _Unencodable(f"value of type {type(value).__name__}", _SMILE_TYPES)

    def null(self, _: None) -> None:
        self.out.append(0x21)

    def boolean(self, value: bool) -> None:
        self.out.append(0x23 if value else 0x22)

    def binary(self, value: bytes | bytearray | memoryview) -> None:
        self.out.append(0xE8)
        _seven_bit(self.out, bytes(value))

    def double(self, value: float) -> None:
        bits = _LONG_BITS.unpack(_DOUBLE.pack(value))[0]
        self.out.append(0x29)
        self.out += bytes((bits >> shift) & 0x7F for shift in _DOUBLE_SHIFTS)

    def string(self, text: str) -> None:
        out = self.out
        if not text:
            out.append(0x20)
            return
        raw = self._utf8(text)
        n = len(raw)
        ascii_only = n == len(text)
        if n <= _MAX_SHORT_VALUE_BYTES:
            out.append(0x3F + n if ascii_only else 0x7E + n)
            out += raw
        else:
            out.append(0xE0 if ascii_only and len(text) <= _MAX_LONG_ASCII_CHARS else 0xE4)
            out += raw
            out.append(_END_OF_STRING)

    @staticmethod
    def _utf8(text: str) -> bytes:
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise _Unencodable("string", f"it is not valid Unicode ({e.reason})") from None

    def integer(self, value: int) -> None:
        out = self.out
        if -16 <= value <= 15:
            out.append(0xC0 + _zigzag(value, 32))
        elif _INT32_MIN <= value <= _INT32_MAX:
            out.append(0x24)
            _vint(out, _zigzag(value, 32))
        elif _INT64_MIN <= value <= _INT64_MAX:
            out.append(0x25)
            _vint(out, _zigzag(value, 64))
        else:
            out.append(0x26)
            _seven_bit(out, _java_bytes(value))

    def decimal(self, value: Decimal) -> None:
        if not value.is_finite():
            raise _Unencodable(f"Decimal {value}", "Smile's BigDecimal has no NaN or Infinity")
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # finite
        unscaled = int("".join(map(str, digits)) or "0")
        scale = -exponent
        if not _INT32_MIN <= scale <= _INT32_MAX:
            raise _Unencodable(f"Decimal {value}", "its scale does not fit 32 bits")
        self.out.append(0x2A)
        _vint(self.out, _zigzag(scale, 32))
        _seven_bit(self.out, _java_bytes(-unscaled if sign else unscaled))

    def sequence(self, items: list[Any] | tuple[Any, ...]) -> None:
        self.out.append(0xF8)
        for i, item in enumerate(items):
            try:
                self.value(item)
            except _Unencodable as e:
                e.path.append(f"[{i}]")
                raise
        self.out.append(0xF9)

    def mapping(self, doc: Mapping[Any, Any]) -> None:
        self.out.append(0xFA)
        for key, item in doc.items():
            if not isinstance(key, str):
                raise _Unencodable(f"key {key!r} ({type(key).__name__})", "property names are strings")
            try:
                self.name(key)
                self.value(item)
            except _Unencodable as e:
                e.path.append(f".{key}")
                raise
        self.out.append(0xFB)

    def name(self, name: str) -> None:
        out = self.out
        if not name:
            out.append(0x20)
            return
        index = self.names.get(name)
        if index is not None:
            if index < 64:
                out.append(0x40 + index)
            else:
                out.append(0x30 + (index >> 8))
                out.append(index & 0xFF)
            return
        raw = self._utf8(name)
        n = len(raw)
        if n == len(name) and n <= _MAX_SHORT_ASCII_NAME:
            out.append(0x7F + n)
            out += raw
        elif n != len(name) and n <= _MAX_SHORT_UNICODE_NAME:
            out.append(0xBE + n)
            out += raw
        else:
            out.append(0x34)
            out += raw
            out.append(_END_OF_STRING)
        self._remember(name)

    def _remember(self, name: str) -> None:
        if self._count == _MAX_SHARED:  # full: Jackson starts over with an empty table
            self.names.clear()
            self._count = 0
        if (self._count & 0xFF) < 0xFE:  # a reference ending in 0xFE/0xFF is never written
            self.names[name] = self._count
        self._count += 1


_WRITERS: Final[dict[type, Callable[[_Writer, Any], None]]] = {
    str: _Writer.string,
    int: _Writer.integer,
    bool: _Writer.boolean,
    type(None): _Writer.null,
    dict: _Writer.mapping,
    list: _Writer.sequence,
    tuple: _Writer.sequence,
    bytes: _Writer.binary,
    float: _Writer.double,
    Decimal: _Writer.decimal,
}


# --- reading -------------------------------------------------------------------------------------


def decode_smile(data: bytes, *, sequence: Callable[[list[Any]], Any] = list) -> Any:
    """The value a Smile document holds: maps as dicts, arrays as ``sequence(items)`` (lists by
    default; ``tuple`` for immutable values), binary as bytes, BigDecimal as Decimal.
    :class:`SmileDecodeError` if the bytes are no Smile document."""
    if len(data) < 4 or data[:3] != SMILE_HEADER[:3]:
        raise SmileDecodeError(f"the data does not start with Smile's header ':)\\n' (starts {data[:4]!r})")
    flags = data[3]
    if flags >> 4:
        raise SmileDecodeError(f"Smile format version {flags >> 4}; only version 0 exists")
    reader = _Reader(data, flags, sequence)
    try:
        value = reader.value(reader.token())
        if reader.pos < len(data) and data[reader.pos] == 0xFF:  # the optional end marker
            reader.pos += 1
        if reader.pos != len(data):
            raise SmileDecodeError(f"{len(data) - reader.pos} bytes after the value, at offset {reader.pos}")
    except IndexError:
        raise SmileDecodeError(f"the Smile data ends in the middle of a value ({len(data)} bytes)") from None
    except UnicodeDecodeError as e:
        raise SmileDecodeError(f"a string is not valid UTF-8 near offset {reader.pos}: {e.reason}") from None
    except RecursionError:
        raise SmileDecodeError(f"arrays and maps nested too deeply, at offset {reader.pos}") from None
    return value


class _Reader:
    def __init__(self, data: bytes, flags: int, sequence: Callable[[list[Any]], Any]) -> None:
        self.data = data
        self.pos = 4
        self.sequence = sequence
        self.names: list[str] | None = [] if flags & _HAS_SHARED_NAMES else None
        self.values: list[str] | None = [] if flags & _HAS_SHARED_VALUES else None

    def token(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def _fail(self, what: str) -> SmileDecodeError:
        return SmileDecodeError(f"{what} at offset {self.pos - 1}")

    def value(self, b: int) -> Any:
        return _VALUE_READERS[b](self, b)

    def short_string(self, b: int) -> str:
        """0x40-0x7F: ASCII of 1-64 bytes; 0x80-0xBF: UTF-8 of 2-65 bytes."""
        start = self.pos
        end = self.pos = start + (b - 0x3F if b < 0x80 else b - 0x7E)
        if end > len(self.data):
            raise IndexError
        text = self.data[start:end].decode("utf-8")
        if self.values is not None:
            _share(self.values, text)
        return text

    def small_int(self, b: int) -> int:
        zigzag = b - 0xC0
        return (zigzag >> 1) ^ -(zigzag & 1)

    def integer(self, b: int) -> int:
        zigzag = self.vint()
        return (zigzag >> 1) ^ -(zigzag & 1)

    def big_integer(self, b: int) -> int:
        return int.from_bytes(self.seven_bit(), "big", signed=True)

    def double(self, b: int) -> float:
        bits = 0
        for _ in range(10):
            bits = (bits << 7) | self.token()
        return float(_DOUBLE.unpack(_LONG_BITS.pack(bits & 0xFFFF_FFFF_FFFF_FFFF))[0])

    def float32(self, b: int) -> float:
        bits = 0
        for _ in range(5):
            bits = (bits << 7) | self.token()
        return float(_FLOAT.unpack(_INT_BITS.pack(bits & 0xFFFF_FFFF))[0])

    def big_decimal(self, b: int) -> Decimal:
        zigzag = self.vint()
        scale = (zigzag >> 1) ^ -(zigzag & 1)
        unscaled = int.from_bytes(self.seven_bit(), "big", signed=True)
        digits = tuple(map(int, str(abs(unscaled))))
        return Decimal((int(unscaled < 0), digits, -scale))

    def long_string(self, b: int) -> str:
        return self.until_end_of_string()

    def binary(self, b: int) -> bytes:
        return self.seven_bit()

    def raw_binary(self, b: int) -> bytes:
        n = self.vint()
        start = self.pos
        end = self.pos = start + n
        if end > len(self.data):
            raise IndexError
        return self.data[start:end]

    def array(self, b: int) -> Any:
        data = self.data
        items: list[Any] = []
        while True:
            t = data[self.pos]
            self.pos += 1
            if t == 0xF9:
                return self.sequence(items)
            items.append(_VALUE_READERS[t](self, t))

    def map_value(self, b: int) -> dict[str, Any]:
        return self.mapping()

    def shared_short(self, b: int) -> str:
        return self.shared_value(b - 1)

    def shared_long(self, b: int) -> str:
        return self.shared_value(((b & 0x03) << 8) | self.token())

    def unknown(self, b: int) -> Any:
        raise self._fail(f"unknown Smile value token 0x{b:02x}")

    def shared_value(self, index: int) -> str:
        if self.values is None:
            raise self._fail("a shared string value reference, but the header does not enable them")
        if not 0 <= index < len(self.values):
            raise self._fail(f"a reference to shared string {index}, but {len(self.values)} are defined")
        return self.values[index]

    def mapping(self) -> dict[str, Any]:
        data = self.data
        doc: dict[str, Any] = {}
        while True:
            b = data[self.pos]
            self.pos += 1
            if b == 0xFB:
                return doc
            key = self.name(b)
            t = data[self.pos]
            self.pos += 1
            doc[key] = _VALUE_READERS[t](self, t)

    def name(self, b: int) -> str:
        data = self.data
        if 0x80 <= b <= 0xF7:  # short names: ASCII 0x80-0xBF, UTF-8 0xC0-0xF7
            n = b - 0x7F if b < 0xC0 else b - 0xBE
            start = self.pos
            self.pos = start + n
            if self.pos > len(data):
                raise IndexError
            name = data[start : self.pos].decode("utf-8")
        elif 0x40 <= b < 0x80:
            return self.shared_name(b - 0x40)
        elif b == 0x20:
            return ""
        elif b == 0x34:
            name = self.until_end_of_string()
        elif 0x30 <= b <= 0x33:
            return self.shared_name(((b & 0x03) << 8) | self.token())
        else:
            raise self._fail(f"token 0x{b:02x} where a property name (or the end of the map) belongs")
        if self.names is not None:
            _share(self.names, name)
        return name

    def shared_name(self, index: int) -> str:
        if self.names is None:
            raise self._fail("a shared property name reference, but the header does not enable them")
        if index >= len(self.names):
            raise self._fail(f"a reference to shared name {index}, but {len(self.names)} are defined")
        return self.names[index]

    def until_end_of_string(self) -> str:
        end = self.data.find(_END_OF_STRING, self.pos)
        if end < 0:
            raise IndexError
        text = self.data[self.pos : end].decode("utf-8")
        self.pos = end + 1
        return text

    def vint(self) -> int:
        data = self.data
        pos = self.pos
        value = 0
        while True:
            b = data[pos]
            pos += 1
            if b & 0x80:
                self.pos = pos
                return (value << 6) | (b & 0x3F)
            value = (value << 7) | b

    def seven_bit(self) -> bytes:
        """Binary written by :func:`_seven_bit` (the spreading steps undone, in reverse order)."""
        n = self.vint()
        groups, rest = divmod(n, 7)
        data = self.data
        start = self.pos
        end = start + 8 * groups + (rest + 1 if rest else 0)
        if end > len(data):
            raise IndexError
        out = bytearray(n)
        if groups:
            value = int.from_bytes(data[start : start + 8 * groups], "big")
            for keep, move, shift in reversed(_masks(groups)):
                value = (value & keep) | ((value >> shift) & move)
            slots = value.to_bytes(8 * groups, "big")
            for i in range(7):
                out[i : 7 * groups : 7] = slots[i + 1 :: 8]
        if rest:
            tail = 0
            for b in data[start + 8 * groups : end - 1]:
                tail = (tail << 7) | (b & 0x7F)
            tail = (tail << rest) | (data[end - 1] & ((1 << rest) - 1))
            out[7 * groups :] = (tail & ((1 << (8 * rest)) - 1)).to_bytes(rest, "big")
        self.pos = end
        return bytes(out)


def _share(table: list[str], text: str) -> None:
    """A name or short value the writer may refer back to; a full table starts over."""
    if len(table) == _MAX_SHARED:
        table.clear()
    table.append(text)


def _constant(value: Any) -> Callable[[_Reader, int], Any]:
    return lambda reader, b: value


def _value_readers() -> list[Callable[[_Reader, int], Any]]:
    """What reads a value, by its token byte."""
    readers: list[Callable[[_Reader, int], Any]] = [_Reader.unknown] * 256
    readers[0x01:0x20] = [_Reader.shared_short] * 0x1F  # 0x00 is never written
    readers[0x20:0x24] = [_constant(""), _constant(None), _constant(False), _constant(True)]
    readers[0x24] = readers[0x25] = _Reader.integer
    readers[0x26] = _Reader.big_integer
    readers[0x28] = _Reader.float32
    readers[0x29] = _Reader.double
    readers[0x2A] = _Reader.big_decimal
    readers[0x40:0xC0] = [_Reader.short_string] * 0x80
    readers[0xC0:0xE0] = [_Reader.small_int] * 0x20
    readers[0xE0] = readers[0xE4] = _Reader.long_string
    readers[0xE8] = _Reader.binary
    readers[0xEC:0xF0] = [_Reader.shared_long] * 4
    readers[0xF8] = _Reader.array
    readers[0xFA] = _Reader.map_value
    readers[0xFD] = _Reader.raw_binary
    return readers


_VALUE_READERS: Final = _value_readers()
