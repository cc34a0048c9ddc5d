"""Commit specs: a commit hash followed by relative lookups, as Nessie's clients write them.

``abc123~2`` is the second first-parent predecessor of ``abc123``; ``abc123^2`` its merge parent
(``^1`` is the direct parent); ``abc123*2024-05-01T10:00:00Z`` (or ``*<ms since the epoch>``) the
newest commit in its first-parent log created at or before that instant. Lookups chain from left to
right, and the hash may be left out, in which case they start at a reference's head. A lookup that
walks past the first commit lands on the empty commit (the "no ancestor" hash), as in Nessie.

Parsing is syntax only; :func:`resolve_relative` walks the commit graph.
"""

from __future__ import annotations

import datetime
import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from persist_spi.errors import InputError
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.objs import CommitObj

#: Nessie accepts 4 to 32 bytes of hex for a hash.
HASH_PATTERN: Final = "[0-9a-fA-F]{8,64}"
_TIMESTAMP: Final = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.][0-9]{1,9})?Z"
RELATIVE_PATTERN: Final = rf"[~^*](?:{_TIMESTAMP}|[0-9]+)"
_RELATIVE: Final = re.compile(rf"([~^*])({_TIMESTAMP}|[0-9]+)")
_SPEC: Final = re.compile(rf"^({HASH_PATTERN})?((?:{RELATIVE_PATTERN})*)$")
_MAX_STEPS: Final = 2**31 - 1

SPEC_RULE: Final = (
    "a commit hash (8 to 64 hex digits), followed by any number of relative lookups: '~N' (the N-th "
    "predecessor), '^N' (the N-th parent: 1 direct, 2 merge parent) or '*T' (the newest commit "
    "created at or before T, an ISO-8601 instant ending in Z or milliseconds since the epoch); the "
    "hash may be left out after a reference name"
)


class Lookup(enum.Enum):
    PREDECESSOR = "~"
    PARENT = "^"
    TIMESTAMP = "*"


@dataclass(frozen=True)
class RelativeSpec:
    lookup: Lookup
    #: N for ``~N`` and ``^N``.
    count: int = 0
    #: The instant for ``*T``.
    instant: datetime.datetime | None = None

    def __str__(self) -> str:
        if self.lookup is Lookup.TIMESTAMP:
            assert self.instant is not None
            # Always with a fraction: Nessie 0.99 refuses an instant without one.
            return "*" + self.instant.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return f"{self.lookup.value}{self.count}"


@dataclass(frozen=True)
class CommitSpec:
    """An optional absolute hash and the relative lookups applied to it, in order."""

    hash: ObjId | None
    relative: tuple[RelativeSpec, ...] = ()

    def __str__(self) -> str:
        return (str(self.hash) if self.hash is not None else "") + "".join(str(r) for r in self.relative)


def parse_commit_spec(text: str) -> CommitSpec:
    """``hash``, ``hash~1^2``, ``~1`` ...; ValueError naming the rule for anything else."""
    match = _SPEC.match(text)
    if match is None or not text:
        raise InputError(f"Invalid commit spec '{text}': expected {SPEC_RULE}")
    absolute = ObjId.from_hex(match.group(1)) if match.group(1) else None
    relative = tuple(_relative(mnemonic, value) for mnemonic, value in _RELATIVE.findall(match.group(2)))
    return CommitSpec(absolute, relative)


def _relative(mnemonic: str, value: str) -> RelativeSpec:
    lookup = Lookup(mnemonic)
    if lookup is Lookup.TIMESTAMP:
        try:
            if value.isdigit():
                instant = datetime.datetime.fromtimestamp(int(value) / 1000, datetime.UTC)
            else:
                instant = datetime.datetime.fromisoformat(_to_micros(value).replace("Z", "+00:00"))
        except (ValueError, OverflowError, OSError) as e:  # no such date, or past the calendar's end
            raise InputError(f"Invalid relative lookup '{mnemonic}{value}': not an instant ({e})") from None
        return RelativeSpec(lookup, instant=instant)
    if not value.isdigit():  # the syntax lets an instant follow any mnemonic; only '*' takes one
        raise InputError(
            f"Invalid relative lookup '{mnemonic}{value}': '{mnemonic}' takes a number of steps, "
            "'*' an instant"
        )
    count = int(value)
    if not 0 < count < _MAX_STEPS:
        raise InputError(
            f"Invalid relative lookup '{mnemonic}{value}': N must be between 1 and {_MAX_STEPS - 1}"
        )
    return RelativeSpec(lookup, count)


def _to_micros(value: str) -> str:
    # Python's parser takes at most 6 fractional digits; Nessie allows 9 (nanoseconds).
    head, dot, fraction = value[:-1].partition(".")
    return head + (dot + fraction[:6] if dot else "") + "Z"


def resolve_relative(
    start: ObjId,
    relative: Sequence[RelativeSpec],
    load: Callable[[ObjId], CommitObj],
    commit_time: Callable[[CommitObj], datetime.datetime],
) -> ObjId:
    """Apply ``relative`` lookups from ``start``. ``load`` fetches a commit (raising for a missing
    one); ``commit_time`` says when a commit was created. Walking past the root gives the empty
    commit, and every later lookup stays there."""
    current = start
    for spec in relative:
        if current == EMPTY_OBJ_ID:
            break
        if spec.lookup is Lookup.PREDECESSOR:
            for _ in range(spec.count):
                current = load(current).direct_parent
                if current == EMPTY_OBJ_ID:
                    break
        elif spec.lookup is Lookup.PARENT:
            commit = load(current)
            parents = (commit.direct_parent, *commit.secondary_parents)
            current = parents[spec.count - 1] if spec.count <= len(parents) else EMPTY_OBJ_ID
        else:
            assert spec.instant is not None
            current = _created_at_or_before(current, spec.instant, load, commit_time)
    return current


def _created_at_or_before(
    start: ObjId,
    instant: datetime.datetime,
    load: Callable[[ObjId], CommitObj],
    commit_time: Callable[[CommitObj], datetime.datetime],
) -> ObjId:
    current = start
    while current != EMPTY_OBJ_ID:
        commit = load(current)
        if commit_time(commit) <= instant:
            return current
        current = commit.direct_parent
    return EMPTY_OBJ_ID


__all__ = [
    "HASH_PATTERN",
    "RELATIVE_PATTERN",
    "SPEC_RULE",
    "CommitSpec",
    "Lookup",
    "RelativeSpec",
    "parse_commit_spec",
    "resolve_relative",
]
