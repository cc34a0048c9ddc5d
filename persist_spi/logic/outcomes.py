"""Resolving an unknown outcome: did a compare-and-swap that lost its answer take effect?

When the database cannot say whether a reference moved (a timeout, a broken connection), the head
read afterwards may already be past our commit, because other writers committed on top of it.
Looking only at the head would then call a landed commit lost, and the retry would apply its
change a second time (or fail on it). A commit id names one commit for good, so the question is
whether it is in the reference's first-parent history; commit sequence numbers bound the walk to
the commits made since.
"""

from __future__ import annotations

from persist_spi.errors import ObjNotFound
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.logic.commit_logic import CommitLogic


def commit_in_history(commits: CommitLogic, head: ObjId, commit_id: ObjId) -> bool:
    """True if ``commit_id`` is ``head`` or one of its first-parent ancestors."""
    if head == commit_id:
        return True
    if head == EMPTY_OBJ_ID or commit_id == EMPTY_OBJ_ID:
        return False
    try:
        target = commits.fetch_commit(commit_id)
    except ObjNotFound:
        return False
    if target is None:
        return False
    for commit in commits.commit_log(head):
        if commit.seq < target.seq:
            return False
        if commit.id == commit_id:
            return True
    return False
