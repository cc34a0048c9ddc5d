"""The action an index element records for its key.

An ``Enum`` whose members compute their own attributes in ``__init__``: mypyc cannot compile that,
so it lives apart from the compiled index modules (see :mod:`persist_spi.kernel`).
"""

from __future__ import annotations

import enum


class Action(enum.Enum):
    """What an index element says about its key. ``exists``: the key is live; ``current_commit``: the
    element was written by the commit that holds the index (rather than carried over)."""

    NONE = "N"
    ADD = "A"
    REMOVE = "R"
    INCREMENTAL_ADD = "a"
    INCREMENTAL_REMOVE = "r"

    # Members are singletons and compare by identity, so the identity hash agrees with equality;
    # ``Enum``'s own hashes the member's name in Python, and actions are looked up in dictionaries
    # for every element a commit carries over.
    __hash__ = object.__hash__

    def __init__(self, code: str) -> None:
        self.code_byte = ord(code)
        self.code = code.encode()
        self.exists = code in "NAa"
        self.current_commit = code in "AR"
