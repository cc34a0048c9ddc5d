"""Reads: contents (one key, several keys), entries, the commit log and diffs, each at a reference,
a commit on it, a detached commit, or a relative commit spec; listings with CEL filters and paging."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any, Final

from persist_spi.versionstore import nessie_json as nj
from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.key_hash_order import hash_map_order
from persist_spi.versionstore.results import Diff, KeyEntry, LogEntry
from rest_server.authorization import (
    ALLOW_ALL,
    Check,
    Op,
    content_types,
    on_content,
    on_reference,
    read_content_key,
    view,
)
from rest_server.cel_filters import compile_filter, entry_activation, key_activation, log_activation
from rest_server.context import Call, ReadAt, parse_key
from rest_server.errors import bad_request, content_not_found
from rest_server.paging import max_records, take_page

Json = dict[str, Any]
#: Nessie's hard cap on log entries per page.
MAX_LOG_ENTRIES: Final = 250


def get_content(call: Call, element: str, raw_key: str) -> Json:
    key = parse_key(raw_key, "the path")
    at = call.read_at(call.address(element))
    found = call.store.get_contents(at.hash, [key]).contents.get(key)
    call.access.require(_content_checks(call, at, {key: found}))
    if found is None:
        raise content_not_found(key, at.name)
    return {"content": nj.content_to_json(found), "effectiveReference": at.effective()}


def _content_checks(call: Call, at: ReadAt, found: dict[ContentKey, Content | None]) -> list[Check]:
    """Nessie's checks of a content read: view the reference, read each key found. (Nessie 0.99's
    REST API v2 reads as for reading even when asked ``for-write``, so lochkit does too.)"""
    checks = view(at.name)
    for key, content in found.items():
        if content is not None:
            checks += on_content(Op.READ_ENTITY_VALUE, at.name, key, content.TYPE_NAME)
    return checks


def get_several_contents(call: Call, element: str) -> Json:
    keys = [parse_key(raw, "key") for raw in call.params("key")]
    return _contents(call, element, keys)


def post_contents(call: Call, element: str) -> Json:
    body = call.body_object("{requestedKeys: [{elements: [...]}, ...]}")
    requested = body.get("requestedKeys")
    if not isinstance(requested, list):
        raise bad_request("requestedKeys must be a list of content keys")
    return _contents(call, element, [nj.key_from_json(k) for k in requested])


def _contents(call: Call, element: str, keys: Sequence[ContentKey]) -> Json:
    at = call.read_at(call.address(element))
    found = call.store.get_contents(at.hash, keys).contents if keys else {}
    call.access.require(_content_checks(call, at, {k: found.get(k) for k in keys}))
    # Listed as Nessie lists them: in the order of a hash map sized for the keys asked for.
    listed = hash_map_order((k for k in keys if k in found), expected_size=len(keys))
    return {
        "contents": [{"key": nj.key_to_json(k), "content": nj.content_to_json(found[k])} for k in listed],
        "effectiveReference": at.effective(),
    }


def _key_range(call: Call) -> tuple[ContentKey | None, ContentKey | None, ContentKey | None, set[ContentKey]]:
    """min, max and prefix keys and the requested keys; requested keys narrow the range."""
    min_key, max_key, prefix = (
        call.key_param("min-key"),
        call.key_param("max-key"),
        call.key_param("prefix-key"),
    )
    requested = {parse_key(raw, "key") for raw in call.params("key")}
    if requested and prefix is None:
        low, high = min(requested), max(requested)
        min_key = low if min_key is None or low < min_key else min_key
        max_key = high if max_key is None or high > max_key else max_key
    return min_key, max_key, prefix, requested


def get_entries(call: Call, element: str) -> Json:
    at = call.read_at(call.address(element))
    min_key, max_key, prefix, requested = _key_range(call)
    cel = compile_filter(call.param("filter"), "entries")
    call.access.require([Check(Op.READ_ENTRIES, at.name)])
    entries = call.store.get_entries(
        at.hash,
        min_key=min_key,
        max_key=max_key,
        prefix_key=prefix,
        key_filter=(lambda k: k in requested) if requested else None,
        paging_token=call.param("page-token"),
        with_content=call.flag("content"),
    )

    def filtered() -> Iterator[KeyEntry]:
        for entry in entries:
            content_type = nj.content_type_name(entry.payload)
            if cel is not None and not cel.matches(entry_activation(entry.key, content_type)):
                continue
            if call.access.allows(read_content_key(at.name, entry.key, content_type)):
                yield entry

    page = take_page(filtered(), max_records(call.param("max-records")), lambda e: e.paging_token)
    return page.answer(
        "entries", [nj.entry_to_json(e) for e in page.items], effectiveReference=at.effective()
    )


def get_commit_log(call: Call, element: str) -> Json:
    fetch = (call.param("fetch") or "MINIMAL").upper()
    if fetch not in ("MINIMAL", "ALL"):
        raise bad_request(f"fetch must be MINIMAL or ALL, not '{call.param('fetch')}'")
    at = call.read_at(call.address(element))
    call.access.require(on_reference(Op.LIST_COMMIT_LOG, at.name))
    limit = call.param("limit-hash")
    stop = None
    if limit:
        _, stop = call.source_hash(None, limit, "Oldest hash (limit-hash)")
    cel = compile_filter(call.param("filter"), "the commit log")
    log = call.store.get_commits(
        at.hash, paging_token=call.param("page-token"), with_operations=fetch == "ALL"
    )

    def until_limit() -> Iterator[tuple[LogEntry, bool]]:
        for entry in log:
            if cel is None or cel.matches(log_activation(entry.meta, entry.operations)):
                yield _readable_operations(call, at, entry)
            if entry.hash == stop:
                return

    page = take_page(
        until_limit(),
        max_records(call.param("max-records"), MAX_LOG_ENTRIES),
        lambda e: e[0].paging_token,
    )
    return page.answer("logEntries", [_log_entry(e, hidden) for e, hidden in page.items])


def _readable_operations(call: Call, at: ReadAt, entry: LogEntry) -> tuple[LogEntry, bool]:
    """The entry with only the operations on keys the caller may read (as Nessie, which names each
    key's content type as of the log's newest commit), and whether any was left out."""
    if not entry.operations or call.access is ALLOW_ALL:
        return entry, False
    keys = [op.key for op in entry.operations]
    types = content_types(call.store.get_contents(at.hash, keys).contents)
    kept = tuple(
        op
        for op in entry.operations
        if call.access.allows(read_content_key(at.name, op.key, types.get(op.key, "")))
    )
    if len(kept) == len(entry.operations):
        return entry, False
    return dataclasses.replace(entry, operations=kept), True


def _log_entry(entry: LogEntry, hidden: bool = False) -> Json:
    doc = nj.log_entry_to_json(entry)
    if hidden and doc["operations"] is None:
        # Nessie answers null for a commit without operations, but [] when the caller may read none
        # of them.
        doc["operations"] = []
    for op in doc["operations"] or ():
        if op["type"] == "PUT":
            op.setdefault("documentation", None)  # Nessie's field; lochkit keeps no documentation
    return doc


def get_diff(call: Call, from_element: str, to_element: str) -> Json:
    from_at = call.read_at(call.address(from_element))
    to_at = call.read_at(call.address(to_element))
    call.access.require(view(from_at.name) + view(to_at.name))  # before the filter, as Nessie
    min_key, max_key, prefix, requested = _key_range(call)
    cel = compile_filter(call.param("filter"), "diffs")
    diffs = call.store.get_diffs(
        from_at.hash,
        to_at.hash,
        min_key=min_key,
        max_key=max_key,
        prefix_key=prefix,
        key_filter=(lambda k: k in requested) if requested else None,
        paging_token=call.param("page-token"),
    )

    def filtered() -> Iterator[Diff]:
        for diff in diffs:
            if cel is not None and not cel.matches(key_activation(diff.key)):
                continue
            # Nessie checks a changed or removed key on the "from" side, an added one on the "to" side.
            side = from_at.name if diff.from_content is not None else to_at.name
            if call.access.allows(read_content_key(side, diff.key)):
                yield diff

    page = take_page(filtered(), max_records(call.param("max-records")), lambda d: d.paging_token)
    return page.answer(
        "diffs",
        [nj.diff_to_json(d) for d in page.items],
        effectiveFromReference=from_at.effective(),
        effectiveToReference=to_at.effective(),
    )


__all__ = [
    "MAX_LOG_ENTRIES",
    "get_commit_log",
    "get_content",
    "get_diff",
    "get_entries",
    "get_several_contents",
    "post_contents",
]
