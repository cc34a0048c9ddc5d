"""The hand-written protobuf wire format against the encoding the protobuf documentation gives."""

from __future__ import annotations

import pytest

from persist_spi.errors import CorruptData
from persist_spi.protowire import (
    LENGTH_DELIMITED,
    VARINT,
    ProtoField,
    ProtoWriter,
    as_int32,
    as_int64,
    decode_uvarint,
    encode_uvarint,
    iter_delimited,
    iter_fields,
    write_delimited,
)


def test_the_documented_examples() -> None:
    # protobuf.dev's encoding guide: field 1 = 150 is 08 96 01; field 2 = "testing" is 12 07 ...
    assert ProtoWriter().varint_field(1, 150).to_bytes() == bytes.fromhex("089601")
    assert ProtoWriter().string_field(2, "testing").to_bytes() == bytes.fromhex("120774657374696e67")


def test_negative_numbers_take_ten_bytes_as_java_writes_them() -> None:
    assert encode_uvarint(-1) == bytes.fromhex("ffffffffffffffffff01")
    value, end = decode_uvarint(encode_uvarint(-2), 0)
    assert end == 10
    assert as_int64(value) == -2
    assert as_int32(value) == -2


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31 - 1, 2**32, 2**63 - 1])
def test_varints_round_trip(value: int) -> None:
    encoded = encode_uvarint(value)
    assert decode_uvarint(encoded, 0) == (value, len(encoded))
    assert as_int64(value) == value


@pytest.mark.parametrize(
    ("value", "hex_bytes"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "8001"),
        (150, "9601"),
        (300, "ac02"),
        (16_383, "ff7f"),
        (16_384, "808001"),
    ],
)
def test_varints_have_the_bytes_of_the_encoding_guide(value: int, hex_bytes: str) -> None:
    """Both encoders (protobuf's and the index format's), across the one-byte boundary."""
    from persist_spi.indexes.varint import encode_varint

    assert encode_uvarint(value) == bytes.fromhex(hex_bytes)
    assert encode_varint(value) == bytes.fromhex(hex_bytes)


def test_tags_of_fields_past_fifteen_take_two_bytes() -> None:
    assert ProtoWriter().varint_field(15, 1).to_bytes() == bytes.fromhex("7801")
    assert ProtoWriter().varint_field(16, 1).to_bytes() == bytes.fromhex("800101")
    assert ProtoWriter().bytes_field(2047, b"").to_bytes() == bytes.fromhex("fa7f00")


def test_the_index_varint_refuses_negative_numbers() -> None:
    from persist_spi.indexes.varint import encode_varint

    with pytest.raises(ValueError, match="must not be negative"):
        encode_varint(-1)


def test_fields_are_read_back_in_stored_order() -> None:
    message = ProtoWriter().varint_field(1, 7).bytes_field(3, b"\x00\x01").bool_field(10, True)
    message.string_field(3, "é")
    assert list(iter_fields(message.to_bytes())) == [
        ProtoField(1, VARINT, 7),
        ProtoField(3, LENGTH_DELIMITED, b"\x00\x01"),
        ProtoField(10, VARINT, 1),
        ProtoField(3, LENGTH_DELIMITED, "é".encode()),
    ]


def test_fixed_width_fields_are_read_and_can_be_skipped() -> None:
    # field 4, fixed64 = 1; field 5, fixed32 = 2
    raw = bytes.fromhex("21") + (1).to_bytes(8, "little") + bytes.fromhex("2d") + (2).to_bytes(4, "little")
    assert [(f.number, f.value) for f in iter_fields(raw)] == [(4, 1), (5, 2)]


@pytest.mark.parametrize(
    "raw",
    [
        bytes.fromhex("08"),  # varint missing
        bytes.fromhex("0896"),  # varint cut short
        bytes.fromhex("1205616263"),  # length 5, three bytes
        bytes.fromhex("0b"),  # wire type 3 (groups) is not supported
        bytes.fromhex("00"),  # field number 0
    ],
)
def test_broken_messages_are_corrupt_data(raw: bytes) -> None:
    with pytest.raises(CorruptData):
        list(iter_fields(raw))


def test_delimited_records_round_trip() -> None:
    records = [b"", b"a", bytes(200)]
    joined = b"".join(write_delimited(r) for r in records)
    assert list(iter_delimited(joined)) == records
    with pytest.raises(CorruptData):
        list(iter_delimited(joined[:-1]))


def test_field_accessors_say_what_is_wrong() -> None:
    with pytest.raises(CorruptData, match="field 2 is not length-delimited"):
        ProtoField(2, VARINT, 5).as_bytes()
    with pytest.raises(CorruptData, match="not UTF-8"):
        ProtoField(2, LENGTH_DELIMITED, b"\xff").as_str()
    with pytest.raises(CorruptData, match="not a number"):
        ProtoField(2, LENGTH_DELIMITED, b"").as_uint()
