"""The reference element of a v2 path: ``name``, ``name@hash``, ``@hash``, ``-`` (the default
branch), each optionally followed by relative lookups (``main~2``, ``main@abc123^2``,
``-*2024-05-01T10:00:00Z``). A name holding ``/`` must be closed with ``@`` (``feature/x@``).

The text after the name is a commit spec (:mod:`persist_spi.versionstore.commit_specs`): the version
store resolves it, so reads, the log, entries and diffs all accept the same specs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.versionstore.commit_specs import (
    HASH_PATTERN,
    RELATIVE_PATTERN,
    CommitSpec,
    parse_commit_spec,
)

#: A name is anything but the characters that separate it from a commit spec. Nessie allows only
#: ``[A-Za-z][A-Za-z0-9./_-]*`` (no ``..``); lochkit's store takes any Unicode name, and so does
#: ``lochkit serve``, so every reference the store holds can be addressed.
_NAME: Final = r"[^@~^*]+"
_ELEMENT: Final = re.compile(rf"^({_NAME})?(?:@({HASH_PATTERN})?)?((?:{RELATIVE_PATTERN})*)$")
#: The default branch in a path.
DEFAULT_REF: Final = "-"
FORBIDDEN_NAMES: Final = frozenset({"HEAD", "DETACHED", DEFAULT_REF})
_HASH_ONLY: Final = re.compile(rf"^{HASH_PATTERN}$")

RULE: Final = (
    "a reference name (any text without '@', '~', '^' or '*'), or '-' for the default branch, "
    "optionally followed by '@' and a commit hash, and by relative lookups '~N', '^N' or "
    "'*TIMESTAMP'; or '@' and a hash alone for a detached commit"
)


@dataclass(frozen=True)
class RefAddress:
    """What a path's reference element addresses: a named reference (or none: detached) and an
    optional commit spec."""

    name: str | None
    spec: CommitSpec | None

    @property
    def hash(self) -> ObjId | None:
        return self.spec.hash if self.spec is not None else None

    @property
    def has_commit_spec(self) -> bool:
        return self.spec is not None and (self.spec.hash is not None or bool(self.spec.relative))


def parse_ref_element(element: str, default_branch: str) -> RefAddress:
    """Parse one path element; ValueError (a 400) naming the rule when it does not match."""
    match = _ELEMENT.match(element)
    if match is None or not element or element == "@":
        raise InputError(f"Invalid reference '{element}' in the path: expected {RULE}")
    name, absolute, relative = match.group(1), match.group(2), match.group(3)
    if name == DEFAULT_REF:
        name = default_branch
    spec_text = (absolute or "") + (relative or "")
    spec = parse_commit_spec(spec_text) if spec_text else None
    if name is None and (spec is None or spec.hash is None):
        raise InputError(f"Invalid reference '{element}': a detached commit needs a hash after '@'")
    return RefAddress(name, spec)


def check_new_ref_name(name: str | None) -> str:
    """A name a new branch or tag may take: addressable in a path, and not HEAD, DETACHED, '-'
    or something that reads as a commit id (as in Nessie)."""
    if not name:
        raise InputError("Give the new reference's name (query parameter 'name')")
    if not re.fullmatch(_NAME, name) or name.endswith("/"):
        raise InputError(
            f"Invalid reference name '{name}': it may not contain '@', '~', '^' or '*', nor end in '/'"
        )
    if name in FORBIDDEN_NAMES or _HASH_ONLY.match(name):
        raise InputError(
            f"Invalid reference name '{name}': HEAD, DETACHED, '-' and commit ids are not allowed"
        )
    return name


__all__ = ["DEFAULT_REF", "RULE", "RefAddress", "check_new_ref_name", "parse_ref_element"]
