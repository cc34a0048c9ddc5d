"""Repository initialisation (idempotent) and the repository description on ``int/repo``."""

from __future__ import annotations

import contextlib
import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from persist_spi.errors import CorruptData, ObjNotFound, RefAlreadyExists, RefConditionFailed
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.conflicts import CommitConflictError
from persist_spi.logic.create_commit import Add, CreateCommit
from persist_spi.logic.internal_refs import KEY_REPO_DESCRIPTION, REF_REFS, REF_REPO, REFS_HEADS
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.logic.retry import RetryNeeded, commit_retry
from persist_spi.logic.strings import new_string, read_string, update_string_on_ref
from persist_spi.objs import CommitType
from persist_spi.persist import Persist
from persist_spi.references import Reference

_JSON = "application/json"


@dataclass(frozen=True)
class RepositoryDescription:
    default_branch_name: str = "main"
    repository_created_time: datetime.datetime | None = None
    oldest_possible_commit_time: datetime.datetime | None = None
    repository_imported_time: datetime.datetime | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> bytes:
        doc: dict[str, Any] = {
            "repositoryCreatedTime": _iso(self.repository_created_time),
            "oldestPossibleCommitTime": _iso(self.oldest_possible_commit_time),
            "properties": dict(self.properties),
            "defaultBranchName": self.default_branch_name,
        }
        if self.repository_imported_time is not None:
            doc["repositoryImportedTime"] = _iso(self.repository_imported_time)
        return json.dumps(doc, sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> RepositoryDescription:
        """Raises ``ValueError`` when ``raw`` is not a repository description."""
        doc = json.loads(raw)
        try:
            branch = doc["defaultBranchName"]
            if not isinstance(branch, str):
                raise TypeError("defaultBranchName is not a string")
            return cls(
                default_branch_name=branch,
                repository_created_time=_parse(doc.get("repositoryCreatedTime")),
                oldest_possible_commit_time=_parse(doc.get("oldestPossibleCommitTime")),
                repository_imported_time=_parse(doc.get("repositoryImportedTime")),
                properties={str(k): str(v) for k, v in dict(doc.get("properties") or {}).items()},
            )
        except (KeyError, TypeError, AttributeError) as e:
            raise CorruptData(f"Not a repository description: {type(e).__name__}: {e}") from None


def _iso(value: datetime.datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _parse(value: str | None) -> datetime.datetime | None:
    return None if value is None else datetime.datetime.fromisoformat(value)


class RepositoryLogic:
    def __init__(self, persist: Persist) -> None:
        self.persist = persist
        self.commits = CommitLogic(persist)

    def initialize(
        self,
        default_branch: str = "main",
        create_default_branch: bool = True,
        description: RepositoryDescription | None = None,
    ) -> None:
        """Create ``int/refs``, the default branch (at the empty commit) and ``int/repo`` with the
        description. Every step tolerates a previous or concurrent initialisation."""
        self._initialize_internal_ref(REF_REFS, None)
        if create_default_branch:
            with contextlib.suppress(RefAlreadyExists):
                ReferenceLogic(self.persist).create_reference(REFS_HEADS + default_branch, EMPTY_OBJ_ID)
        now = datetime.datetime.now(datetime.UTC)
        desc = description or RepositoryDescription()
        desc = replace(
            desc,
            default_branch_name=default_branch,
            repository_created_time=desc.repository_created_time or now,
            oldest_possible_commit_time=desc.oldest_possible_commit_time
            or desc.repository_created_time
            or now,
        )
        self._initialize_internal_ref(REF_REPO, desc)

    def repository_exists(self) -> bool:
        ref = self.persist.fetch_reference_for_update(REF_REPO)
        if ref is None:
            return False
        try:
            return self.commits.fetch_commit(ref.pointer) is not None
        except ObjNotFound:
            return False

    def fetch_repository_description(self) -> RepositoryDescription | None:
        ref = self.persist.fetch_reference(REF_REPO)
        if ref is None:
            return None
        try:
            head = self.commits.fetch_commit(ref.pointer)
            if head is None:
                return None
            element = self.commits.indexes.build_complete_index(head).get(KEY_REPO_DESCRIPTION)
            if element is None or not element.op.exists or element.op.value is None:
                return None
            return RepositoryDescription.from_json(read_string(self.persist, element.op.value))
        except ObjNotFound:
            return None

    def update_repository_description(self, new: RepositoryDescription) -> RepositoryDescription | None:
        """Replace the description (creation and oldest-commit times are kept); returns the previous."""
        existing = self.fetch_repository_description()
        if existing is None:
            raise RuntimeError("The repository is not initialised: it has no description to update")
        sanitized = replace(
            new,
            repository_created_time=existing.repository_created_time,
            oldest_possible_commit_time=existing.oldest_possible_commit_time,
        )

        def attempt(_: object) -> bytes | None:
            ref = self.persist.fetch_reference_for_update(REF_REPO)
            if ref is None:
                raise RuntimeError(f"Internal reference {REF_REPO} is missing")
            try:
                return update_string_on_ref(
                    self.persist,
                    ref,
                    KEY_REPO_DESCRIPTION,
                    _JSON,
                    sanitized.to_json(),
                    "Update repository description",
                )
            except (RefConditionFailed, CommitConflictError):
                raise RetryNeeded() from None

        previous = commit_retry(self.persist.config, attempt)
        return RepositoryDescription.from_json(previous) if previous is not None else None

    def _initialize_internal_ref(self, name: str, description: RepositoryDescription | None) -> None:
        if self.persist.fetch_reference_for_update(name) is not None:
            return
        additional = []
        adds: tuple[Add, ...] = ()
        if description is not None:
            string = new_string(_JSON, description.to_json())
            additional.append(string)
            adds = (Add(KEY_REPO_DESCRIPTION, 0, string.id),)
        headers = CommitHeaders(
            [
                ("repo.id", self.persist.repository_id),
                ("timestamp", datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")),
            ]
        )
        commit = self.commits.do_commit(
            CreateCommit(
                EMPTY_OBJ_ID,
                f"Initialize reference {name}",
                headers,
                commit_type=CommitType.INTERNAL,
                adds=adds,
            ),
            additional,
        )
        if commit is None:
            raise RuntimeError(f"Hash collision detected while initialising {name}")
        with contextlib.suppress(RefAlreadyExists):
            self.persist.add_reference(Reference(name, commit.id, False, self.commits._now()))
