"""Reading objects for a checker: tells present, missing and undecodable objects apart.

A bulk read through the Persist contract fails as a whole when one object in it cannot be decoded,
so a failed batch is read again one id at a time to name the culprit.
"""

from __future__ import annotations

from collections.abc import Sequence

from persist_spi.codec import CorruptObject
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.persist import Persist

#: Ids per bulk read.
BATCH = 200


class Undecodable:
    """An object whose stored bytes could not be decoded; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


Probed = Obj | Undecodable | None


def probe_objects(persist: Persist, ids: Sequence[ObjId]) -> dict[ObjId, Probed]:
    """Every id mapped to its object, ``Undecodable``, or None when missing."""
    found: dict[ObjId, Probed] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), BATCH):
        batch = unique[start : start + BATCH]
        try:
            found.update(zip(batch, persist.fetch_objs_if_exist(batch), strict=True))
        except CorruptObject:
            for obj_id in batch:
                found[obj_id] = _probe_one(persist, obj_id)
    return found


def _probe_one(persist: Persist, obj_id: ObjId) -> Probed:
    try:
        return persist.fetch_objs_if_exist([obj_id])[0]
    except CorruptObject as e:
        return Undecodable(str(e))
