"""Nessie's path-string form of a content key (``ContentKey.fromPathString``/``toPathString``).

``.`` separates elements and ``/`` is an ordinary character. A dot inside an element is written as
U+001D (group separator) or U+0000. A string that starts with ``.`` (or reaches an empty element)
switches to the escaped form, where ``*`` escapes: ``*.`` is ``.``, ``**`` is ``*``, ``*{`` is
``/``, ``*}`` is ``\\`` and ``*[`` is ``%``.
"""

from __future__ import annotations

from typing import Final

from persist_spi.errors import InputError

_GROUP_SEPARATOR: Final = "\x1d"
_ZERO: Final = "\x00"
_ESCAPES: Final = {".": ".", "*": "*", "{": "/", "}": "\\", "[": "%"}


def elements_from_path_string(encoded: str) -> list[str]:
    """The key elements a path string stands for; ValueError for a bad escape sequence."""
    elements: list[str] = []
    current: list[str] = []
    for c in encoded:
        if c == ".":
            if not current:
                # Nessie restarts in escaped mode at the string's second character, keeping the
                # elements already parsed: that is what it does for both a leading dot and an
                # empty element in the middle.
                return _escaped(elements, encoded)
            elements.append("".join(current))
            current = []
        elif c in (_GROUP_SEPARATOR, _ZERO):
            current.append(".")
        else:
            current.append(c)
    if current:
        elements.append("".join(current))
    return elements


def _escaped(elements: list[str], encoded: str) -> list[str]:
    current: list[str] = []
    i = 1
    while i < len(encoded):
        c = encoded[i]
        if c == ".":
            elements.append("".join(current))
            current = []
        elif c == "*":
            i += 1
            if i == len(encoded):
                raise InputError(f"Illegal escaping sequence at the end of encoded path: {encoded}")
            escaped = _ESCAPES.get(encoded[i])
            if escaped is None:
                raise InputError(f"Illegal escaping sequence *{encoded[i]} in encoded path: {encoded}")
            current.append(escaped)
        else:
            current.append(c)
        i += 1
    if current:
        elements.append("".join(current))
    return elements


def to_path_string(elements: tuple[str, ...] | list[str]) -> str:
    """The unescaped path string: dots inside elements become U+001D."""
    return ".".join(e.replace(".", _GROUP_SEPARATOR).replace(_ZERO, _GROUP_SEPARATOR) for e in elements)


def to_path_string_escaped(elements: tuple[str, ...] | list[str]) -> str:
    """The form a key takes in a URL path: plain when no element holds ``. / \\ %``, else escaped."""
    if not any(c in e for e in elements for c in "./\\%"):
        return ".".join(elements)
    table = {".": "*.", "*": "**", "/": "*{", "\\": "*}", "%": "*["}
    return "".join("." + "".join(table.get(c, c) for c in e) for e in elements)
