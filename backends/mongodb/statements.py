"""How rows become MongoDB documents, filters and ids (see the layout in :mod:`backends.mongodb`).

This module is lochkit's own layout; :mod:`backends.mongodb.nessie_documents` is Nessie's. Both
answer :class:`Documents`, which is all the adapter knows of either.

``_id`` is a string, ``<len(repo)>:<repo>:<name or hex id>``: the length prefix keeps repository
ids that prefix each other apart, and a plain string (unlike a ``{r, n}`` sub-document) cannot
mismatch on field order.
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
