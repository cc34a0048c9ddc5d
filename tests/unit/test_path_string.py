"""Nessie's path-string key form and its escapes."""

from __future__ import annotations

import pytest

from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.path_string import to_path_string_escaped


@pytest.mark.parametrize(
    ("encoded", "elements"),
    [
        ("a.b.c", ("a", "b", "c")),
        ("a/b.c", ("a/b", "c")),
        ("a\x1db.c", ("a.b", "c")),
        ("a\x00b", ("a.b",)),
        (".a*.b.c", ("a.b", "c")),
        (".a**b*{c*}d*[e", ("a*b/c\\d%e",)),
    ],
)
def test_path_strings_parse_with_their_escapes(encoded: str, elements: tuple[str, ...]) -> None:
    assert ContentKey.from_path_string(encoded).elements == elements


def test_a_bad_escape_is_an_error() -> None:
    with pytest.raises(ValueError, match="Illegal escaping sequence"):
        ContentKey.from_path_string(".a*x")
    with pytest.raises(ValueError, match="at the end"):
        ContentKey.from_path_string(".a*")


@pytest.mark.parametrize("elements", [("a", "b"), ("a.b", "c/d"), ("x%y", "z\\w", "s*t")])
def test_escaped_form_round_trips(elements: tuple[str, ...]) -> None:
    assert ContentKey.from_path_string(to_path_string_escaped(elements)).elements == elements
    assert ContentKey.from_path_string(ContentKey(elements).to_path_string()).elements == elements
