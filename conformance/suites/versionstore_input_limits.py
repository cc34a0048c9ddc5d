"""Inputs too big for the database are refused with a clear error before anything is written, and
the biggest accepted ones really fit: reference names up to 1024 UTF-8 bytes (database keys),
content keys up to 500 characters, content values up to the database's hard object size limit."""

from __future__ import annotations

import pytest

from conformance.suites.versionstore_base import MAIN, VersionStoreSuite, key, storage_snapshot, table
from persist_spi.errors import ObjTooLarge
from persist_spi.persist import Persist
from persist_spi.references import MAX_REFERENCE_NAME_BYTES
from persist_spi.versionstore import ContentKey, IcebergTable, Put, VersionStore
from persist_spi.versionstore.content import MAX_KEY_LENGTH
from persist_spi.versionstore.refs import branch

#: A four-byte character: names at the limit in bytes, a quarter as long in characters.
WIDE = "\U0001f600"


def _name_of_bytes(size: int) -> str:
    prefix = "refs/heads/"
    room = size - len(prefix)
    return prefix + WIDE * (room // 4) + "x" * (room % 4)


class VersionStoreInputLimitsSuite(VersionStoreSuite):
    area = "versionstore.input-limits"

    def test_longest_reference_name_is_created_listed_and_deleted(self, vs: VersionStore) -> None:
        name = _name_of_bytes(MAX_REFERENCE_NAME_BYTES)
        assert len(name.encode()) == MAX_REFERENCE_NAME_BYTES
        ref = branch(name.removeprefix("refs/heads/"))
        created = vs.create_reference(ref)
        assert vs.reference(ref).hash == created.hash
        assert name in [r.named_ref.full_name for r in vs.list_references()]
        vs.delete_reference(ref, created.hash)
        assert name not in [r.named_ref.full_name for r in vs.list_references()]

    def test_reference_name_above_the_limit_is_refused_before_anything_is_written(
        self, persist: Persist, vs: VersionStore
    ) -> None:
        name = _name_of_bytes(MAX_REFERENCE_NAME_BYTES + 1)
        before = storage_snapshot(persist, vs)
        with pytest.raises(ValueError, match=f"the longest allowed is {MAX_REFERENCE_NAME_BYTES} bytes"):
            vs.create_reference(branch(name.removeprefix("refs/heads/")))
        assert storage_snapshot(persist, vs) == before

    def test_longest_content_key_is_committed_and_read(self, vs: VersionStore) -> None:
        longest = ContentKey.of(WIDE * MAX_KEY_LENGTH)
        self.commit(vs, MAIN, Put(longest, table("wide")))
        assert self.values(vs, MAIN, [str(longest)]) == {str(longest): table("wide")}

    def test_content_key_above_the_limit_is_refused(self) -> None:
        with pytest.raises(ValueError, match=f"max allowed length: {MAX_KEY_LENGTH}"):
            key("x" * (MAX_KEY_LENGTH + 1))

    @pytest.mark.lochkit_requires("hard_object_size_limit")
    def test_content_value_above_the_hard_limit_is_refused_before_anything_is_written(
        self, persist: Persist, vs: VersionStore
    ) -> None:
        self.commit(vs, MAIN, Put(key("small"), table("small")))
        before = storage_snapshot(persist, vs)
        huge = IcebergTable(metadata_location="s3://" + "x" * persist.hard_object_size_limit)
        with pytest.raises(ObjTooLarge, match="content value of key 'huge'"):
            self.commit(vs, MAIN, Put(key("huge"), huge))
        assert storage_snapshot(persist, vs) == before

    @pytest.mark.lochkit_requires("hard_object_size_limit")
    def test_content_value_just_below_the_hard_limit_is_committed(
        self, persist: Persist, vs: VersionStore
    ) -> None:
        size = persist.hard_object_size_limit - 1024
        big = IcebergTable(metadata_location="s3://" + "y" * size)
        self.commit(vs, MAIN, Put(key("big"), big))
        assert vs.get_value(MAIN, key("big")) is not None
