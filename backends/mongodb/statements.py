"""How rows become MongoDB documents, filters and ids (see the layout in :mod:`backends.mongodb`).

Two layouts, each a :class:`Documents`, which is all the adapter knows of either:

* lochkit's own (:data:`LOCHKIT_DOCUMENTS`): ``_id`` is a string,
  ``<len(repo)>:<repo>:<name or hex id>``: the length prefix keeps repository ids that prefix each
  other apart, and a plain string (unlike a ``{r, n}`` sub-document) cannot mismatch on field order.
* Nessie's ``MONGODB2`` store (:data:`NESSIE_DOCUMENTS`, ``layout=nessie``), described at
  :class:`NessieDocuments`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from persist_spi.adapter import ObjRow, RefRow


class Documents(Protocol):
    """One layout's mapping between rows and documents, and the ids and filters that go with it."""

    @property
    def repo_field(self) -> str:
        """The field that holds the repository id (indexed, for scans and erasure)."""
        ...

    def ref_id(self, repo: str, name: str) -> Any: ...
    def obj_id(self, repo: str, obj_id: bytes) -> Any: ...
    def ref_doc(self, repo: str, row: RefRow) -> dict[str, Any]: ...
    def ref_condition(self, repo: str, row: RefRow) -> dict[str, Any]:
        """The filter that matches a reference document only in exactly this state."""
        ...

    def ref_row(self, repo: str, doc: Mapping[str, Any]) -> RefRow: ...
    def obj_doc(self, repo: str, row: ObjRow) -> dict[str, Any]: ...
    def obj_row(self, repo: str, doc: Mapping[str, Any]) -> ObjRow: ...


def key(repo: str, name: str) -> str:
    return f"{len(repo)}:{repo}:{name}"


def ref_doc(repo: str, row: RefRow) -> dict[str, Any]:
    from bson import Int64

    return {
        "_id": key(repo, row.name),
        "r": repo,
        "p": row.pointer,
        "d": row.deleted,
        "c": Int64(row.created_at_micros),
        "e": row.extended_info,
        "h": row.previous_pointers,
    }


def ref_condition(repo: str, row: RefRow) -> dict[str, Any]:
    """The whole compare-and-swap identity. ``e: None`` matches null and absent alike; lochkit
    always writes the field, so both mean "no extended info"."""
    doc = ref_doc(repo, row)
    return {k: doc[k] for k in ("_id", "p", "d", "c", "e")}


def ref_row(name: str, doc: Mapping[str, Any]) -> RefRow:
    ext = doc.get("e")
    return RefRow(
        name,
        bytes(doc["p"]),
        bool(doc["d"]),
        int(doc["c"]),
        None if ext is None else bytes(ext),
        bytes(doc.get("h") or b""),
    )


def obj_doc(repo: str, row: ObjRow) -> dict[str, Any]:
    from bson import Int64

    return {
        "_id": key(repo, row.obj_id.hex()),
        "r": repo,
        "y": row.obj_type,
        "V": row.version_token,
        "z": Int64(row.referenced),
        "v": row.data,
    }


def obj_row(doc: Mapping[str, Any], prefix_len: int) -> ObjRow:
    obj_id = bytes.fromhex(doc["_id"][prefix_len:])
    return ObjRow(obj_id, doc["y"], doc.get("V"), bytes(doc["v"]), int(doc["z"]))


def id_filter(ids: Sequence[str]) -> dict[str, Any]:
    # A lone id as plain equality: FerretDB only turns ``{_id: "..."}`` into an indexed lookup.
    return {"_id": ids[0]} if len(ids) == 1 else {"_id": {"$in": list(ids)}}


class LochkitDocuments:
    """lochkit's own layout, through the functions above."""

    repo_field = "r"

    def ref_id(self, repo: str, name: str) -> str:
        return key(repo, name)

    def obj_id(self, repo: str, obj_id: bytes) -> str:
        return key(repo, obj_id.hex())

    def ref_doc(self, repo: str, row: RefRow) -> dict[str, Any]:
        return ref_doc(repo, row)

    def ref_condition(self, repo: str, row: RefRow) -> dict[str, Any]:
        return ref_condition(repo, row)

    def ref_row(self, repo: str, doc: Mapping[str, Any]) -> RefRow:
        return ref_row(doc["_id"][len(key(repo, "")) :], doc)

    def obj_doc(self, repo: str, row: ObjRow) -> dict[str, Any]:
        return obj_doc(repo, row)

    def obj_row(self, repo: str, doc: Mapping[str, Any]) -> ObjRow:
        return obj_row(doc, len(key(repo, "")))


LOCHKIT_DOCUMENTS: Final = LochkitDocuments()


# --- Nessie's layout -------------------------------------------------------------------------------

REFS_COLLECTION: Final = "refs2"
OBJS_COLLECTION: Final = "objs2"
#: What a field filter says for a field Nessie leaves out.
_ABSENT: Final = {"$exists": False}


class NessieDocuments:
    """Nessie's MongoDB documents (its ``MONGODB2`` store), for ``layout=nessie``.

    Collections ``refs2`` and ``objs2``; ``_id`` is a sub-document ``{r: repo, n: name}`` or
    ``{r: repo, i: Binary(object id)}``, in that field order: MongoDB compares sub-documents field by
    field, so ``{n, r}`` would be another id, and every ``_id`` built here is an insertion-ordered dict.
    Fields Nessie leaves out when empty are left out here too (``c`` when 0, ``e`` without extended
    info, ``h`` without history, ``V`` without version token): Nessie's reference filter asks
    ``$exists: false``, which a stored ``null`` would not satisfy. Numbers are BSON Int64 because Nessie
    reads them with ``getLong``; ``bytes`` become Binary subtype 0 as Nessie writes them.
    """

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
