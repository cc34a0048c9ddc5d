"""Branches and tags: list (with ``fetch=ALL`` metadata, CEL filter, paging), get, create, assign,
delete, and the recorded history of a reference's head (``recent-changes``)."""

from __future__ import annotations

from typing import Any

from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.keys import key_less, key_order
from persist_spi.versionstore import nessie_json as nj
from persist_spi.versionstore.refs import NamedRef, ReferenceInfo, RefKind
from persist_spi.versionstore.results import ReferenceMetadata
from rest_server.authorization import Check, Op, on_reference, ref_name, view
from rest_server.cel_filters import compile_filter, reference_activation
from rest_server.context import DETACHED, Call
from rest_server.errors import bad_request
from rest_server.paging import max_records, take_page
from rest_server.ref_path import check_new_ref_name

Json = dict[str, Any]


def _fetch_all(call: Call) -> bool:
    fetch = (call.param("fetch") or "MINIMAL").upper()
    if fetch not in ("MINIMAL", "ALL"):
        raise bad_request(f"fetch must be MINIMAL or ALL, not '{call.param('fetch')}'")
    return fetch == "ALL"


def _token(info: ReferenceInfo) -> str:
    return info.named_ref.full_name.encode().hex()


def list_references(call: Call) -> Json:
    fetch_all = _fetch_all(call)
    cel = compile_filter(call.param("filter"), "references")
    token = call.param("page-token")
    start = ""
    if token:
        try:
            start = bytes.fromhex(token).decode()
        except ValueError:
            raise bad_request(f"Invalid page-token '{token}': pass the token a listing returned") from None
    # Branches before tags, each by name: the order of their full names (Nessie's key order, as in
    # its index of references), which tokens resume in.
    found = sorted(call.store.list_references(), key=lambda i: key_order(i.named_ref.full_name))

    def listed() -> Any:
        for info in found:
            if key_less(info.named_ref.full_name, start):
                continue
            if not call.access.allows(view(info.named_ref.name)[0]):
                continue  # like Nessie: a reference the caller may not view is not listed
            metadata = call.store.reference_metadata(info.named_ref) if fetch_all else None
            if cel is not None and not cel.matches(_activation(info, metadata)):
                continue
            yield info, metadata

    page = take_page(listed(), max_records(call.param("max-records")), lambda item: _token(item[0]))
    return page.answer("references", [nj.reference_to_json(info, metadata) for info, metadata in page.items])


def _activation(info: ReferenceInfo, metadata: ReferenceMetadata | None) -> Any:
    meta_json = nj.reference_metadata_to_json(metadata) if metadata is not None else None
    return reference_activation(
        info.named_ref.name,
        str(info.hash),
        nj.ref_type_name(info.named_ref.kind),
        meta_json,
        metadata.head_meta if metadata is not None else None,
    )


def get_reference(call: Call, element: str) -> Json:
    address = call.address(element)
    if address.has_commit_spec or address.name is None:
        raise bad_request("Hashes are not allowed when fetching a reference by name")
    info = call.store.named_ref(address.name)
    call.access.require(view(info.named_ref.name))
    metadata = call.store.reference_metadata(info.named_ref) if _fetch_all(call) else None
    return {"reference": nj.reference_to_json(info, metadata)}


def create_reference(call: Call) -> Json:
    type_name = call.param("type")
    if not type_name:
        raise bad_request("Mandatory reference type missing: add ?type=BRANCH or ?type=TAG")
    kind = nj.ref_kind_named(type_name)
    name = check_new_ref_name(call.param("name"))
    source = call.body if isinstance(call.body, dict) else {}
    source_hash = source.get("hash")
    new_ref = NamedRef(name, kind)
    checks = [Check(Op.CREATE_REFERENCE, name)]
    if not source_hash and kind is RefKind.BRANCH and name == call.default_branch:
        target = EMPTY_OBJ_ID  # (re-)creating the default branch needs no source
    else:
        source_ref, target = call.source_hash(
            source.get("name") or call.default_branch, source_hash, "Target hash"
        )
        checks += view(ref_name(source_ref))
    call.access.require(checks)
    created = call.store.create_reference(new_ref, target)
    return {"reference": nj.reference_to_json(created)}


def _existing(call: Call, name: str, type_name: str | None) -> NamedRef:
    ref = call.named(name)
    if type_name and nj.ref_kind_named(type_name) is not ref.kind:
        raise bad_request(
            f"Expected reference type {type_name.upper()} does not match existing reference "
            f"'{ref.name}', a {nj.ref_type_name(ref.kind).lower()}"
        )
    return ref


def assign_reference(call: Call, element: str) -> Json:
    address = call.address(element)
    if address.name is not None and address.name != DETACHED:
        _existing(call, address.name, call.param("type"))
    ref, expected = call.write_target(address)
    target_doc = call.body_object("the reference to assign to: {type, name, hash}")
    target_ref, target = call.source_hash(target_doc.get("name"), target_doc.get("hash"), "Target hash")
    # A target without a name is on the default branch for Nessie's check, as its hash resolution.
    target_name = ref_name(target_ref) if target_doc.get("name") else call.default_branch
    call.access.require(view(target_name) + on_reference(Op.ASSIGN_REFERENCE_TO_HASH, ref.name))
    assigned = call.store.assign(ref, expected, target)
    return {"reference": nj.reference_to_json(ReferenceInfo(ref, assigned.current_hash))}


def delete_reference(call: Call, element: str) -> Json:
    address = call.address(element)
    if address.name is None or address.name == DETACHED:
        raise bad_request("Only branches and tags can be deleted")
    ref = _existing(call, address.name, call.param("type"))
    if ref.kind is RefKind.BRANCH and ref.name == call.default_branch:
        raise bad_request(f"Default branch '{ref.name}' cannot be deleted.")
    call.access.require(on_reference(Op.DELETE_REFERENCE, ref.name))
    ref, expected = call.write_target(address)
    deleted_at = call.store.delete_reference(ref, expected)
    return {"reference": nj.reference_to_json(ReferenceInfo(ref, deleted_at))}


def reference_history(call: Call, element: str) -> Json:
    address = call.address(element)
    if address.has_commit_spec or address.name is None:
        raise bad_request("Hashes are not allowed when fetching a reference history")
    info = call.store.named_ref(address.name)
    call.access.require(view(info.named_ref.name))
    history = call.store.reference_history(info.named_ref, call.int_param("scan-commits"))
    return nj.reference_history_to_json(history, info)


__all__ = [
    "assign_reference",
    "create_reference",
    "delete_reference",
    "get_reference",
    "list_references",
    "reference_history",
]
