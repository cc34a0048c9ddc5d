"""Writes: commit, merge and transplant onto ``branch@expectedHash``.

The version store decides everything about the change itself (validation, conflicts, messages);
this layer reads the request, checks what Nessie checks at its API (commit meta fields a client must
not set, the source reference exists), and turns the result into Nessie's answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.versionstore import nessie_json as nj
from persist_spi.versionstore.api import MergeValidator, Validator
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Delete, MergeBehavior, MergeKeyBehavior, Operation
from persist_spi.versionstore.refs import NamedRef
from persist_spi.versionstore.results import MergeResult
from rest_server.authorization import (
    ALLOW_ALL,
    Op,
    change_checks,
    commit_checks,
    content_types,
    on_reference,
    ref_name,
    view,
)
from rest_server.context import Call
from rest_server.errors import bad_request
from rest_server.principal import Principal

Json = dict[str, Any]


def _client_meta(doc: Any, principal: Principal | None) -> CommitMeta | None:
    """Commit meta from a request: what the server sets itself may not be given. With
    authentication on, that includes the committer, which is the authenticated principal (who is
    also the author when none is named), as in Nessie; without it there is nobody to name, so
    the committer the client names is recorded (a registered difference)."""
    if doc is None:
        return None if principal is None else _signed(CommitMeta(), principal)
    if not isinstance(doc, dict):
        raise bad_request("commitMeta must be a JSON object")
    if principal is not None and doc.get("committer") is not None:
        raise bad_request("Cannot set the committer on the client side. It is set by the server.")
    for field, what in (("commitTime", "commit time"), ("hash", "commit hash")):
        if doc.get(field):
            raise bad_request(f"Cannot set the {what} on the client side. It is set by the server.")
    if doc.get("parentCommitHashes"):
        raise bad_request("Cannot set the parent commit hashes on the client side. It is set by the server.")
    meta = nj.meta_from_json(doc)
    return meta if principal is None else _signed(meta, principal)


def _signed(meta: CommitMeta, principal: Principal) -> CommitMeta:
    return dataclasses.replace(meta, committer=principal.name, authors=meta.authors or (principal.name,))


def commit(call: Call, element: str) -> Json:
    body = call.body_object("{commitMeta: {...}, operations: [...]}")
    meta = _client_meta(body.get("commitMeta"), call.principal) or CommitMeta()
    _, operations = nj.commit_request_from_json(body)
    branch, expected = call.write_target(call.address(element))
    result = call.store.commit(
        branch, expected, meta, operations, validator=_commit_validator(call, branch, expected)
    )
    return nj.commit_result_to_json(branch, result)


def _commit_validator(call: Call, branch: NamedRef, expected: ObjId) -> Validator | None:
    """Nessie's checks of a commit, made once the store has validated its operations (so a commit
    that conflicts is answered 409, not 403, as by Nessie)."""
    if call.access is ALLOW_ALL:
        return None

    def validate(operations: Sequence[Operation]) -> None:
        # A deleted key's content type as the commit expected it (Nessie reads its expected index).
        keys = [op.key for op in operations if isinstance(op, Delete)]
        deleted = content_types(call.store.get_values(expected, keys)) if keys else {}
        call.access.require(commit_checks(branch.name, operations, deleted))

    return validate


def _flag(body: dict[str, Any], *names: str) -> bool:
    """A boolean field under either of its spellings (``isDryRun`` / ``dryRun``)."""
    for name in names:
        value = body.get(name)
        if value is not None:
            if not isinstance(value, bool):
                raise bad_request(f"'{name}' must be true or false")
            return value
    return False


def _behaviors(body: dict[str, Any]) -> tuple[MergeBehavior, list[MergeKeyBehavior]]:
    raw_default = body.get("defaultKeyMergeMode") or "NORMAL"
    try:
        default = MergeBehavior(str(raw_default).upper())
    except ValueError:
        raise bad_request(f"defaultKeyMergeMode must be NORMAL, FORCE or DROP, not '{raw_default}'") from None
    modes = body.get("keyMergeModes") or []
    if not isinstance(modes, list):
        raise bad_request("keyMergeModes must be a list of {key, mergeBehavior}")
    try:
        return default, [nj.merge_behavior_from_json(m) for m in modes]
    except InputError as e:
        raise bad_request(f"keyMergeModes: {e}") from None


def merge(call: Call, element: str) -> Json:
    body = call.body_object("{fromRefName, fromHash, ...}")
    from_name = body.get("fromRefName")
    if not from_name:
        raise bad_request("fromRefName must be provided: the name of the reference to merge from")
    source_ref, source_hash = call.source_hash(from_name, body.get("fromHash"), "Source hash (fromHash)")
    meta = _client_meta(body.get("commitMeta"), call.principal)
    message = body.get("message")
    if message and (meta is None or not meta.message):
        meta = CommitMeta(message=message) if meta is None else _with_message(meta, message)
    default, behaviors = _behaviors(body)
    target, expected = call.write_target(call.address(element))
    call.access.require(
        view(ref_name(source_ref)) + on_reference(Op.COMMIT_CHANGE_AGAINST_REFERENCE, target.name)
    )

    result = call.store.merge(
        source_ref if source_ref is not None else source_hash,
        target,
        expected,
        source_hash=source_hash if source_ref is not None else None,
        default_behavior=default,
        key_behaviors=behaviors,
        dry_run=_flag(body, "isDryRun", "dryRun"),
        meta=meta,
        raise_on_conflict=not _flag(body, "isReturnConflictAsResult", "returnConflictAsResult"),
        validator=_key_checks(call, target, source_hash),
    )
    return nj.merge_result_to_json(result)


def _key_checks(call: Call, target: NamedRef, source: ObjId) -> MergeValidator | None:
    """Nessie's per-key checks of a merge or transplant, run by the store once it knows the keys it
    would change and before it writes anything: each key, from its value on the target head the
    merge is planned on to its value at ``source`` (the merged commit, or the last transplanted
    one). Keys a DROP behaviour leaves alone are not checked."""
    if call.access is ALLOW_ALL:
        return None

    def check(planned: MergeResult) -> None:
        keys = [k for k, d in planned.details.items() if d.behavior is not MergeBehavior.DROP]
        if not keys:
            return
        before = call.store.get_values(planned.effective_target_hash or target, keys)
        after = call.store.get_values(source, keys)
        call.access.require(change_checks(target.name, keys, before, after))

    return check


def _with_message(meta: CommitMeta, message: str) -> CommitMeta:
    return dataclasses.replace(meta, message=message)


def transplant(call: Call, element: str) -> Json:
    body = call.body_object("{fromRefName, hashesToTransplant, ...}")
    hashes = body.get("hashesToTransplant")
    if not isinstance(hashes, list) or not hashes:
        raise bad_request("No hashes given to transplant.")
    from_name = body.get("fromRefName")
    if not from_name:
        raise bad_request("fromRefName must be provided: the name of the reference the commits come from")
    # The source reference must exist (checked once); the hashes need not be on it, as in Nessie.
    sequence = [
        call.source_hash(from_name if i == 0 else None, str(h), "Hash to transplant")[1]
        for i, h in enumerate(hashes)
    ]
    from_ref = str(from_name)  # a reference name, or DETACHED, as Nessie names the source
    message = body.get("message")
    default, behaviors = _behaviors(body)
    target, expected = call.write_target(call.address(element))
    call.access.require(view(from_ref) + on_reference(Op.COMMIT_CHANGE_AGAINST_REFERENCE, target.name))

    result = call.store.transplant(
        target,
        expected,
        sequence,
        default_behavior=default,
        key_behaviors=behaviors,
        dry_run=_flag(body, "isDryRun", "dryRun"),
        raise_on_conflict=not _flag(body, "isReturnConflictAsResult", "returnConflictAsResult"),
        # Like Nessie, a message replaces the message of a single transplanted commit only.
        message=message if message and len(sequence) == 1 else None,
        validator=_key_checks(call, target, sequence[-1]),
    )
    return nj.merge_result_to_json(result)


__all__ = ["commit", "merge", "transplant"]
