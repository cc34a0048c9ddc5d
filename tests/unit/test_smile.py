"""The Smile codec's rules, each against bytes worked out from the format specification and from
what Jackson's SmileGenerator writes with its default features (header, shared property names, no
shared string values, binary as 7-bit bytes). Nessie's own output is checked against these rules
in ``test_smile_vectors.py``."""

from __future__ import annotations

import math
import random
import struct
from decimal import Decimal
from typing import Any

import pytest

from persist_spi.errors import CorruptData, InputError
from persist_spi.ids import ObjId
from persist_spi.smile import SMILE_HEADER, SmileDecodeError, SmileEncodeError, decode_smile, encode_smile

H = SMILE_HEADER


def test_the_header_is_jacksons_default_one() -> None:
    # ":)\n", version 0, flag 0x01 "shared property names"; no shared values, no raw binary.
    assert H == b":)\n\x01"
    assert encode_smile(None) == H + b"\x21"


@pytest.mark.parametrize(
    ("value", "body"),
    [
        (None, "21"),
        (False, "22"),
        (True, "23"),
        ("", "20"),
        # Small ints: zigzag in the token byte.
        (0, "c0"),
        (-1, "c1"),
        (1, "c2"),
        (15, "de"),
        (-16, "df"),
        # 32-bit: token 0x24, zigzag as 7-bit groups, the last one 6 bits with bit 7 set.
        (16, "24a0"),
        (-17, "24a1"),
        (42, "240194"),
        (2**31 - 1, "241f7f7f7fbe"),
        (-(2**31), "241f7f7f7fbf"),
        # 64-bit only beyond the int range.
        (2**31, "252000000080"),
        (-(2**62), "25" + "01" + "7f" * 8 + "bf"),
        (2**63 - 1, "25" + "03" + "7f" * 8 + "be"),
        # Beyond a long: BigInteger, length and 7-bit two's-complement bytes (Java's toByteArray).
        (2**63, "26" + "89" + "0020000000000000" + "000000"),
        (-(2**63) - 1, "26" + "89" + "7f5f7f7f7f7f7f7f" + "7f7f03"),
        # Doubles: 0x29 and 64 bits in ten 7-bit groups.
        (1.0, "29" + "00" + "3f" + "78" + "00" * 7),
        (-2.5, "29" + "01" + "40" + "02" + "00" * 7),
        # Short strings: 0x40 + length - 1 (ASCII), 0x80 + length - 2 (UTF-8 bytes otherwise).
        ("a", "4061"),
        ("ä", "80c3a4"),
        # Binary (an id too): 0xE8, raw length, 7-bit groups (a full 7-byte group becomes 8 bytes).
        (b"", "e880"),
        (b"\xff", "e8817f01"),
        (bytes(range(1, 8)), "e887" + "0040403020140c07"),
        (ObjId(b"\x80\x01"), "e882" + "400001"),
        # Containers.
        ((), "f8f9"),
        ([], "f8f9"),
        ({}, "fafb"),
        ([1, [None]], "f8c2f821f9f9"),
        ({"a": 1}, "fa8061c2fb"),
        ({"": "x"}, "fa204078fb"),
        # 1.50: scale 2 (zigzag 4), unscaled 150 as two bytes 00 96.
        (Decimal("1.50"), "2a" + "84" + "82" + "002502"),
    ],
    ids=repr,
)
def test_each_value_as_jackson_writes_it(value: Any, body: str) -> None:
    encoded = encode_smile(value)
    assert encoded.hex() == H.hex() + body
    assert decode_smile(encoded) == (list(value) if isinstance(value, tuple) else value)


def test_a_double_keeps_every_bit() -> None:
    for value in (0.1, -0.0, 1e308, 5e-324, math.inf, -math.inf):
        back = decode_smile(encode_smile(value))
        assert struct.pack(">d", back) == struct.pack(">d", value)
    assert math.isnan(decode_smile(encode_smile(math.nan)))


def test_every_binary_length_round_trips() -> None:
    for n in range(30):
        data = bytes((i * 37 + n) & 0xFF for i in range(n))
        encoded = encode_smile(data)
        assert len(encoded) == len(H) + 1 + 1 + n // 7 * 8 + (n % 7 + 1 if n % 7 else 0)
        assert decode_smile(encoded) == data


