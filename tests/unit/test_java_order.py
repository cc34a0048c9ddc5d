"""Java's orders lochkit reproduces: ``String.hashCode`` and a ``HashMap``'s iteration order (which
decides how Nessie hashes commit headers); ``String.compareTo`` is tested with the store keys."""

from __future__ import annotations

import itertools

import pytest

from persist_spi.errors import InputError
from persist_spi.java_order import java_header_order, java_string_hash


@pytest.mark.parametrize(
    ("text", "java_hash"),
    [
        ("", 0),
        ("a", 97),
        ("abc", 96354),
        ("polygenelubricants", -(2**31)),  # the well-known string whose hash is Integer.MIN_VALUE
        ("\U0001f600", 0xD83D * 31 + 0xDE00),  # a surrogate pair: two code units
    ],
)
def test_string_hash_code(text: str, java_hash: int) -> None:
    assert java_string_hash(text) == java_hash & 0xFFFFFFFF


def test_the_version_stores_usual_headers_iterate_in_hash_order_not_sorted() -> None:
    # The order OpenJDK 17 iterates these names in (a new HashMap copied from one filled by
    # computeIfAbsent, as CommitHeaders builds it).
    names = ("date", "author-date", "committer", "author", "signed-off-by")
    assert java_header_order(names) == ("date", "signed-off-by", "author-date", "committer", "author")


def test_repeated_names_keep_one_place() -> None:
    assert java_header_order(("b", "a", "b")) == java_header_order(("b", "a"))


def test_names_colliding_in_a_bucket_keep_the_order_java_gives_them() -> None:
    # "Aa" and "BB" have the same hash code: within one bucket the builder's computeIfAbsent puts a
    # new name first, and the copy keeps that order.
    assert java_header_order(("Aa", "BB")) == ("BB", "Aa")
    assert java_header_order(("BB", "Aa")) == ("Aa", "BB")


def test_a_bucket_java_would_turn_into_a_tree_is_refused() -> None:
    same_hash = ["".join(p) for p in itertools.product(("Aa", "BB"), repeat=4)][:9]
    assert len({java_string_hash(n) for n in same_hash}) == 1
    with pytest.raises(InputError, match="share one bucket of a Java HashMap"):
        java_header_order(same_hash)
