"""Objects an in-process store keeps as themselves: written without being serialised.

Every adapter stores an object as bytes (:class:`~persist_spi.adapter.ObjRow`), and the core
serialises each object before the write. A store that lives in lochkit's own process (the in-memory
backend) has no use for the bytes on the write path: it can keep the object itself, because stored
objects are immutable, and serialise it only when someone asks for its row. This is what Nessie's
own in-memory backend does (it keeps live Java objects), and it takes the serialisation off every
commit.

An adapter opts in by deriving from :class:`LiveObjectStore` and answering
:attr:`LiveObjectStore.takes_live_objects`. :class:`~persist_spi.adapter_persist.AdapterPersist`
then hands it a :class:`LiveObjRow` for every object of :data:`LIVE_OBJ_TYPES` and an ``ObjRow``
for the rest, and reads back whichever it kept. The row methods of the contract
(``fetch_objs``, ``scan_objs``) still answer rows, serialised when asked, so the store's bytes are
the bytes any other backend would hold.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Final, NamedTuple

from persist_spi.adapter import InsertAndSwap, ObjRow, RefRow
from persist_spi.codec import ObjCodec
from persist_spi.objs import STANDARD_OBJ_TYPES
from persist_spi.objtypes import Obj

#: The object classes kept live, with their type's short name: the standard ones. Each is a frozen
#: dataclass whose fields are immutable all the way down (bytes, strings, tuples,
#: ``CommitHeaders``), so a kept object cannot change under the store. Updateable and custom
#: objects (version tokens, mutable attributes) always travel as rows. Subclasses are not in the
#: map: only these exact classes.
LIVE_OBJ_TYPES: Final[dict[type[Obj], str]] = {t.cls: t.short_name for t in STANDARD_OBJ_TYPES}


class LiveObjRow(NamedTuple):
    """An object kept as itself. The fields a row's conditions read (id, type, version token,
    ``referenced``) are those of its :class:`~persist_spi.adapter.ObjRow`; ``obj`` stands where the
    row has its bytes."""

    obj_id: bytes
    obj_type: str
    #: Always None: objects with version tokens are not kept live.
    version_token: str | None
    obj: Obj
    #: µs timestamp of the last write, as in a row.
    referenced: int


def as_row(stored: ObjRow | LiveObjRow, codec: ObjCodec) -> ObjRow:
    """The row of a kept object: its bytes as ``codec`` writes them."""
    if isinstance(stored, ObjRow):
        return stored
    encoded = codec.encode(stored.obj)
    return ObjRow(
        stored.obj_id, encoded.type_short_name, encoded.version_token, encoded.data, stored.referenced
    )


class LiveObjectStore(ABC):
    """What an adapter adds to take :class:`LiveObjRow` entries beside rows (a mix-in beside
    :class:`~persist_spi.adapter.BackendAdapter`)."""

    @property
    @abstractmethod
    def takes_live_objects(self) -> bool:
        """Whether the core may hand this adapter live objects. An adapter answers False where a
        subclass changed how rows are stored or read (a test recording or breaking rows), so that
        such a subclass sees rows only."""

    @abstractmethod
    def insert_live_objs(self, repo: str, rows: Sequence[ObjRow | LiveObjRow]) -> list[bool]:
        """``insert_objs`` for a mix of rows and live objects."""

    @abstractmethod
    def insert_live_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow | LiveObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        """``insert_objs_and_update_ref`` for a mix of rows and live objects."""

    @abstractmethod
    def fetch_live_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | LiveObjRow | None]:
        """``fetch_objs``, answering each object as it is kept: a row, or the object itself."""