def _seven_bit_reference(data: bytes) -> bytes:
    """The 7-bit form worked out bit by bit: every 7 bytes as eight groups of 7 bits; a last part of
    n bytes as n groups of 7 bits and one group of its last n bits."""
    bits = "".join(f"{b:08b}" for b in data)
    full = len(data) // 7 * 56
    groups = [bits[i : i + 7] for i in range(0, full, 7)]
    rest = bits[full:]
    if rest:
        n = len(rest) // 8
        groups += [rest[7 * k : 7 * k + 7] for k in range(n)] + [rest[7 * n :]]
    return bytes(int(g, 2) for g in groups)


@pytest.mark.parametrize("n", [1, 6, 7, 8, 33, 700, 7001])
def test_long_binary_is_the_reference_7_bit_form(n: int) -> None:
    data = random.Random(n).randbytes(n)
    encoded = encode_smile(data)
    assert encoded.endswith(_seven_bit_reference(data))
    assert len(encoded) == len(H) + 1 + (1 if n < 64 else 2) + len(_seven_bit_reference(data))
    assert decode_smile(encoded) == data


def test_big_integers_round_trip() -> None:
    for value in (2**63, -(2**63) - 1, 2**200 + 12345, -(2**127), -128 * 2**64, 255 * 2**64):
        assert decode_smile(encode_smile(value)) == value


def test_decimals_keep_their_scale() -> None:
    for text in ("1.50", "-0.001", "123456789012345678901234567890.123456789", "1E+5", "0"):
        back = decode_smile(encode_smile(Decimal(text)))
        assert isinstance(back, Decimal)
        assert back.as_tuple() == Decimal(text).as_tuple()


@pytest.mark.parametrize(
    ("length", "token"),
    [(32, 0x5F), (33, 0x60), (64, 0x7F), (65, 0xE0), (2666, 0xE0), (2667, 0xE4)],
)
def test_ascii_string_lengths(length: int, token: int) -> None:
    """Up to 64 bytes a short string; longer ones end with 0xFC. Jackson marks an ASCII string of
    more than 2666 characters as Unicode (three bytes a character would not fit its 8000-byte
    buffer, so it cannot look first), and so does lochkit, to write the same bytes."""
    text = "x" * length
    encoded = encode_smile(text)
    assert encoded[len(H)] == token
    if length > 64:
        assert encoded[-1] == 0xFC
    assert decode_smile(encoded) == text


@pytest.mark.parametrize(("text", "token"), [("é" * 32, 0xBE), ("é" * 33, 0xE4), ("日本語", 0x87)])
def test_unicode_string_lengths(text: str, token: int) -> None:
    encoded = encode_smile(text)
    assert encoded[len(H)] == token
    assert decode_smile(encoded) == text


def test_supplementary_characters() -> None:
    text = "ünïcödé ✓ 日本語 \U0001f600"
    assert decode_smile(encode_smile({text: text})) == {text: text}


def test_property_names_are_shared_back_references() -> None:
    encoded = encode_smile([{"name": 1}, {"name": 2}, {"other": 3, "name": 4}])
    assert encoded.hex() == H.hex() + "f8" + "fa836e616d65c2fb" + "fa40c4fb" + "fa846f74686572c640c8fb" + "f9"


def test_name_references_beyond_64_use_two_bytes() -> None:
    doc = {f"k{i}": i for i in range(70)}
    again = {f"k{i}": -i for i in range(70)}
    encoded = encode_smile([doc, again])
    second = encoded[encoded.index(b"\xfb") + 1 :]
    assert second[:3] == b"\xfa\x40\xc0"  # k0 is name 0
    assert b"\x30\x45" in second  # k69 is name 69: 0x30 + high bits, then the low byte
    assert decode_smile(encoded) == [doc, again]


def test_name_table_skips_indexes_ending_in_fe_ff() -> None:
    """Jackson never refers to a name whose index ends in 0xFE or 0xFF (bytes Smile reserves): it
    writes such a name in full each time. A reader keeps every name, so the indexes agree."""
    names = [f"n{i}" for i in range(300)]
    doc = [dict.fromkeys(names, 0), dict.fromkeys(names, 1)]
    encoded = encode_smile(doc)
    second = encoded[encoded.index(b"\xfb") + 1 :]
    assert b"\x30\xfd\xc2" in second  # n253: index 253
    assert b"\x83n254\xc2\x83n255\xc2\x31\x00\xc2" in second  # n254, n255 in full; n256: 256
    assert decode_smile(encoded) == doc


