"""Store keys: one ordering everywhere (code points = UTF-8 bytes), validation, serialisation."""

from __future__ import annotations

import pytest

from persist_spi.keys import ends_with_element, key, serialize_key, starts_with_elements_or_parts


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [
        (("a",), ("aa",)),
        (("a",), ("a", "a")),
        (("a", "a"), ("a", "aa")),
        (("a",), ("a", "b")),
        (("aa",), ("aπ",)),
        (("a", "b"), ("a!",)),
        (("z",), ("ä",)),
        (("\uffff",), ("\U0001f600",)),  # code point order (Java's UTF-16 order would differ)
        (("a\x01b",), ("a\x02",)),
    ],
)
def test_ordering_is_element_wise_then_by_utf8_bytes(
    smaller: tuple[str, ...], larger: tuple[str, ...]
) -> None:
    a, b = key(*smaller), key(*larger)
    assert a < b
    assert serialize_key(a) < serialize_key(b) or serialize_key(a).rstrip(b"\x00") < serialize_key(b)
    assert a.encode() < b.encode()


def test_empty_elements_are_rejected() -> None:
    for elements in ((), ("",), ("a", ""), ("", "b")):
        with pytest.raises(ValueError):
            key(*elements)


def test_serialised_keys() -> None:
    assert serialize_key(key("A")) == b"A\x00\x00"
    assert len(serialize_key(key("abc", "def", "ghi"))) == 13
    for cp in (0x41, 0xE4, 0x3C0, 0xFFFD, 0x1F600):
        k = key(chr(cp) * 3, "x")
        assert serialize_key(k)[:-2].decode() == k


def test_lone_surrogates_cannot_be_serialised() -> None:
    with pytest.raises(ValueError, match="Unmappable surrogate character"):
        serialize_key(key("a\ud800"))


def test_oversized_keys_are_rejected() -> None:
    with pytest.raises(ValueError, match="Serialized key too big"):
        serialize_key(key("x" * 5000))


def test_prefix_and_suffix_helpers() -> None:
    assert starts_with_elements_or_parts("ab", "ab")
    assert starts_with_elements_or_parts("ab\x00c", "ab")
    assert starts_with_elements_or_parts("ab\x01c", "ab")
    assert not starts_with_elements_or_parts("abc", "ab")
    assert ends_with_element(key("a", "b"), "b")
    assert ends_with_element(key("b"), "b")
    assert not ends_with_element(key("a", "xb"), "b")
