"""Nessie's KeyListSpillingSimulation: commits on top of a large inherited key index.

Setup (not recorded): branch ``keylist_spilling_base`` is deleted and re-created, then loaded with
``--sim-base-commit-count`` commits of ``--sim-puts-per-base-commit`` puts. Keys are
``"<n> " + 256 characters of padding``, large enough to push the index into reference-index
segments. Each user then loops: **DeleteTestBranchIfExists**, **CreateTestBranch**
``keylist_spilling_<user>`` from the base, and ``--sim-test-commit-count`` times
**TestBranchCommit** with ``--sim-puts-per-test-commit`` new padded keys."""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass
from typing import Final

from locust import task

from loadgen.scenarios.run import ScenarioRun, measure
from loadgen.scenarios.users import NessieUser
from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.errors import ReferenceNotFoundError
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch

BASE: Final = "keylist_spilling_base"
PADDING: Final = "abcdefg_" * 32


@dataclass(frozen=True)
class KeyListSpillingOptions:
    base_commit_count: int = 98
    puts_per_base_commit: int = 10
    test_commit_count: int = 40
    puts_per_test_commit: int = 1


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--sim-base-commit-count", type=int, default=98, help="key-list-spilling (default 98)")
    group.add_argument(
        "--sim-puts-per-base-commit", type=int, default=10, help="key-list-spilling (default 10)"
    )
    group.add_argument("--sim-test-commit-count", type=int, default=40, help="key-list-spilling (default 40)")
    group.add_argument(
        "--sim-puts-per-test-commit", type=int, default=1, help="key-list-spilling (default 1)"
    )


def options(args: argparse.Namespace) -> KeyListSpillingOptions:
    values = (
        args.sim_base_commit_count,
        args.sim_puts_per_base_commit,
        args.sim_test_commit_count,
        args.sim_puts_per_test_commit,
    )
    if min(values) < 1:
        raise InputError("key-list-spilling: every --sim-*-count and --sim-puts-* must be at least 1")
    return KeyListSpillingOptions(*values)


def padded(n: int) -> ContentKey:
    return ContentKey.of(f"{n} {PADDING}")


def _delete_if_exists(run: ScenarioRun, name: str) -> None:
    try:
        head = run.api.reference(branch(name)).hash
    except ReferenceNotFoundError:
        return
    run.api.delete_reference(branch(name), head)


def setup(run: ScenarioRun) -> None:
    """The base branch with its large key list (not recorded)."""
    o: KeyListSpillingOptions = run.options
    api = run.api
    _delete_if_exists(run, BASE)
    head: ObjId = api.create_reference(branch(BASE), api.reference(branch(api.default_branch())).hash).hash
    keys = itertools.count()
    for c in range(o.base_commit_count):
        ops = [
            Put(padded(next(keys)), IcebergTable(metadata_location=f"base/{c}/{p}"))
            for p in range(o.puts_per_base_commit)
        ]
        head = api.commit(branch(BASE), head, CommitMeta(f"base commit {c}"), ops).hash


class KeyListSpillingUser(NessieUser):
    def on_start(self) -> None:
        super().on_start()
        self.keys = itertools.count(10_000_000 * self.user_id)

    @task
    def test_branch(self) -> None:
        o: KeyListSpillingOptions = self.scenario.options
        api = self.scenario.api
        name = f"keylist_spilling_{self.user_id}"
        with measure(self, "DeleteTestBranchIfExists", name):
            _delete_if_exists(self.scenario, name)
        with measure(self, "CreateTestBranch", name) as m:
            head = api.create_reference(branch(name), api.reference(branch(BASE)).hash).hash
            m.commit_hash = str(head)
        for c in range(o.test_commit_count):
            ops = [
                Put(padded(next(self.keys)), IcebergTable(metadata_location=f"test/{self.user_id}/{c}/{p}"))
                for p in range(o.puts_per_test_commit)
            ]
            with measure(self, "TestBranchCommit", name, puts=len(ops)) as m:
                result = api.commit(branch(name), head, CommitMeta(f"test commit {c}"), ops)
                head = result.hash
                m.commit_hash, m.attempts = str(result.hash), result.attempts
