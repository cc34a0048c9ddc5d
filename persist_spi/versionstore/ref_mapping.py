"""Branches, tags and commit hashes as the version store's API names them, mapped to reference
rows and commits, with the API's errors for what does not exist."""

from __future__ import annotations

from collections.abc import Sequence

from persist_spi.errors import InputError, ObjNotFound, RefNotFound
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.objs import CommitObj
from persist_spi.references import Reference
from persist_spi.versionstore.api import RefOrHash
from persist_spi.versionstore.commit_specs import RelativeSpec, resolve_relative
from persist_spi.versionstore.errors import ReferenceNotFoundError
from persist_spi.versionstore.meta import commit_time_of
from persist_spi.versionstore.refs import NamedRef, ReferenceInfo, from_full_name


def reference_not_found(name: str) -> ReferenceNotFoundError:
    return ReferenceNotFoundError(f"Named reference '{name}' not found")


def reference_info(row: Reference) -> ReferenceInfo:
    """A branch's or tag's row as the API shows it."""
    named = from_full_name(row.name)
    if named is None:
        raise ValueError(f"{row.name} is neither a branch nor a tag")
    return ReferenceInfo(named, row.pointer, row.created_at_micros, row.extended_info_obj)


class RefMapping:
    """Resolves named references and hashes to rows and commits."""

    def __init__(self, refs: ReferenceLogic, commits: CommitLogic) -> None:
        self.refs = refs
        self.commits = commits

    def row(self, ref: NamedRef, *, for_update: bool = False) -> Reference:
        """The reference's row; ``for_update`` reads it from the database, past every cache."""
        try:
            if for_update:
                return self.refs.get_reference_for_update(ref.full_name)
            return self.refs.get_reference(ref.full_name)
        except RefNotFound:
            raise reference_not_found(ref.name) from None

    def check_commit_exists(self, commit_id: ObjId) -> None:
        if commit_id == EMPTY_OBJ_ID:
            return
        try:
            self.commits.fetch_commit(commit_id)
        except ObjNotFound:
            raise ReferenceNotFoundError(f"Commit '{commit_id}' not found") from None

    def find_in_history(self, ref: NamedRef, head: ObjId, wanted: ObjId) -> None:
        """``ReferenceNotFoundError`` unless ``wanted`` is in the first-parent history of ``head``."""
        if wanted == EMPTY_OBJ_ID:
            return
        for commit_id in self.commits.commit_id_log(head):
            if commit_id == wanted:
                return
        raise ReferenceNotFoundError(f"Could not find commit '{wanted}' in reference '{ref.name}'.")

    def hash_on_reference(
        self, ref: NamedRef | None, hash_: ObjId | None, relative: Sequence[RelativeSpec] = ()
    ) -> ObjId:
        """The commit a read addresses: the head of ``ref``, a commit in its history, or (without
        a ref) a detached commit that must exist; then ``relative`` lookups from there (see
        :mod:`persist_spi.versionstore.commit_specs`)."""
        if ref is None:
            if hash_ is None:
                raise InputError("Give a reference, a hash, or both")
            self.check_commit_exists(hash_)
            start = hash_
        else:
            head = self.row(ref).pointer
            start = head if hash_ is None else hash_
            if start != head:
                self.find_in_history(ref, head, start)
        if not relative:
            return start
        try:
            return resolve_relative(start, relative, self._existing_commit, commit_time_of)
        except ObjNotFound as e:
            raise ReferenceNotFoundError(f"Commit '{e.obj_ids[0]}' not found") from None

    def resolve(self, where: RefOrHash) -> ObjId:
        """The commit a reference's head or a hash names."""
        if isinstance(where, NamedRef):
            return self.hash_on_reference(where, None)
        return self.hash_on_reference(None, where)

    def _existing_commit(self, commit_id: ObjId) -> CommitObj:
        return self.commits.persist.fetch_as(commit_id, CommitObj)
