"""Sorted store indexes: the plain serialisable index and the lazy, layered and striped views.

Every index maps store keys (see :mod:`persist_spi.keys`) to :class:`CommitOp` values and iterates
in one order, Nessie's (UTF-16 code units, see :mod:`persist_spi.keys`).
"""

from persist_spi.indexes.action import Action
from persist_spi.indexes.base import StoreIndex
from persist_spi.indexes.elements import CommitOp, IndexElement
from persist_spi.indexes.layered import LayeredIndex
from persist_spi.indexes.lazy import LazyIndex
from persist_spi.indexes.store_index import (
    EMPTY_IMMUTABLE_INDEX,
    StoreIndexImpl,
    deserialize_index,
    new_index,
)
from persist_spi.indexes.striped import StripedIndex

__all__ = [
    "EMPTY_IMMUTABLE_INDEX",
    "Action",
    "CommitOp",
    "IndexElement",
    "LayeredIndex",
    "LazyIndex",
    "StoreIndex",
    "StoreIndexImpl",
    "StripedIndex",
    "deserialize_index",
    "new_index",
]
