"""The key-pattern grammar, function by function, against the reference notes' examples."""

from __future__ import annotations

import random
import uuid

import pytest

from loadgen.keygen import KeyGenerator, KeyPatternError
from persist_spi.versionstore.content import ContentKey


def _keys(pattern: str, n: int, seed: int = 7) -> list[str]:
    generator = KeyGenerator(pattern, random.Random(seed))
    return [generator.generate() for _ in range(n)]


def test_literal_and_double_dollar() -> None:
    assert _keys("a$$b", 2) == ["a$b", "a$b"]


def test_uuid_is_a_name_based_uuid_reproducible_from_the_seed() -> None:
    first, second = _keys("${uuid}", 2)
    assert uuid.UUID(first).version == 3
    assert first != second
    assert _keys("${uuid}", 2) == [first, second]


def test_int_is_below_its_bound() -> None:
    values = [int(v) for v in _keys("${int,5}", 200)]
    assert set(values) == {0, 1, 2, 3, 4}


def test_string_has_its_length_from_the_alphabet() -> None:
    for value in _keys("${string,12}", 50):
        assert len(value) == 12
        assert set(value) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ._-")


def test_seq_counts_from_its_offset() -> None:
    assert _keys("t${seq,20}", 3) == ["t20", "t21", "t22"]


def test_every_repeats_the_inner_value_exactly_n_times() -> None:
    values = _keys("${every,3,seq,0}", 7)
    assert values == ["0", "0", "0", "1", "1", "1", "2"]


def test_every_higher_order_example_from_the_notes() -> None:
    assert _keys("${every,5,seq,20}", 6) == ["20"] * 5 + ["21"]


def test_prob_zero_is_constant_and_one_is_always_new() -> None:
    assert len(set(_keys("${prob,0,seq,0}", 5))) == 1
    assert _keys("${prob,1,seq,0}", 3) == ["0", "1", "2"]


def test_names_are_case_insensitive_and_arguments_trimmed() -> None:
    assert _keys("${ SEQ , 4 }", 2) == ["4", "5"]


def test_every_groups_consecutive_pool_entries_into_namespaces() -> None:
    keys = [ContentKey.from_path_string(k) for k in _keys("db_${every,10,uuid}.tbl_${seq,0}", 100)]
    namespaces = [k.elements[0] for k in keys]
    assert len(set(namespaces)) == 10
    assert all(len(set(namespaces[i : i + 10])) == 1 for i in range(0, 100, 10))
    assert [k.elements[1] for k in keys] == [f"tbl_{i}" for i in range(100)]


def test_two_element_key_example_gives_distinct_keys() -> None:
    pattern = "stuff-folders./stuff-${every,10,uuid}/foolish-key/${every,5,uuid}/${uuid}_0"
    keys = [ContentKey.from_path_string(k) for k in _keys(pattern, 100)]
    assert all(len(k.elements) == 2 for k in keys)
    assert len(set(keys)) == 100
    assert all(k.elements[0] == "stuff-folders" for k in keys)


@pytest.mark.parametrize(
    ("pattern", "column", "text"),
    [
        ("$x", 1, "illegal function declaration"),
        ("abc${uuid", 9, "unclosed function pattern"),
        ("abc$", 4, "unclosed function pattern"),
        ("x${nope}", 7, "Unknown function 'nope'"),
        ("x${int,abc}", 10, "must be an integer"),
        ("x${int,0}", 8, "Bound for random must be positive"),
        ("${every,3}", 9, "missing argument"),
    ],
)
def test_parse_errors_name_the_column(pattern: str, column: int, text: str) -> None:
    with pytest.raises(KeyPatternError) as caught:
        KeyGenerator(pattern)
    assert f"at col #{column}:" in str(caught.value)
    assert text in str(caught.value)
