"""The order of content keys in a Java ``HashMap``, as Nessie's server lists them. The expected
orders were printed by Java 25 putting the same keys, in the same order, into ``new HashMap<>()``
and into Guava's ``Maps.newHashMapWithExpectedSize(n)``, with Nessie 0.99's ``ContentKey``."""

from __future__ import annotations

import pytest

from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.key_hash_order import content_key_hash, hash_map_order

TWO = "z,a"
MANY = "t19,t18,t17,t16,t15,t14,t13,t12,t11,t10,t9,t8,t7,t6,t5,t4,t3,t2,t1,t0,ns.ü,ns.日本,ns.😀"
SEVEN = "b,c,d,e,f,g,h"
NESTED = "x1,y2,zz,aa,a.b.c,q"
MANY_IN_JAVA = "t5,t6,t7,t8,ns.😀,t9,ns.日本,t11,t10,t13,t12,t15,t14,t17,t16,ns.ü,t19,t18,t0,t1,t2,t3,t4"


def _keys(listed: str) -> list[ContentKey]:
    return [ContentKey(tuple(k.split("."))) for k in listed.split(",")]


def _names(keys: list[ContentKey]) -> str:
    return ",".join(".".join(k.elements) for k in keys)


@pytest.mark.parametrize(
    ("expected_size", "nested_in_java"),
    [
        (None, "a.b.c,q,x1,y2,zz,aa"),
        (2, "x1,y2,a.b.c,q,zz,aa"),
        (5, "x1,y2,a.b.c,q,zz,aa"),
        (7, "a.b.c,q,x1,y2,zz,aa"),
        (20, "a.b.c,q,x1,y2,zz,aa"),
    ],
)
def test_keys_come_out_in_the_order_of_a_java_hash_map(
    expected_size: int | None, nested_in_java: str
) -> None:
    assert _names(hash_map_order(_keys(TWO), expected_size)) == "a,z"
    assert _names(hash_map_order(_keys(MANY), expected_size)) == MANY_IN_JAVA
    assert _names(hash_map_order(_keys(SEVEN), expected_size)) == SEVEN
    assert _names(hash_map_order(_keys(NESTED), expected_size)) == nested_in_java


def test_a_content_key_hashes_as_its_list_of_elements() -> None:
    """``List.of("a").hashCode()`` is 31 + 'a'; characters outside the BMP count as two UTF-16 units."""
    assert content_key_hash(ContentKey(("a",))) == 31 + ord("a")
    assert content_key_hash(ContentKey(("😀",))) == (31 + 0xD83D * 31 + 0xDE00) & 0xFFFFFFFF


def test_repeated_keys_count_once() -> None:
    assert _names(hash_map_order(_keys("z,a,z"))) == "a,z"
