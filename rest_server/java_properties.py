"""Reading a Java ``.properties`` file as Java's ``Properties.load`` does, so a file written for
Nessie's server (its ``application.properties``) reads the same here.

The rules followed: ``#`` or ``!`` first on a line starts a comment; a line ending in an odd
number of backslashes continues on the next one (whose leading blanks are dropped); a key ends at
the first unescaped ``=``, ``:`` or blank; escapes ``\\t \\n \\r \\f \\uXXXX``, and a backslash
before any other character stands for that character. A key given twice keeps its last value.
Files are read as UTF-8, as Quarkus reads ``application.properties``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

_BLANKS: Final = " \t\f"
_ESCAPES: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class PropertiesError(ValueError):
    """A line Java would refuse (a malformed ``\\uXXXX`` escape), with where it is."""


@dataclass(frozen=True)
class Property:
    key: str
    value: str
    #: The line the property starts on (1-based), for error messages.
    line: int


def parse_properties(text: str, source: str = "<properties>") -> list[Property]:
    """The properties of ``text`` in file order (a repeated key appears once, where it was last set)."""
    found: dict[str, Property] = {}
    for start, logical in _logical_lines(text):
        key_raw, value_raw = _split(logical)
        where = f"{source}:{start}"
        prop = Property(_unescape(key_raw, where), _unescape(value_raw, where), start)
        found.pop(prop.key, None)
        found[prop.key] = prop
    return list(found.values())


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Each property's text with continuations joined, and the line it starts on."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    result: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    for number, natural in enumerate(lines, start=1):
        stripped = natural.lstrip(_BLANKS)
        if not current:
            if not stripped or stripped[0] in "#!":
                continue
            start = number
        body, continues = _continuation(stripped)
        current.append(body)
        if not continues:
            result.append((start, "".join(current)))
            current = []
    if current:  # a backslash on the last line continues into nothing
        result.append((start, "".join(current)))
    return result


def _continuation(line: str) -> tuple[str, bool]:
    """The line without a continuation backslash, and whether it had one (an odd count at the end)."""
    trailing = len(line) - len(line.rstrip("\\"))
    if trailing % 2 == 1:
        return line[:-1], True
    return line, False


def _split(logical: str) -> tuple[str, str]:
    """Key and raw value: the key ends at an unescaped separator or blank; then blanks, at most one
    ``=`` or ``:``, and blanks again are skipped."""
    index = 0
    while index < len(logical):
        char = logical[index]
        if char == "\\":
            index += 2
            continue
        if char in "=:" or char in _BLANKS:
            break
        index += 1
    key = logical[:index]
    rest = logical[index:].lstrip(_BLANKS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANKS)
    return key, rest


def _unescape(raw: str, where: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char != "\\" or index + 1 >= len(raw):
            out.append(char)
            index += 1
            continue
        escaped = raw[index + 1]
        if escaped == "u":
            digits = raw[index + 2 : index + 6]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise PropertiesError(
                    f"{where}: malformed \\uXXXX escape '\\u{digits}' (four hexadecimal digits expected)"
                )
            out.append(chr(int(digits, 16)))
            index += 6
            continue
        out.append(_ESCAPES.get(escaped, escaped))
        index += 2
    return "".join(out)


__all__ = ["PropertiesError", "Property", "parse_properties"]
