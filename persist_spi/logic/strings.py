"""Small text values (like the repository description) stored as StringObjs on a reference."""

from __future__ import annotations

import uuid

from persist_spi.errors import CorruptData
from persist_spi.headers import CommitHeaders
from persist_spi.ids import ObjId
from persist_spi.keys import StoreKey
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.create_commit import Add, CreateCommit
from persist_spi.objs import CommitType, Compression, StringObj, string_data
from persist_spi.persist import Persist
from persist_spi.references import Reference


def new_string(content_type: str, text: bytes) -> StringObj:
    return string_data(content_type, Compression.NONE, None, (), text)


def read_string(persist: Persist, obj_id: ObjId) -> bytes:
    obj = persist.fetch_as(obj_id, StringObj)
    if obj.compression is not Compression.NONE or obj.predecessors:
        raise CorruptData(
            f"String {obj_id} uses compression {obj.compression.name} or diffs, which lochkit does not read"
        )
    return obj.text


def update_string_on_ref(
    persist: Persist,
    ref: Reference,
    key: StoreKey,
    content_type: str,
    text: bytes,
    message: str,
    headers: CommitHeaders | None = None,
) -> bytes | None:
    """Commit ``text`` under ``key`` on ``ref`` (only if it changed) and move the ref; returns the
    previous text. Raises ``RefConditionFailed`` / ``CommitConflictError`` for the caller to retry."""
    logic = CommitLogic(persist)
    head = logic.fetch_commit(ref.pointer)
    existing = logic.indexes.build_complete_index_or_empty(head).get(key)
    live = existing if existing is not None and existing.op.exists else None
    previous = read_string(persist, live.op.value) if live is not None and live.op.value else None
    string = new_string(content_type, text)
    if live is not None and live.op.value == string.id:
        return previous
    # An existing entry keeps its content id (even none); only a new key gets a fresh one.
    content_id = live.op.content_id if live is not None else uuid.uuid4()
    create = CreateCommit(
        parent_commit_id=ref.pointer,
        message=message,
        headers=headers or CommitHeaders(),
        commit_type=CommitType.INTERNAL,
        adds=(Add(key, 0, string.id, live.op.value if live is not None else None, content_id),),
    )
    commit = logic.build_commit_obj(create)
    stored = logic.store_commit(commit, [string])
    if stored.commit is None:
        raise RuntimeError(f"Hash collision detected for commit {commit.id}")
    persist.update_reference_pointer(ref, stored.commit.id)
    return previous
