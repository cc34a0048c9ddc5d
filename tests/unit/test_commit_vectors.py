"""lochkit's commit logic replays Nessie 0.108.1's commit chains: same ids, tails, sequence numbers
and incremental indexes, byte for byte (see tests/vectors/README.md)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from backends.inmemory import InMemoryBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.headers import CommitHeaders
from persist_spi.ids import ObjId
from persist_spi.keys import key
from persist_spi.logic.commit_builder import ConflictHandler
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.conflicts import CommitConflictError, ConflictResolution
from persist_spi.logic.create_commit import Add, CreateCommit, Remove, Unchanged
from persist_spi.objs import CommitObj, CommitType

VECTORS = json.loads((Path(__file__).parents[1] / "vectors" / "nessie-commit-ids.json").read_text())


def _id(hex_text: str | None) -> ObjId | None:
    return ObjId.from_hex(hex_text) if hex_text else None


def _uuid(text: str | None) -> uuid.UUID | None:
    return uuid.UUID(text) if text else None


def _always(resolution: ConflictResolution) -> ConflictHandler:
    return lambda _conflict: resolution


def create_commit(record: dict[str, Any]) -> CreateCommit:
    adds, removes, unchanged = [], [], []
    for op in record["ops"]:
        k = key(*op["key"])
        if op["type"] == "add":
            adds.append(
                Add(
                    k,
                    op["payload"],
                    ObjId.from_hex(op["value"]),
                    _id(op["expected_value"]),
                    _uuid(op["content_id"]),
                )
            )
        elif op["type"] == "remove":
            removes.append(
                Remove(k, op["payload"], ObjId.from_hex(op["expected_value"]), _uuid(op["content_id"]))
            )
        else:
            unchanged.append(Unchanged(k, op["payload"], _id(op["expected_value"]), _uuid(op["content_id"])))
    return CreateCommit(
        parent_commit_id=ObjId.from_hex(record["parent"]),
        message=record["message"],
        headers=CommitHeaders([(n, v) for n, v in record["headers"]]),
        secondary_parents=tuple(ObjId.from_hex(p) for p in record["secondary_parents"]),
        commit_type=CommitType[record["commit_type"]],
        adds=tuple(adds),
        removes=tuple(removes),
        unchanged=tuple(unchanged),
    )


@pytest.mark.parametrize("chain", VECTORS["chains"], ids=lambda c: c["name"])
def test_chain_replays_with_nessies_ids(chain: dict[str, Any]) -> None:
    replay_chain(chain)


def replay_chain(chain: dict[str, Any]) -> None:
    """Builds (and stores) every commit of a vector chain, checking each against Nessie's."""
    config = StoreConfig.from_mapping({k.replace("_", "-"): v for k, v in chain["config"].items()})
    persist = AdapterPersist(InMemoryBackendFactory().create(), config)
    created = chain["commits"][0]["created"]  # the generator's fixed clock
    logic = CommitLogic(persist, clock=lambda: created)
    stored_ids: dict[str, ObjId] = {}
    for record in chain["commits"]:
        create = create_commit(record)
        handler = ConflictResolution[record["conflict_handler"]]
        if "conflicts" in record:
            with pytest.raises(CommitConflictError) as e:
                logic.build_commit_obj(create, conflict_handler=_always(handler))
            got = [(list(c.key.split("\x00")), c.conflict_type.name) for c in e.value.conflicts]
            assert got == [(c["key"], c["type"]) for c in record["conflicts"]], record["name"]
            continue
        built = logic.build_commit_obj(create, conflict_handler=_always(handler))
        assert built.id.hex() == record["id"], record["name"]
        assert built.seq == record["seq"]
        assert [str(t) for t in built.tail] == record["tail"]
        assert built.incremental_index.hex() == record["built_incremental_index_hex"], record["name"]
        if record.get("same_id_as"):
            assert built.id == stored_ids[record["same_id_as"]], record["name"]
        if record.get("different_id_from"):
            assert built.id != stored_ids[record["different_id_from"]], record["name"]
        if not record["stored"]:
            continue
        result = logic.store_commit(built)
        assert result.commit is not None
        stored = persist.fetch_as(built.id, CommitObj)
        stored_ids[record["name"]] = stored.id
        assert stored.incremental_index.hex() == record["incremental_index_hex"], record["name"]
        assert [
            (s.first_key.split("\x00"), s.last_key.split("\x00"), str(s.segment))
            for s in stored.reference_index_stripes
        ] == [(s["first_key"], s["last_key"], s["segment"]) for s in record["reference_index_stripes"]], (
            record["name"]
        )
        assert (str(stored.reference_index) if stored.reference_index else None) == record["reference_index"]
