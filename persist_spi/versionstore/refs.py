"""Named references of the version store (branches and tags) and results of reference operations."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from persist_spi.ids import ObjId
from persist_spi.logic.internal_refs import REFS_HEADS, REFS_TAGS

#: Nessie's name for a commit addressed without a reference ("detached").
DETACHED = "DETACHED"


class RefKind(enum.Enum):
    BRANCH = REFS_HEADS
    TAG = REFS_TAGS


@dataclass(frozen=True)
class NamedRef:
    name: str
    kind: RefKind

    @property
    def full_name(self) -> str:
        return self.kind.value + self.name

    def __str__(self) -> str:
        return self.name


def branch(name: str) -> NamedRef:
    return NamedRef(name, RefKind.BRANCH)


def tag(name: str) -> NamedRef:
    return NamedRef(name, RefKind.TAG)


def from_full_name(full: str) -> NamedRef | None:
    for kind in RefKind:
        if full.startswith(kind.value):
            return NamedRef(full[len(kind.value) :], kind)
    return None


@dataclass(frozen=True)
class ReferenceInfo:
    named_ref: NamedRef
    hash: ObjId
    created_at_micros: int = 0
    #: For tags created with a message/headers/signature: the TagObj holding them.
    tag_info: ObjId | None = None


@dataclass(frozen=True)
class ReferenceAssigned:
    named_ref: NamedRef
    previous_hash: ObjId
    current_hash: ObjId
