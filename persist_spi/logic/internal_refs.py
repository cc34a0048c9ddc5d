"""Names and keys of lochkit's internal references."""

from __future__ import annotations

from typing import Final

from persist_spi.keys import StoreKey, key

#: Commit chain whose index registers every (non-internal) reference by full name.
REF_REFS: Final = "int/refs"
#: Commit chain holding the repository description.
REF_REPO: Final = "int/repo"
INTERNAL_PREFIX: Final = "int/"
REFS_HEADS: Final = "refs/heads/"
REFS_TAGS: Final = "refs/tags/"

KEY_REPO_DESCRIPTION: Final = key("repo", "description")


def ref_key(name: str) -> StoreKey:
    """A reference's key in ``int/refs``: the whole name, slashes included, is one element."""
    return key(name)


def is_internal(name: str) -> bool:
    return name.startswith(INTERNAL_PREFIX)
