"""The same operations through Nessie's version store and through lochkit's give the same commit ids.

``tests/vectors/nessie-version-store.json`` was written by running namespaces, every content type,
an update, a delete, commit metadata (authors, sign-offs, multi-valued properties, a multi-line
message), a branch and a merge through Nessie's ``VersionStoreImpl`` on an in-memory repository
with a fixed clock (``tests/vectors/README.md``). lochkit replays them on its in-memory backend with
the same clock and the content ids Nessie drew, and must reach every recorded commit id. The file
also holds random header-name sequences with the order Nessie's ``CommitHeaders`` iterates them.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.inmemory import InMemoryBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.ids import ObjId
from persist_spi.java_order import java_header_order
from persist_spi.versionstore.content import ContentKey
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.nessie_json import content_from_json
from persist_spi.versionstore.operations import Delete, Operation, Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.sources import StoreSources
from persist_spi.versionstore.store import VersionStore

VECTORS_FILE = Path(__file__).resolve().parents[1] / "vectors" / "nessie-version-store.json"
VECTORS: dict[str, Any] = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))


class _RecordedIds:
    """Hands out the content ids Nessie drew, in the order of the Puts that create content."""

    def __init__(self) -> None:
        self.pending: Iterator[str] = iter(())

    def expect(self, step: dict[str, Any]) -> None:
        drawn = {tuple(key): content_id for key, content_id in step["new_content_ids"]}
        new_puts = [op for op in step["operations"] if op["op"] == "put" and "id" not in op["content"]]
        assert len(new_puts) == len(drawn)
        self.pending = iter([drawn[tuple(op["key"])] for op in new_puts])

    def __call__(self) -> uuid.UUID:
        return uuid.UUID(next(self.pending))


def _operation(doc: dict[str, Any]) -> Operation:
    key = ContentKey(tuple(doc["key"]))
    if doc["op"] == "delete":
        return Delete(key)
    return Put(key, content_from_json(doc["content"]))


def _meta(step: dict[str, Any]) -> CommitMeta:
    return CommitMeta(
        message=step["message"],
        author_time=datetime.datetime.fromisoformat(step["author_time"].replace("Z", "+00:00")),
        authors=tuple(step["authors"]),
        signed_off_by=tuple(step["signed_off_by"]),
        all_properties={name: tuple(values) for name, values in step["properties"]},
    )


def test_the_same_operations_give_nessies_commit_ids() -> None:
    clock = datetime.datetime.fromisoformat(VECTORS["clock"].replace("Z", "+00:00"))
    ids = _RecordedIds()
    persist = AdapterPersist(InMemoryBackendFactory().create(), StoreConfig())
    store = VersionStore(persist, sources=StoreSources(now=lambda: clock, new_content_id=ids))
    store.repository.initialize(VECTORS["default_branch"])
    steps = VECTORS["steps"]
    assert {s["op"] for s in steps} == {"commit", "create_branch", "merge"}
    for step in steps:
        if step["op"] == "commit":
            ids.expect(step)
            operations = [_operation(op) for op in step["operations"]]
            result = store.commit(branch(step["branch"]), None, _meta(step), operations)
            assert str(result.hash) == step["hash"], step["name"]
            assert {tuple(k.elements): v for k, v in result.added_content_ids.items()} == {
                tuple(k): v for k, v in step["new_content_ids"]
            }
        elif step["op"] == "create_branch":
            created = store.create_reference(branch(step["branch"]), ObjId.from_hex(step["from_hash"]))
            assert str(created.hash) == step["hash"], step["name"]
        else:
            merged = store.merge(
                branch(step["from"]),
                branch(step["into"]),
                ObjId.from_hex(step["expected_hash"]),
                source_hash=ObjId.from_hex(step["from_hash"]),
                meta=CommitMeta(message=step["message"]),
            )
            assert str(merged.resultant_target_hash) == step["hash"], step["name"]


@pytest.mark.parametrize("case", VECTORS["header_orders"], ids=lambda c: str(len(c["names"])))
def test_header_names_are_hashed_in_the_order_java_iterates_them(case: dict[str, Any]) -> None:
    assert list(java_header_order(case["names"])) == case["java_order"]
