"""Nessie's four perftest simulations as locust scenarios (see ``docs/scenarios.md``).

Each scenario is a module with its options (``add_arguments``, ``options``), an optional ``setup``
run once before the users start (on the master in distributed mode), and its locust users. They
drive a :class:`~loadgen.targets.Target`, so the same scenario runs in-process over any backend
and against a Nessie server. ``lochkit scenario NAME`` starts them (``loadgen/scenarios/locustfile.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Scenario:
    name: str
    module: str
    users: tuple[str, ...]
    #: The action whose successes count as the run's commits in ``run.json``.
    commit_action: str
    #: Nessie's duration when none is given (its ``sim.duration.seconds``/``sim.duration``), as a
    #: locust ``-t`` value; None: the users' counts or locust's own default decide.
    default_run_time: str | None = None


SCENARIOS: Final = {
    s.name: s
    for s in (
        Scenario("commit-to-branch", "loadgen.scenarios.commit_to_branch", ("CommitToBranchUser",), "Commit"),
        Scenario(
            "create-many-branches",
            "loadgen.scenarios.create_many_branches",
            ("CreateManyBranchesUser",),
            "Create branch",
        ),
        Scenario(
            "key-list-spilling",
            "loadgen.scenarios.key_list_spilling",
            ("KeyListSpillingUser",),
            "TestBranchCommit",
            default_run_time="60s",
        ),
        Scenario(
            "mixed-workloads",
            "loadgen.scenarios.mixed_workloads",
            ("MixedWriter", "MixedReader", "MixedUiUser"),
            "Update table / commit",
            default_run_time="20s",
        ),
    )
}
