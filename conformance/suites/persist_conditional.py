"""Conditional update and delete of updateable objects (compare-and-swap on the version token)."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.samples import OtherVersionedTestObj, VersionedTestObj
from conformance.suites.base import ConformanceSuite
from persist_spi.errors import ObjNotFound
from persist_spi.ids import random_obj_id
from persist_spi.objs import content_value
from persist_spi.persist import Persist


def _versions() -> tuple[VersionedTestObj, VersionedTestObj, VersionedTestObj]:
    v1 = VersionedTestObj(id=random_obj_id(), version_token="1", some_value="one", other_value="x")
    return (
        v1,
        dataclasses.replace(v1, version_token="2", some_value="two"),
        dataclasses.replace(v1, version_token="3", some_value="three"),
    )


class PersistConditionalSuite(ConformanceSuite):
    area = "persist.conditional"

    def test_conditional_update_rejects_invalid_arguments(self, persist: Persist) -> None:
        v1, v2, _ = _versions()
        with pytest.raises(ValueError, match="version token"):
            persist.update_conditional(v1, dataclasses.replace(v1, some_value="same token"))
        with pytest.raises(ValueError, match="keep the id"):
            persist.update_conditional(v1, dataclasses.replace(v2, id=random_obj_id()))
        with pytest.raises(ValueError, match="keep the type"):
            persist.update_conditional(v1, OtherVersionedTestObj(id=v1.id, version_token="9"))
        with pytest.raises(ValueError, match="no version token"):
            persist.update_conditional(content_value("c", 1, b""), content_value("c", 1, b""))

    def test_conditional_update_applies_only_on_the_expected_version(self, persist: Persist) -> None:
        v1, v2, v3 = _versions()
        assert persist.update_conditional(v1, v2) is False  # nothing stored yet
        with pytest.raises(ObjNotFound):
            persist.fetch_obj(v1.id)
        assert persist.store_obj(v1) is True
        assert persist.update_conditional(v3, v2) is False
        assert persist.fetch_obj(v1.id) == v1
        assert persist.update_conditional(v1, v2) is True
        assert persist.fetch_obj(v1.id) == v2
        assert persist.update_conditional(v1, v2) is False
        assert persist.fetch_obj(v1.id) == v2
        assert persist.update_conditional(v2, v3) is True
        assert persist.fetch_obj(v1.id) == v3

    def test_conditional_update_fails_when_another_type_is_stored(self, persist: Persist) -> None:
        v1, v2, _ = _versions()
        other = OtherVersionedTestObj(id=v1.id, version_token=v1.version_token, some_value="other")
        assert persist.store_obj(other) is True
        assert persist.update_conditional(v1, v2) is False
        assert persist.fetch_obj(v1.id) == other

    def test_conditional_delete_applies_only_on_the_expected_version(self, persist: Persist) -> None:
        v1, v2, _ = _versions()
        assert persist.delete_conditional(v1) is False
        assert persist.store_obj(v1) is True
        assert persist.delete_conditional(v2) is False
        assert persist.fetch_obj(v1.id) == v1
        assert persist.delete_conditional(v1) is True
        with pytest.raises(ObjNotFound):
            persist.fetch_obj(v1.id)
        assert persist.store_obj(v1) is True
        assert persist.fetch_obj(v1.id) == v1

    def test_conditional_delete_fails_when_another_type_is_stored(self, persist: Persist) -> None:
        v1, _, _ = _versions()
        other = OtherVersionedTestObj(id=v1.id, version_token=v1.version_token)
        assert persist.store_obj(other) is True
        assert persist.delete_conditional(v1) is False
        assert persist.fetch_obj(v1.id) == other
        persist.delete_obj(v1.id)
        assert persist.store_obj(v1) is True
        assert persist.delete_conditional(other) is False
        assert persist.fetch_obj(v1.id) == v1
