"""Parsing a key pattern and generating keys from it."""

from __future__ import annotations

import random
from collections import deque

from loadgen.keygen.functions import Func, resolve
from persist_spi.errors import InputError


class KeyPatternError(InputError):
    """A pattern that does not parse; the message names the pattern and the column."""


def _parse(pattern: str) -> list[Func]:
    parts: list[Func] = []
    literal: list[str] = []
    function: list[str] = []
    state = "literal"

    def flush_literal() -> None:
        if literal:
            text = "".join(literal)
            parts.append(lambda _: text)
            literal.clear()

    def error(column: int, message: str) -> KeyPatternError:
        return KeyPatternError(f"Failure parsing pattern '{pattern}' at col #{column}: {message}")

    for column, c in enumerate(pattern):
        if state == "literal":
            if c == "$":
                flush_literal()
                state = "dollar"
            else:
                literal.append(c)
        elif state == "dollar":
            if c == "{":
                state = "function"
            elif c == "$":
                literal.append("$")
                state = "literal"
            else:
                raise error(column, "illegal function declaration")
        elif c == "}":
            declaration = "".join(function).strip()
            function.clear()
            name, *args = [p.strip() for p in declaration.split(",")]
            try:
                parts.append(resolve(name, deque(args)))
            except InputError as e:
                raise error(column, f"failure parsing function declaration: {e}") from None
            state = "literal"
        else:
            function.append(c)
    if state != "literal":
        raise error(len(pattern), "unclosed function pattern at the end of the pattern")
    flush_literal()
    return parts


class KeyGenerator:
    """Generates strings from a pattern; each call advances every function's state."""

    def __init__(self, pattern: str, rng: random.Random | None = None) -> None:
        self.pattern = pattern
        self._parts = _parse(pattern)
        self._rng = rng if rng is not None else random.Random()

    def generate(self) -> str:
        return "".join(part(self._rng) for part in self._parts)
