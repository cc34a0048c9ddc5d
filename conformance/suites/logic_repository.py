"""Repository initialisation and description (the repository starts *not* initialised here)."""

from __future__ import annotations

import datetime

import pytest

from conformance.suites.base import ConformanceSuite
from persist_spi.errors import RefNotFound
from persist_spi.ids import EMPTY_OBJ_ID, random_obj_id
from persist_spi.logic.commit_logic import CommitLogic
from persist_spi.logic.create_commit import CreateCommit
from persist_spi.logic.internal_refs import REF_REFS, REF_REPO
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.logic.repository_logic import RepositoryDescription, RepositoryLogic
from persist_spi.objs import CommitType
from persist_spi.persist import Persist
from persist_spi.references import Reference


class LogicRepositorySuite(ConformanceSuite):
    area = "logic.repository"

    def test_repository_exists_only_after_initialisation(self, persist: Persist) -> None:
        logic = RepositoryLogic(persist)
        assert not logic.repository_exists()
        logic.initialize("foobar")
        assert logic.repository_exists()
        persist.erase()
        assert not logic.repository_exists()
        assert list(persist.scan_all_objects()) == []

    @pytest.mark.parametrize("default_branch", ["main", "master", "some-other-name"])
    def test_initialisation_creates_internal_refs_and_the_default_branch(
        self, persist: Persist, default_branch: str
    ) -> None:
        branch = f"refs/heads/{default_branch}"
        assert persist.fetch_references([REF_REPO, REF_REFS, branch]) == [None, None, None]
        assert list(ReferenceLogic(persist).query_references()) == []
        RepositoryLogic(persist).initialize(default_branch)
        repo, refs_ref, main = persist.fetch_references([REF_REPO, REF_REFS, branch])
        assert main is not None
        assert main.pointer == EMPTY_OBJ_ID
        logic = CommitLogic(persist)
        for internal in (repo, refs_ref):
            assert internal is not None
            assert internal.pointer != EMPTY_OBJ_ID
            head = logic.fetch_commit(internal.pointer)
            assert head is not None
            assert head.commit_type is CommitType.INTERNAL
        listed = [r.name for r in ReferenceLogic(persist).query_references()]
        assert listed == [branch]
        RepositoryLogic(persist).initialize(default_branch)  # a second run changes nothing
        assert persist.fetch_references([REF_REPO, REF_REFS, branch]) == [repo, refs_ref, main]
        assert [r.name for r in ReferenceLogic(persist).query_references()] == listed

    @pytest.mark.parametrize("create_default_branch", [True, False])
    def test_custom_repository_description(self, persist: Persist, create_default_branch: bool) -> None:
        created = datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
        oldest = datetime.datetime(2019, 6, 7, tzinfo=datetime.UTC)
        description = RepositoryDescription(
            "trunk", created, oldest, None, {"owner": "data-team", "tier": "gold"}
        )
        logic = RepositoryLogic(persist)
        logic.initialize("trunk", create_default_branch, description)
        assert logic.fetch_repository_description() == description
        refs = ReferenceLogic(persist)
        if create_default_branch:
            assert refs.get_reference("refs/heads/trunk").pointer == EMPTY_OBJ_ID
        else:
            with pytest.raises(RefNotFound):
                refs.get_reference("refs/heads/trunk")

    def test_description_is_absent_when_int_repo_is_not_usable(self, persist: Persist) -> None:
        logic = RepositoryLogic(persist)
        assert logic.fetch_repository_description() is None
        ref = persist.add_reference(Reference(REF_REPO, EMPTY_OBJ_ID))
        assert logic.fetch_repository_description() is None
        ref = persist.update_reference_pointer(ref, random_obj_id())
        assert logic.fetch_repository_description() is None
        commit = CommitLogic(persist).do_commit(CreateCommit(EMPTY_OBJ_ID, "no description"))
        assert commit is not None
        persist.update_reference_pointer(ref, commit.id)
        assert logic.fetch_repository_description() is None

    def test_default_description_has_equal_creation_and_oldest_times(self, persist: Persist) -> None:
        logic = RepositoryLogic(persist)
        logic.initialize("main")
        description = logic.fetch_repository_description()
        assert description is not None
        assert description.repository_created_time is not None
        assert description.oldest_possible_commit_time == description.repository_created_time
        assert description.default_branch_name == "main"

    def test_updating_the_description_keeps_its_times(self, persist: Persist) -> None:
        logic = RepositoryLogic(persist)
        logic.initialize("main")
        original = logic.fetch_repository_description()
        assert original is not None
        later = datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)
        previous = logic.update_repository_description(
            RepositoryDescription("develop", later, later, None, {"a": "b"})
        )
        assert previous == original
        updated = logic.fetch_repository_description()
        assert updated is not None
        assert (updated.default_branch_name, dict(updated.properties)) == ("develop", {"a": "b"})
        assert updated.repository_created_time == original.repository_created_time
        assert updated.oldest_possible_commit_time == original.oldest_possible_commit_time
