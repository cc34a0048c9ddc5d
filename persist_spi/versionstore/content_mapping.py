"""Stored content values as the version store's content, and the commit logic's conflicts as the
version store's conflicts (which carry the content a key holds now)."""

from __future__ import annotations

from collections.abc import Sequence

from persist_spi.indexes.elements import CommitOp
from persist_spi.logic.conflicts import CommitConflict
from persist_spi.objs import ContentValueObj
from persist_spi.persist import Persist
from persist_spi.versionstore.content import Content, content_from_bytes
from persist_spi.versionstore.errors import Conflict, ConflictType
from persist_spi.versionstore.keymap import from_store_key


def decode_value(obj: ContentValueObj) -> Content:
    return content_from_bytes(obj.payload, obj.content_id, obj.data)


class ContentMapping:
    """Reads the content values commit operations point at, in bulk."""

    def __init__(self, persist: Persist) -> None:
        self.persist = persist

    def contents_for_ops(self, ops: Sequence[CommitOp | None]) -> list[Content | None]:
        """The content each live operation points at, positionally (None for None, a removal, or
        a value that is gone)."""
        ids = [op.value if op is not None and op.exists else None for op in ops]
        objs = self.persist.fetch_all_if_exist_as(ids, ContentValueObj)
        return [decode_value(o) if o is not None else None for o in objs]

    def content_for_op(self, op: CommitOp) -> Content | None:
        return self.contents_for_ops([op])[0]

    def conflicts(self, conflicts: Sequence[CommitConflict]) -> list[Conflict]:
        """The commit logic's key conflicts as the version store's, each with the content its key
        holds now (read in one go)."""
        contents = self.contents_for_ops([c.existing for c in conflicts])
        result = []
        for conflict, current in zip(conflicts, contents, strict=True):
            key = from_store_key(conflict.key)
            conflict_type = ConflictType[conflict.conflict_type.name]
            result.append(Conflict.of(conflict_type, key if key is not None else conflict.key, current))
        return result
