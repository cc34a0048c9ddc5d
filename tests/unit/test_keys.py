"""Store keys: one ordering everywhere (Nessie's: UTF-16 code units), validation, serialisation."""

from __future__ import annotations

import bisect
import itertools
import random

import pytest

from persist_spi.keys import (
    bisect_keys,
    ends_with_element,
    key,
    key_less,
    key_order,
    orders_by_code_point,
    serialize_key,
    sort_keys,
    starts_with_elements_or_parts,
)


def _utf16(text: str) -> bytes:
    """Java's ``String.compareTo`` order, the slow obvious way (lone surrogates included)."""
    return text.encode("utf-16-be", "surrogatepass")


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
        (("\U0001f600",), ("\uffff",)),  # UTF-16: a surrogate pair (D83D DE00) sorts before FFFF
        (("\U0010ffff",), ("\ue000",)),
        (("\ud7ff",), ("\U00010000",)),
        (("a\x01b",), ("a\x02",)),
    ],
)
def test_ordering_is_element_wise_then_by_utf16_code_unit(
    smaller: tuple[str, ...], larger: tuple[str, ...]
) -> None:
    a, b = key(*smaller), key(*larger)
    assert key_less(a, b)
    assert not key_less(b, a)
    assert key_order(a) < key_order(b)
    assert sort_keys([b, a]) == [a, b]
    assert _utf16(a) < _utf16(b)


#: Characters around every boundary where code-point and UTF-16 order can disagree.
_ALPHABET = (
    "a\x00\x01z\xe9\u4e2d\ud7ff\ud800\udbff\udc00\udfff\ue000\uff5e\ufffd\uffff\U00010000\U0001f600\U0010ffff"
)


def _random_keys(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choices(_ALPHABET, k=rnd.randint(0, 4))) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_every_helper_agrees_with_utf16_order(seed: int) -> None:
    keys = _random_keys(seed, 300)
    assert sort_keys(keys) == sorted(keys, key=_utf16)
    for a, b in itertools.product(keys[:60], repeat=2):
        assert key_less(a, b) == (_utf16(a) < _utf16(b)), (a, b)
        assert (key_order(a) < key_order(b)) == (_utf16(a) < _utf16(b)), (a, b)
        if orders_by_code_point(a):
            assert (a < b) == (_utf16(a) < _utf16(b)), (a, b)
    ordered = sorted(set(keys), key=_utf16)
    units = [_utf16(k) for k in ordered]
    for probe in _random_keys(seed + 100, 200):
        assert bisect_keys(ordered, probe) == bisect.bisect_left(units, _utf16(probe)), probe
        assert bisect_keys(ordered, probe, right=True) == bisect.bisect_right(units, _utf16(probe)), probe


def test_keys_without_supplementary_characters_are_their_own_sort_key() -> None:
    for text in ("abc", "M\x00ns\x01t\x00C", "\xe9\u4e2d\uff5e\uffff"):
        assert key_order(text) is text
    assert key_order("a\U0001f600") == "a\ud83d\ude00"
    assert orders_by_code_point("\xe9\u4e2d\ud7ff")
    assert not orders_by_code_point("\ue000")
    assert not orders_by_code_point("\U0001f600")


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
