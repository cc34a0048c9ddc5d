"""Nessie's MongoDB documents (its ``MONGODB2`` store), for ``layout=nessie``.

Collections ``refs2`` and ``objs2``; ``_id`` is a sub-document ``{r: repo, n: name}`` or
``{r: repo, i: Binary(object id)}``, in that field order: MongoDB compares sub-documents field by
field, so ``{n, r}`` would be another id, and every ``_id`` built here is an insertion-ordered dict.
Fields Nessie leaves out when empty are left out here too (``c`` when 0, ``e`` without extended
info, ``h`` without history, ``V`` without version token): Nessie's reference filter asks
``$exists: false``, which a stored ``null`` would not satisfy. Numbers are BSON Int64 because Nessie
reads them with ``getLong``; ``bytes`` become Binary subtype 0 as Nessie writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from persist_spi.adapter import ObjRow, RefRow

REFS_COLLECTION: Final = "refs2"
OBJS_COLLECTION: Final = "objs2"
#: What a field filter says for a field Nessie leaves out.
_ABSENT: Final = {"$exists": False}


class NessieDocuments:
    repo_field = "_id.r"

    def ref_id(self, repo: str, name: str) -> dict[str, Any]:
        return {"r": repo, "n": name}

    def obj_id(self, repo: str, obj_id: bytes) -> dict[str, Any]:
        return {"r": repo, "i": obj_id}

    def ref_doc(self, repo: str, row: RefRow) -> dict[str, Any]:
        from bson import Int64

        doc: dict[str, Any] = {"_id": self.ref_id(repo, row.name), "p": row.pointer, "d": row.deleted}
        if row.created_at_micros != 0:
            doc["c"] = Int64(row.created_at_micros)
        if row.extended_info is not None:
            doc["e"] = row.extended_info
        if row.previous_pointers:
            doc["h"] = row.previous_pointers
        return doc

    def ref_condition(self, repo: str, row: RefRow) -> dict[str, Any]:
        """Nessie's own compare-and-swap filter: ``c`` and ``e`` are a value or absent."""
        doc = self.ref_doc(repo, row)
        return {
            "_id": doc["_id"],
            "p": doc["p"],
            "d": doc["d"],
            "c": doc.get("c", _ABSENT),
            "e": doc.get("e", _ABSENT),
        }

    def ref_row(self, repo: str, doc: Mapping[str, Any]) -> RefRow:
        ext = doc.get("e")
        return RefRow(
            str(doc["_id"]["n"]),
            bytes(doc["p"]),
            bool(doc["d"]),
            int(doc.get("c", 0)),
            None if ext is None else bytes(ext),
            bytes(doc.get("h") or b""),
        )

    def obj_doc(self, repo: str, row: ObjRow) -> dict[str, Any]:
        from bson import Int64

        doc: dict[str, Any] = {
            "_id": self.obj_id(repo, row.obj_id),
            "y": row.obj_type,
            "z": Int64(row.referenced),
        }
        if row.version_token is not None:
            doc["V"] = row.version_token
        doc["v"] = row.data
        return doc

    def obj_row(self, repo: str, doc: Mapping[str, Any]) -> ObjRow:
        # Nessie leaves ``z`` out only for objects its own tests mark as never referenced.
        return ObjRow(bytes(doc["_id"]["i"]), doc["y"], doc.get("V"), bytes(doc["v"]), int(doc.get("z", 0)))


NESSIE_DOCUMENTS: Final = NessieDocuments()
