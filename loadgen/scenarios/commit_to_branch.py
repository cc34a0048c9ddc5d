"""Nessie's CommitToBranchSimulation: commit latency and throughput under five contention patterns.

Each user creates its branch (errors ignored, not recorded) or reads it, then repeats
**FetchContent** (the table at the user's last known commit) and **Commit** (one Put of an Iceberg
table, expected hash = that commit). Branch and table per mode:

=============================== ======================== ============================
mode                            branch                   table
=============================== ======================== ============================
BRANCH_PER_USER_RANDOM_TABLE    ``<branch>-<user>``      ``<prefix>_<random>``
BRANCH_PER_USER_SINGLE_TABLE    ``<branch>-<user>``      ``<prefix>``
SINGLE_BRANCH_RANDOM_TABLE      ``<branch>``             ``<prefix>_<random>``
SINGLE_BRANCH_TABLE_PER_USER    ``<branch>``             ``<prefix>_<user>``
SINGLE_BRANCH_SINGLE_TABLE      ``<branch>``             ``<prefix>`` (most contention)
=============================== ======================== ============================

With ``--sim-tables-unique`` every commit creates fresh content (a new table key each time, since
Nessie's v2 model cannot put new content on an existing key). A conflict is a failed Commit (KO, as
in Gatling); the user then reads the branch head again and goes on, instead of repeating the same
stale commit forever.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from typing import Final

from locust import task

from loadgen.scenarios.run import measure
from loadgen.scenarios.users import NessieUser
from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.errors import ReferenceAlreadyExistsError
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch

MODES: Final = (
    "BRANCH_PER_USER_RANDOM_TABLE",
    "BRANCH_PER_USER_SINGLE_TABLE",
    "SINGLE_BRANCH_RANDOM_TABLE",
    "SINGLE_BRANCH_TABLE_PER_USER",
    "SINGLE_BRANCH_SINGLE_TABLE",
)


@dataclass(frozen=True)
class CommitToBranchOptions:
    branch: str
    mode: str = "BRANCH_PER_USER_SINGLE_TABLE"
    table_prefix: str = ""
    tables: int = 250
    tables_unique: bool = False
    commits: int = 100
    rate: float = 0.0


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--sim-branch", help="commit-to-branch: branch name (default commits-<epoch ms>)")
    group.add_argument(
        "--sim-mode", choices=MODES, default="BRANCH_PER_USER_SINGLE_TABLE", help="commit-to-branch"
    )
    group.add_argument(
        "--sim-table-prefix", help="commit-to-branch: table name prefix (default someTable<epoch ms>)"
    )
    group.add_argument(
        "--sim-tables", type=int, default=250, help="commit-to-branch: tables for *_RANDOM_TABLE"
    )
    group.add_argument(
        "--sim-tables-unique", action="store_true", help="commit-to-branch: new content per commit"
    )
    group.add_argument(
        "--sim-commits",
        type=int,
        default=100,
        help="commit-to-branch: commits per user, 0 until --run-time ends (default 100; 0 when "
        "'lochkit scenario' is given a run time, as Nessie's sim.commits)",
    )


def options(args: argparse.Namespace) -> CommitToBranchOptions:
    epoch = int(time.time() * 1000)
    if args.sim_tables < 1:
        raise InputError("--sim-tables must be at least 1")
    return CommitToBranchOptions(
        branch=args.sim_branch or f"commits-{epoch}",
        mode=args.sim_mode,
        table_prefix=args.sim_table_prefix or f"someTable{epoch}",
        tables=args.sim_tables,
        tables_unique=args.sim_tables_unique,
        commits=max(args.sim_commits, 0),
        rate=args.sim_rate,
    )


class CommitToBranchUser(NessieUser):
    def on_start(self) -> None:
        super().on_start()
        o: CommitToBranchOptions = self.scenario.options
        self.pace(o.rate)
        name = o.branch if o.mode.startswith("SINGLE_BRANCH") else f"{o.branch}-{self.user_id}"
        self.branch = branch(name)
        api = self.scenario.api
        try:
            default = api.reference(branch(api.default_branch())).hash
            self.head: ObjId = api.create_reference(self.branch, default).hash
        except ReferenceAlreadyExistsError:
            self.head = api.reference(self.branch).hash
        self.commits = 0

    def _table(self) -> str:
        o: CommitToBranchOptions = self.scenario.options
        if o.mode.endswith("RANDOM_TABLE"):
            name = f"{o.table_prefix}_{random.randrange(o.tables)}"
        elif o.mode.endswith("TABLE_PER_USER"):
            name = f"{o.table_prefix}_{self.user_id}"
        else:
            name = o.table_prefix
        return f"{name}_{self.user_id}_{self.commits}" if o.tables_unique else name

    @task
    def commit(self) -> None:
        o: CommitToBranchOptions = self.scenario.options
        if self.finished:
            return
        if o.commits and self.commits >= o.commits:
            self.finish()
            return
        api = self.scenario.api
        key = ContentKey.of(f"table-{self._table()}")
        with measure(self, "FetchContent", self.branch.name):
            existing = api.get_value(self.head, key)
        location = f"metadata_{self.user_id}_{self.commits}"
        content = (
            IcebergTable(
                metadata_location=location, snapshot_id=42, schema_id=43, spec_id=44, sort_order_id=45
            )
            if existing is None or not isinstance(existing, IcebergTable)
            else IcebergTable(
                id=existing.id,
                metadata_location=location,
                snapshot_id=existing.snapshot_id,
                schema_id=existing.schema_id,
                spec_id=existing.spec_id,
                sort_order_id=existing.sort_order_id,
            )
        )
        with measure(self, "Commit", self.branch.name, puts=1, swallow_conflict=True) as m:
            result = api.commit(
                self.branch, self.head, CommitMeta(f"commit {self.commits}"), [Put(key, content)]
            )
            m.commit_hash, m.attempts = str(result.hash), result.attempts
            self.head = result.hash
        if m.commit_hash is None:
            self.head = api.reference(self.branch).hash
        self.commits += 1
