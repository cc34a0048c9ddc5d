"""Errors of the reference commit logic.

Each derives from a built-in exception as well as from :class:`~persist_spi.errors.LochkitError`;
mypyc compiles no such class, so they live apart from the compiled logic modules (see
:mod:`persist_spi.kernel`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from persist_spi.errors import LochkitError

if TYPE_CHECKING:
    from persist_spi.ids import ObjId


class IncompleteIndex(LochkitError, ValueError):
    pass


class MissingReferenceIndex(LochkitError, RuntimeError):
    """A commit points to a reference index object that does not exist (a corrupt repository)."""


class CommitNotFound(LochkitError, LookupError):
    def __init__(self, commit_id: ObjId) -> None:
        self.commit_id = commit_id
        super().__init__(f"Commit '{commit_id}' not found")
