"""Choosing the commit policy of a load command's target (``--policy``).

In-process, the policy is the version store's own (:mod:`persist_spi.versionstore.policies`). A
Nessie server retries commits itself, invisibly to its clients, so over REST only two policies
mean something:

- ``nessie``: the server's own bounded retries, as configured on the server;
- ``coordinated``: this client process sends one commit per branch at a time, in arrival order (the
  design's in-server coordination, moved into the client; other client processes still race).

``immediate``, ``fair`` and ``group`` change lochkit's own retry loop or build commit chains in the
store, which a REST client cannot do; asking for them over REST is an error that says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from loadgen.targets.target import Target
from persist_spi.errors import InputError
from persist_spi.ids import ObjId
from persist_spi.versionstore.api import Validator, VersionStoreApi
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Operation
from persist_spi.versionstore.policies import POLICY_NAMES, commit_policy
from persist_spi.versionstore.policies.coordinated import branch_queues
from persist_spi.versionstore.refs import NamedRef
from persist_spi.versionstore.results import CommitResult
from persist_spi.versionstore.store import VersionStore

#: What each policy means against a Nessie server.
REST_POLICIES: Final = {
    "nessie": "the server's own bounded retries",
    "coordinated": "one commit per branch at a time from this client process; the server still retries",
}


class ClientCoordinated:
    """A :class:`VersionStoreApi` whose commits to one branch go out one at a time, in arrival
    order; every other call passes straight through."""

    def __init__(self, api: VersionStoreApi) -> None:
        self._api = api
        self._queues = branch_queues()

    def commit(
        self,
        branch: NamedRef,
        expected_hash: ObjId | None,
        meta: CommitMeta,
        operations: Sequence[Operation],
        validator: Validator | None = None,
    ) -> CommitResult:
        with self._queues(branch.full_name).turn():
            return self._api.commit(branch, expected_hash, meta, operations, validator)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)


def default_policy(target: Target) -> str:
    """The policy a target commits with when none is asked for: in-process, the version store's
    config (``nessie`` unless the store config says otherwise); over REST, the server's own
    retries."""
    if isinstance(target.api, VersionStore):
        return target.api.persist.config.commit_policy
    return "nessie"


def rest_policy_problem(name: str | None) -> str | None:
    """Why ``--policy name`` cannot be used against a Nessie server (None: it can; no name means
    the server's own retries). A command can ask before it starts or reaches a server."""
    if name is None or name in REST_POLICIES:
        return None
    return (
        f"--policy {name} does not apply to a Nessie server: it changes lochkit's own retry loop "
        f"or commit building, and the server retries commits itself. Over REST use "
        + " or ".join(f"'{n}' ({why})" for n, why in REST_POLICIES.items())
    )


def apply_policy(target: Target, name: str | None) -> str:
    """Give ``target`` the commit policy ``name`` (None: its default, see :func:`default_policy`)
    and answer the name applied; ValueError when it does not apply there."""
    if name is None:
        name = default_policy(target)
    if name not in POLICY_NAMES:
        raise InputError(f"--policy {name}: unknown; choose one of {', '.join(POLICY_NAMES)}")
    if isinstance(target.api, VersionStore):
        target.api.policy = commit_policy(name)
        return name
    problem = rest_policy_problem(name)
    if problem is not None:
        raise InputError(problem)
    if name == "coordinated":
        target.api = ClientCoordinated(target.api)
    return name
