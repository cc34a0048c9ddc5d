"""The six key-pattern functions, each a small stateful generator."""

from __future__ import annotations

import hashlib
import random
import uuid
from collections import deque
from collections.abc import Callable
from typing import Final

from persist_spi.errors import InputError
from persist_spi.versionstore.content import MAX_KEY_LENGTH

#: A function instance: draws from the shared random generator and returns its text.
Func = Callable[[random.Random], str]

_STRING_CHARS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ._-"
_LONG_MAX: Final = (1 << 63) - 1


def _uuid() -> Func:
    def apply(rng: random.Random) -> str:
        # Like Java's UUID.nameUUIDFromBytes over 16 random bytes: an MD5 (version 3) UUID, so it
        # is reproducible from the seed.
        digest = hashlib.md5(rng.randbytes(16), usedforsecurity=False).digest()
        return str(uuid.UUID(bytes=digest, version=3))

    return apply


def _int(bound: int) -> Func:
    if bound <= 0:
        raise InputError("Bound for random must be positive")

    def apply(rng: random.Random) -> str:
        return str((rng.getrandbits(64) & _LONG_MAX) % bound)

    return apply


def _string(length: int) -> Func:
    # No content key holds more (Nessie's generator has no bound; a huge length only exhausts memory).
    if not 0 <= length <= MAX_KEY_LENGTH:
        raise InputError(f"string's length must be between 0 and {MAX_KEY_LENGTH} (a content key's most)")

    def apply(rng: random.Random) -> str:
        return "".join(rng.choice(_STRING_CHARS) for _ in range(length))

    return apply


def _seq(offset: int) -> Func:
    state = {"next": offset}

    def apply(_: random.Random) -> str:
        value = state["next"]
        state["next"] = value + 1
        return str(value)

    return apply


def _every(count: int, inner: Func) -> Func:
    """The inner value, repeated for ``count`` consecutive calls, then a new one."""
    used = [count]
    current = [""]

    def apply(rng: random.Random) -> str:
        if used[0] >= count:
            current[0] = inner(rng)
            used[0] = 1
        else:
            used[0] += 1
        return current[0]

    return apply


def _prob(probability: float, inner: Func) -> Func:
    """A new inner value with ``probability`` per call (always on the first call)."""
    state: dict[str, str | None] = {"current": None}

    def apply(rng: random.Random) -> str:
        if rng.random() < probability:
            state["current"] = None
        current = state["current"]
        if current is None:
            current = state["current"] = inner(rng)
        return current

    return apply


def _int_param(params: deque[str], what: str) -> int:
    raw = _take(params, what)
    try:
        return int(raw)
    except ValueError:
        raise InputError(f"{what} must be an integer, got '{raw}'") from None


def _float_param(params: deque[str], what: str) -> float:
    raw = _take(params, what)
    try:
        return float(raw)
    except ValueError:
        raise InputError(f"{what} must be a number, got '{raw}'") from None


def _take(params: deque[str], what: str) -> str:
    if not params:
        raise InputError(f"missing argument: {what}")
    return params.popleft()


def _func_param(params: deque[str]) -> Func:
    return resolve(_take(params, "inner function name"), params)


def resolve(name: str, params: deque[str]) -> Func:
    """Build function ``name``, consuming its arguments (and inner functions) from ``params``."""
    key = name.strip().lower()
    if key == "uuid":
        return _uuid()
    if key == "int":
        return _int(_int_param(params, "int's bound"))
    if key == "string":
        return _string(_int_param(params, "string's length"))
    if key == "seq":
        return _seq(_int_param(params, "seq's offset"))
    if key == "every":
        count = _int_param(params, "every's count")
        return _every(count, _func_param(params))
    if key == "prob":
        probability = _float_param(params, "prob's probability")
        return _prob(probability, _func_param(params))
    raise InputError(f"Unknown function '{name}' (known: uuid, int, string, seq, every, prob)")
