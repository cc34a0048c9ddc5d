"""Nessie's CreateManyBranchesSimulation: the cost of creating references.

Each user reads the default branch's head (not recorded), then repeats **Create branch**
``branch-<user>-<n>`` from it, ``--sim-branches`` times (paced by ``--sim-rate``)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from locust import task

from loadgen.scenarios.run import measure
from loadgen.scenarios.users import NessieUser
from persist_spi.errors import InputError
from persist_spi.versionstore.refs import branch


@dataclass(frozen=True)
class CreateManyBranchesOptions:
    branches: int = 100
    rate: float = 0.0


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument(
        "--sim-branches", type=int, default=100, help="create-many-branches: branches per user (default 100)"
    )


def options(args: argparse.Namespace) -> CreateManyBranchesOptions:
    if args.sim_branches < 1:
        raise InputError("--sim-branches must be at least 1")
    return CreateManyBranchesOptions(args.sim_branches, args.sim_rate)


class CreateManyBranchesUser(NessieUser):
    def on_start(self) -> None:
        super().on_start()
        self.pace(self.scenario.options.rate)
        api = self.scenario.api
        self.source = api.reference(branch(api.default_branch())).hash
        self.created = 0

    @task
    def create_branch(self) -> None:
        if self.finished:
            return
        if self.created >= self.scenario.options.branches:
            self.finish()
            return
        name = f"branch-{self.user_id}-{self.created}"
        with measure(self, "Create branch", name) as m:
            m.commit_hash = str(self.scenario.api.create_reference(branch(name), self.source).hash)
        self.created += 1
