"""Reference rows: a name pointing at a commit (or tag object), changed only by compare-and-swap."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from persist_spi.errors import InputError
from persist_spi.ids import ObjId

if TYPE_CHECKING:
    from persist_spi.config import StoreConfig

INTERNAL_REF_PREFIX: Final = "int/"
#: Longest reference name, in UTF-8 bytes. Names are keys in every database: DynamoDB's keys hold
#: at most 2048 bytes (with the repository id), PostgreSQL's index entries about 2700, and
#: int/refs' index keys 4096; this leaves room for all of them.
MAX_REFERENCE_NAME_BYTES: Final = 1024


def check_reference_name(name: str) -> None:
    """``ValueError`` for a name no database can hold; called before anything is written."""
    if not name:
        raise InputError("A reference name must not be empty")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        raise InputError(f"Reference name {name[:40]!r}... contains an unpaired surrogate") from None
    if size > MAX_REFERENCE_NAME_BYTES:
        raise InputError(
            f"Reference name {name[:40]!r}... is {size} bytes long in UTF-8; the longest allowed is "
            f"{MAX_REFERENCE_NAME_BYTES} bytes"
        )


@dataclass(frozen=True, slots=True)
class PreviousPointer:
    """A former head of a reference and when it was replaced (µs)."""

    pointer: ObjId
    timestamp_micros: int

    def __init__(self, pointer: ObjId, timestamp_micros: int) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        object.__setattr__(self, "pointer", pointer)
        object.__setattr__(self, "timestamp_micros", timestamp_micros)


@dataclass(frozen=True, slots=True)
class Reference:
    """One row of the references table.

    Equality, and so the compare-and-swap condition of every conditional change, covers name,
    pointer, deleted, created-at and extended-info. ``previous_pointers`` is history only: it is
    left out of equality and of every condition.
    """

    name: str
    pointer: ObjId
    deleted: bool = False
    #: µs since the epoch; 0 means unknown.
    created_at_micros: int = 0
    extended_info_obj: ObjId | None = None
    #: Recent former heads, newest first.
    previous_pointers: tuple[PreviousPointer, ...] = field(default=(), compare=False)

    def __init__(
        self,
        name: str,
        pointer: ObjId,
        deleted: bool = False,
        created_at_micros: int = 0,
        extended_info_obj: ObjId | None = None,
        previous_pointers: tuple[PreviousPointer, ...] = (),
    ) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "pointer", pointer)
        object.__setattr__(self, "deleted", deleted)
        object.__setattr__(self, "created_at_micros", created_at_micros)
        object.__setattr__(self, "extended_info_obj", extended_info_obj)
        object.__setattr__(self, "previous_pointers", previous_pointers)

    @property
    def is_internal(self) -> bool:
        return self.name.startswith(INTERNAL_REF_PREFIX)

    def with_deleted(self, deleted: bool) -> Reference:
        return self if deleted == self.deleted else replace(self, deleted=deleted)

    def for_new_pointer(self, new_pointer: ObjId, config: StoreConfig, now_micros: int) -> Reference:
        """The row after moving to ``new_pointer``, with the history derived from *this* copy.

        The old pointer is recorded only when it changes; older entries are kept until the list
        holds ``ref_previous_head_count`` entries or an entry is older than
        ``ref_previous_head_time_span_seconds``.
        """
        history: list[PreviousPointer] = []
        limit = config.ref_previous_head_count
        if new_pointer != self.pointer and limit > 0:
            history.append(PreviousPointer(self.pointer, now_micros))
        oldest_kept = now_micros - config.ref_previous_head_time_span_seconds * 1_000_000
        for entry in self.previous_pointers:
            if len(history) >= limit or entry.timestamp_micros < oldest_kept:
                break
            history.append(entry)
        return Reference(
            self.name, new_pointer, False, self.created_at_micros, self.extended_info_obj, tuple(history)
        )
