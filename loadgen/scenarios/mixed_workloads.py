"""Nessie's MixedWorkloadsSimulation: writers, readers and UI users, each with its own rate.

Setup (not recorded): branch ``--sim-branch`` gets ``--sim-total-tables`` tables ``table-<t>`` (under
``--sim-namespace`` if given) in commits of ``--sim-tables-per-commit``, then ``--sim-num-branches``
- 1 more branches ``<branch>-<n>`` are created from it. Then, in parallel, each population at its
own rate (operations per second per user):

- writers: on a random branch, **Update table / get content** then **Update table / commit** (a new
  random snapshot id) of one of the first ``--sim-active-tables`` tables; a conflict is recorded
  and the update starts over;
- readers: **Read N table(s)**, one multi-get of ``--sim-read-num-tables`` random active tables;
- UI users: **Get all entries** of a random branch, then one update as the writers do.

Without ``--sim-allow-conflicts``, users of this process lock each (branch, table) while updating
it, so they never conflict with each other.
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from locust import task

from loadgen.scenarios.run import ScenarioRun, measure
from loadgen.scenarios.users import NessieUser
from persist_spi.errors import InputError
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch

#: Attempts of one update before a writer gives up on it (each conflict starts it over).
MAX_UPDATE_ATTEMPTS: Final = 20


@dataclass(frozen=True)
class MixedOptions:
    branch: str
    namespace: str = ""
    total_tables: int = 10
    active_tables: int = 1
    tables_per_commit: int = 20
    read_num_tables: int = 1
    allow_conflicts: bool = True
    num_branches: int = 1
    writers: tuple[int, float] = (1, 10.0)
    readers: tuple[int, float] = (1, 10.0)
    ui_users: tuple[int, float] = (1, 10.0)

    def branches(self) -> list[str]:
        return [self.branch] + [f"{self.branch}-{n}" for n in range(1, self.num_branches)]

    def key(self, table: int) -> ContentKey:
        parts = tuple(self.namespace.split(".")) if self.namespace else ()
        return ContentKey((*parts, f"table-{table}"))


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--sim-namespace", default="", help="mixed-workloads: namespace of the tables")
    group.add_argument("--sim-total-tables", type=int, default=10, help="mixed-workloads (default 10)")
    group.add_argument("--sim-active-tables", type=int, default=1, help="mixed-workloads (default 1)")
    group.add_argument(
        "--sim-tables-per-commit", type=int, default=20, help="mixed-workloads setup (default 20)"
    )
    group.add_argument("--sim-read-num-tables", type=int, default=1, help="mixed-workloads (default 1)")
    group.add_argument(
        "--sim-allow-conflicts",
        default="true",
        choices=["true", "false"],
        help="mixed-workloads: false locks each (branch, table) among this process's users",
    )
    group.add_argument("--sim-num-branches", type=int, default=1, help="mixed-workloads (default 1)")
    for population in ("writers", "readers", "ui-users"):
        group.add_argument(
            f"--sim-{population}-users", type=int, default=1, help="mixed-workloads (default 1)"
        )
        group.add_argument(
            f"--sim-{population}-rate",
            type=float,
            default=10.0,
            help="mixed-workloads, ops/s per user (default 10)",
        )


def options(args: argparse.Namespace) -> MixedOptions:
    o = MixedOptions(
        branch=args.sim_branch or f"mixed-{int(time.time() * 1000)}",
        namespace=args.sim_namespace,
        total_tables=args.sim_total_tables,
        active_tables=args.sim_active_tables,
        tables_per_commit=args.sim_tables_per_commit,
        read_num_tables=args.sim_read_num_tables,
        allow_conflicts=args.sim_allow_conflicts == "true",
        num_branches=args.sim_num_branches,
        writers=(args.sim_writers_users, args.sim_writers_rate),
        readers=(args.sim_readers_users, args.sim_readers_rate),
        ui_users=(args.sim_ui_users_users, args.sim_ui_users_rate),
    )
    if min(o.total_tables, o.active_tables, o.tables_per_commit, o.read_num_tables, o.num_branches) < 1:
        raise InputError("mixed-workloads: tables, branches and batch sizes must be at least 1")
    if o.active_tables > o.total_tables or o.read_num_tables > o.active_tables:
        raise InputError("mixed-workloads: need read-num-tables <= active-tables <= total-tables")
    return o


def setup(run: ScenarioRun) -> None:
    o: MixedOptions = run.options
    api = run.api
    source = api.reference(branch(api.default_branch())).hash
    head = api.create_reference(branch(o.branch), source).hash
    pending = []
    if o.namespace:
        pending.append(
            Put(ContentKey(tuple(o.namespace.split("."))), Namespace(elements=tuple(o.namespace.split("."))))
        )
    for t in range(o.total_tables):
        pending.append(Put(o.key(t), IcebergTable(metadata_location=f"setup/{t}", snapshot_id=0)))
        if len(pending) >= o.tables_per_commit:
            head = api.commit(branch(o.branch), head, CommitMeta("mixed setup"), pending).hash
            pending = []
    if pending:
        head = api.commit(branch(o.branch), head, CommitMeta("mixed setup"), pending).hash
    for name in o.branches()[1:]:
        api.create_reference(branch(name), head)


_locks: dict[tuple[str, int], threading.Lock] = {}
_locks_guard = threading.Lock()


def _table_lock(name: str, table: int) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault((name, table), threading.Lock())


class _Updating(NessieUser):
    abstract = True

    def update_table(self) -> None:
        o: MixedOptions = self.scenario.options
        name = random.choice(o.branches())
        table = random.randrange(o.active_tables)
        lock = None if o.allow_conflicts else _table_lock(name, table)
        if lock is not None:
            lock.acquire()
        try:
            self._update(name, o.key(table))
        finally:
            if lock is not None:
                lock.release()

    def _update(self, name: str, key: ContentKey) -> None:
        api = self.scenario.api
        for _ in range(MAX_UPDATE_ATTEMPTS):
            with measure(self, "Update table / get content", name):
                read = api.get_contents(branch(name), [key])
            current = read.contents.get(key)
            if not isinstance(current, IcebergTable):
                return
            updated = IcebergTable(
                id=current.id,
                metadata_location=current.metadata_location,
                snapshot_id=random.randrange(2**62),
                schema_id=current.schema_id,
                spec_id=current.spec_id,
                sort_order_id=current.sort_order_id,
            )
            with measure(self, "Update table / commit", name, puts=1, swallow_conflict=True) as m:
                result = api.commit(branch(name), read.hash, CommitMeta("update table"), [Put(key, updated)])
                m.commit_hash, m.attempts = str(result.hash), result.attempts
            if m.commit_hash is not None:
                return


class MixedWriter(_Updating):
    def on_start(self) -> None:
        super().on_start()
        self.pace(self.scenario.options.writers[1])

    @task
    def write(self) -> None:
        self.update_table()


class MixedReader(NessieUser):
    def on_start(self) -> None:
        super().on_start()
        self.pace(self.scenario.options.readers[1])

    @task
    def read(self) -> None:
        o: MixedOptions = self.scenario.options
        name = random.choice(o.branches())
        keys = [o.key(t) for t in random.sample(range(o.active_tables), o.read_num_tables)]
        with measure(self, f"Read {o.read_num_tables} table(s)", name):
            self.scenario.api.get_values(branch(name), keys)


class MixedUiUser(_Updating):
    def on_start(self) -> None:
        super().on_start()
        self.pace(self.scenario.options.ui_users[1])

    @task
    def browse(self) -> None:
        name = random.choice(self.scenario.options.branches())
        with measure(self, "Get all entries", name):
            _drain(self.scenario.api.get_entries(branch(name)))
        self.update_table()


def _drain(items: Iterator[object]) -> None:
    for _ in items:
        pass


def set_populations(o: MixedOptions) -> int:
    """Give each population its user count; returns the total (locust's --users)."""
    MixedWriter.fixed_count = o.writers[0]
    MixedReader.fixed_count = o.readers[0]
    MixedUiUser.fixed_count = o.ui_users[0]
    return o.writers[0] + o.readers[0] + o.ui_users[0]
