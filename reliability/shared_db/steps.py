"""The writing steps of the shared-database scenario, each over any :class:`VersionStoreApi`: a Nessie
server's REST client or lochkit's in-process version store. Which side runs which step is the
scenario's business (:mod:`reliability.shared_db.scenario`); a step returns how many commits it
made."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from persist_spi.versionstore import (
    UDF,
    CommitMeta,
    Content,
    ContentKey,
    Delete,
    DeltaLakeTable,
    IcebergTable,
    IcebergView,
    Namespace,
    Operation,
    Put,
)
from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.refs import NamedRef, branch, tag

MAIN: Final = branch("main")
#: Diffs both sides must report alike after each phase.
DIFFS: Final = (("main", "dev"), ("v1", "main"), ("v1", "v2"))


def key(dotted: str) -> ContentKey:
    return ContentKey.parse(dotted)


def _commit(api: VersionStoreApi, on: NamedRef, message: str, operations: Sequence[Operation]) -> int:
    api.commit(on, None, CommitMeta(message, authors=("shared-db-test",)), list(operations))
    return 1


def _updated(api: VersionStoreApi, on: NamedRef, dotted: str, **changes: Any) -> Put:
    """A Put that changes existing content (keeping its id)."""
    current = api.get_value(on, key(dotted))
    if current is None:
        raise AssertionError(f"{dotted} is not on {on.name}")
    return Put(key(dotted), dataclasses.replace(current, **changes))


def table(n: int) -> IcebergTable:
    return IcebergTable(metadata_location=f"s3://bucket/t{n}/metadata/v1.json", snapshot_id=n, schema_id=1)


def all_content_types() -> dict[str, Content]:
    """One value of every content type Nessie serves, optional fields set."""
    return {
        "db.t1": table(1),
        "db.delta": DeltaLakeTable(
            metadata_location_history=("s3://bucket/delta/_delta_log/0.json",),
            checkpoint_location_history=("s3://bucket/delta/_delta_log/0.checkpoint.parquet",),
            last_checkpoint="s3://bucket/delta/_delta_log/_last_checkpoint",
        ),
        "db.v1": IcebergView(metadata_location="s3://bucket/v1/metadata/v1.json", version_id=1, schema_id=2),
        "db.f1": UDF(metadata_location="s3://bucket/f1/metadata/v1.json", version_id="1", signature_id="s1"),
    }


def nessie_writes(api: VersionStoreApi) -> int:
    """Step 1 (Nessie): a namespace, all content types, a branch with commits merged back, a tag,
    and a branch created then deleted."""
    commits = _commit(api, MAIN, "namespace db", [Put(key("db"), Namespace(elements=("db",)))])
    commits += _commit(
        api, MAIN, "all content types", [Put(key(k), v) for k, v in all_content_types().items()]
    )
    dev = branch("dev")
    api.create_reference(dev, api.reference(MAIN).hash)
    commits += _commit(
        api,
        dev,
        "update t1, add t2",
        [_updated(api, dev, "db.t1", snapshot_id=11), Put(key("db.t2"), table(2))],
    )
    commits += _commit(api, dev, "add t2b", [Put(key("db.t2b"), table(22))])
    commits += _commit(api, MAIN, "add t0 on main", [Put(key("db.t0"), table(0))])
    commits += len(api.merge(dev, MAIN, meta=CommitMeta("merge dev into main")).created_commits)
    api.create_reference(tag("v1"), api.reference(MAIN).hash)
    tmp = branch("tmp")
    created = api.create_reference(tmp, api.reference(MAIN).hash)
    api.delete_reference(tmp, created.hash)
    return commits


def lochkit_writes(api: VersionStoreApi) -> int:
    """Step 3 (lochkit): commits on main, a branch merged back, Nessie's ``dev`` deleted, a tag."""
    commits = _commit(
        api,
        MAIN,
        "update t1, add t3, drop delta",
        [_updated(api, MAIN, "db.t1", snapshot_id=12), Put(key("db.t3"), table(3)), Delete(key("db.delta"))],
    )
    lk = branch("lk")
    api.create_reference(lk, api.reference(MAIN).hash)
    commits += _commit(api, lk, "add t4 on lk", [Put(key("db.t4"), table(4))])
    commits += _commit(api, MAIN, "update view on main", [_updated(api, MAIN, "db.v1", version_id=2)])
    commits += len(api.merge(lk, MAIN, meta=CommitMeta("merge lk into main")).created_commits)
    dev = branch("dev")
    api.delete_reference(dev, api.reference(dev).hash)
    api.create_reference(tag("v2"), api.reference(MAIN).hash)
    return commits


def nessie_continues(api: VersionStoreApi) -> int:
    """Step 4 (Nessie again): commits on top of lochkit's head, deletes ``lk``, merges a fresh
    branch."""
    commits = _commit(
        api,
        MAIN,
        "on top of lochkit",
        [_updated(api, MAIN, "db.t3", snapshot_id=13), Put(key("db.t5"), table(5))],
    )
    lk = branch("lk")
    api.delete_reference(lk, api.reference(lk).hash)
    fresh = branch("fresh")
    api.create_reference(fresh, api.reference(MAIN).hash)
    commits += _commit(api, fresh, "add t6 on fresh", [Put(key("db.t6"), table(6))])
    commits += _commit(api, MAIN, "add t7 on main", [Put(key("db.t7"), table(7))])
    commits += len(api.merge(fresh, MAIN, meta=CommitMeta("merge fresh into main")).created_commits)
    return commits
