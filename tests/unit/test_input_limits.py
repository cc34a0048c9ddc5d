"""Limits on what users may name: checked before anything is written (the conformance suite
versionstore.input-limits proves the biggest accepted inputs fit every database)."""

from __future__ import annotations

import pytest

from persist_spi.config import MAX_REPOSITORY_ID_BYTES, StoreConfig
from persist_spi.references import MAX_REFERENCE_NAME_BYTES, check_reference_name


def test_reference_names_up_to_the_limit_pass() -> None:
    check_reference_name("refs/heads/" + "x" * (MAX_REFERENCE_NAME_BYTES - 11))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "must not be empty"),
        ("refs/heads/" + "é" * MAX_REFERENCE_NAME_BYTES, "bytes long in UTF-8; the longest allowed is 1024"),
        ("refs/heads/\ud800", "unpaired surrogate"),
    ],
)
def test_reference_names_no_database_can_hold_are_refused(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_reference_name(name)


def test_repository_ids_are_limited() -> None:
    assert StoreConfig(repository_id="r" * MAX_REPOSITORY_ID_BYTES).repository_id
    with pytest.raises(ValueError, match="'repository-id' is 257 bytes long"):
        StoreConfig(repository_id="r" * (MAX_REPOSITORY_ID_BYTES + 1))
    with pytest.raises(ValueError, match="must be a string"):
        StoreConfig(repository_id=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'repository-id' is"):
        StoreConfig.from_mapping({"repository-id": "é" * 200})
