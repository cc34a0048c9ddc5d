"""Commit policies: how a version-store commit lands on its branch.

======================= ==================================================================
name                    what it does
======================= ==================================================================
``nessie`` (default)    Nessie's bounded optimistic retry: a random, doubling sleep between
                        attempts, 5 s budget
``immediate``           retry a lost race at once, without sleeping (the worst case)
``fair``                the writer of this process that lost most races goes first; the
                        others wait for it
``coordinated``         one commit at a time per branch: in arrival order inside a process,
                        in ticket order across processes through a commit-target lease kept in
                        the database (``int/commit-lease/...``)
``group``               commits queued for one branch in a process become a chain of separate
                        commits landing with one compare-and-swap
======================= ==================================================================

Choose one per store, ``VersionStore(persist, policy=CoordinatedPolicy())``, or by the store
config's ``commit-policy``. Every policy ends in the branch's compare-and-swap, so none can lose or
duplicate an acknowledged commit; they differ in who attempts when. ``docs/commit-policies.md``
has the details and the measured effects.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

from persist_spi.errors import InputError
from persist_spi.persist import Persist
from persist_spi.versionstore.policies.base import (
    CommitPolicy,
    CommitRequest,
    Committer,
    PerPersist,
    with_retries,
)
from persist_spi.versionstore.policies.coordinated import CoordinatedPolicy
from persist_spi.versionstore.policies.fair import FairPolicy
from persist_spi.versionstore.policies.group import GroupPolicy
from persist_spi.versionstore.policies.optimistic import ImmediatePolicy, NessiePolicy

POLICIES: Final[dict[str, Callable[[], CommitPolicy]]] = {
    NessiePolicy.NAME: NessiePolicy,
    ImmediatePolicy.NAME: ImmediatePolicy,
    FairPolicy.NAME: FairPolicy,
    CoordinatedPolicy.NAME: CoordinatedPolicy,
    GroupPolicy.NAME: GroupPolicy,
}
POLICY_NAMES: Final = tuple(POLICIES)


def commit_policy(name: str) -> CommitPolicy:
    """A new policy object by name; ValueError naming the known ones otherwise."""
    factory = POLICIES.get(name)
    if factory is None:
        raise InputError(f"Unknown commit policy '{name}'; known policies: {', '.join(POLICY_NAMES)}")
    return factory()


_shared: PerPersist[dict[str, CommitPolicy]] = PerPersist(lambda _: {})
_shared_lock = threading.Lock()


def shared_policy(persist: Persist, name: str) -> CommitPolicy:
    """The one policy object of that name for ``persist``: stores built over the same Persist
    without an explicit policy coordinate with each other."""
    with _shared_lock:
        by_name = _shared(persist)
        policy = by_name.get(name)
        if policy is None:
            policy = by_name[name] = commit_policy(name)
        return policy


__all__ = [
    "POLICIES",
    "POLICY_NAMES",
    "CommitPolicy",
    "CommitRequest",
    "Committer",
    "CoordinatedPolicy",
    "FairPolicy",
    "GroupPolicy",
    "ImmediatePolicy",
    "NessiePolicy",
    "commit_policy",
    "shared_policy",
    "with_retries",
]