def test_name_table_restarts_after_1024_names() -> None:
    names = [f"n{i}" for i in range(1030)]
    doc = [dict.fromkeys(names, 0), {"n1024": 1, "n0": 2}]
    encoded = encode_smile(doc)
    assert encoded.endswith(b"\xfa\x40\xc2\x81n0\xc4\xfb\xf9")  # n1024 is name 0; n0 is forgotten
    assert decode_smile(encoded) == doc


def test_long_and_unicode_property_names() -> None:
    long_ascii = "p" * 65
    unicode_56 = "é" * 28
    unicode_57 = "é" * 28 + "x"
    doc = {long_ascii: 1, unicode_56: 2, unicode_57: 3, "x" * 64: 4}
    encoded = encode_smile(doc)
    body = encoded[len(H) + 1 :]
    assert body[0] == 0x34
    assert body[66] == 0xFC
    assert body[68] == 0xC0 - 2 + 56
    assert decode_smile(encoded) == doc
    assert decode_smile(encode_smile([doc, doc])) == [doc, doc]


def test_arrays_decode_as_the_sequence_type_asked_for() -> None:
    encoded = encode_smile({"a": [1, [2, {"b": []}]]})
    assert decode_smile(encoded) == {"a": [1, [2, {"b": []}]]}
    assert decode_smile(encoded, sequence=tuple) == {"a": (1, (2, {"b": ()}))}


def test_shared_string_values_and_raw_binary_are_read() -> None:
    """Writers with other features (shared values, raw binary) are read, though lochkit never
    writes those forms: header flags 0x02 and 0x04."""
    header = b":)\n\x07"
    body = b"\xf8" + b"\x42abc" + b"\x01" + b"\xfd\x83\x00\x01\xff" + b"\xf9"
    assert decode_smile(header + body) == ["abc", "abc", b"\x00\x01\xff"]


def test_an_end_marker_is_allowed() -> None:
    assert decode_smile(H + b"\xc2\xff") == 1


def test_float32_is_read() -> None:
    bits = struct.unpack(">I", struct.pack(">f", 1.5))[0]
    groups = bytes((bits >> (7 * (4 - k))) & 0x7F for k in range(5))
    assert decode_smile(H + b"\x28" + groups) == 1.5


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"", "header"),
        (b"{}", "header"),
        (b":)\n\x11\x21", "version"),
        (H, "ends"),
        (H + b"\xfa\x80a", "ends"),
        (H + b"\xf8\xc0", "ends"),
        (H + b"\x27", "0x27"),
        (H + b"\xfa\x40\x21\xfb", "shared name 0"),
        (H + b"\x01", "shared string"),
        (H + b"\xc0\xc0", "after the value"),
        (H + b"\xfa\x80a\xfc", "0xfc"),
        (H + b"\x80\xff\xfe", "UTF-8"),
        (H + b"\xfa\xfa\xfb", "property name"),
        (H + b"\xf9", "0xf9"),
    ],
)
def test_bytes_that_are_no_smile_are_corrupt(data: bytes, what: str) -> None:
    with pytest.raises(SmileDecodeError, match=what) as caught:
        decode_smile(data)
    assert isinstance(caught.value, CorruptData)


def test_nesting_deeper_than_python_recurses_is_refused_clearly() -> None:
    with pytest.raises(SmileDecodeError, match="nested too deeply"):
        decode_smile(H + b"\xf8" * 100_000)
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(SmileEncodeError, match="nested too deeply"):
        encode_smile(deep)


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ({1: "a"}, "key 1 .int. at \\$ cannot be written as Smile: property names are strings"),
        ({"a": [{"b": {1, 2}}]}, "value of type set at \\$.a\\[0\\].b cannot be written as Smile"),
        (object(), "value of type object at \\$ cannot"),
        (Decimal("NaN"), "Decimal NaN at \\$ cannot .*no NaN"),
        ("\ud800", "string at \\$ cannot .*surrogate"),
    ],
)
def test_values_smile_has_no_form_for(value: Any, what: str) -> None:
    with pytest.raises(SmileEncodeError, match=what) as caught:
        encode_smile(value)
    assert isinstance(caught.value, InputError)
