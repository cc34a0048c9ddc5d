"""Ids, hashing primitives, headers, references' history rules and store configuration."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from persist_spi.config import StoreConfig
from persist_spi.hashing import ObjIdHasher
from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.references import PreviousPointer, Reference


def test_empty_obj_id_is_sha256_of_empty() -> None:
    assert str(EMPTY_OBJ_ID) == "2e1cfa82b035c26cbbbdae632cea070514eb8b773f616aaeaf668e2f0be8f10d"


def test_obj_id_text_form() -> None:
    obj_id = random_obj_id()
    assert ObjId.from_hex(str(obj_id)) == obj_id
    with pytest.raises(ValueError, match="odd number"):
        ObjId.from_hex("abc")
    with pytest.raises(ValueError, match="not hex"):
        ObjId.from_hex("zz")
    with pytest.raises(ValueError, match="maximum is 256"):
        ObjId(bytes(257))
    assert ObjId(bytes(256)).serialized_size == 258
    assert obj_id.serialized_size == 33


def test_hasher_uses_little_endian_primitives() -> None:
    def digest(fn: Callable[[ObjIdHasher], object]) -> ObjId:
        h = ObjIdHasher("")
        fn(h)
        return h.generate()

    import hashlib

    assert digest(lambda h: h.put_int(1)) == hashlib.sha256(b"\x01\x00\x00\x00").digest()
    assert digest(lambda h: h.put_long(-1)) == hashlib.sha256(b"\xff" * 8).digest()
    assert digest(lambda h: h.put_char("A")) == hashlib.sha256(b"A\x00").digest()
    u = uuid.UUID("00000000-0000-0001-0000-000000000002")
    assert (
        digest(lambda h: h.put_uuid(u))
        == hashlib.sha256((1).to_bytes(8, "little") + (2).to_bytes(8, "little")).digest()
    )
    assert digest(lambda h: h.put_str(None).put_bytes(None)) == hashlib.sha256(b"").digest()


def test_headers_are_case_insensitive_multi_maps() -> None:
    headers = CommitHeaders([("Author", "a"), ("author", "b"), ("X", "1")])
    assert headers["AUTHOR"] == ("a", "b")
    assert headers.first("x") == "1"
    assert "author" in headers
    assert headers == CommitHeaders({"author": ["a", "b"], "x": ["1"]})


def _ref(history: tuple[PreviousPointer, ...] = ()) -> Reference:
    return Reference("refs/heads/r", random_obj_id(), previous_pointers=history)


def test_new_pointer_records_the_old_one_with_a_timestamp() -> None:
    ref = _ref()
    moved = ref.for_new_pointer(random_obj_id(), StoreConfig(), 1_000_000)
    assert moved.previous_pointers == (PreviousPointer(ref.pointer, 1_000_000),)
    same = moved.for_new_pointer(moved.pointer, StoreConfig(), 2_000_000)
    assert same.previous_pointers == moved.previous_pointers


def test_history_is_bounded_by_count_and_age() -> None:
    now = 10_000_000_000
    history = tuple(PreviousPointer(random_obj_id(), now - i * 1_000_000) for i in range(30))
    kept = _ref(history).for_new_pointer(random_obj_id(), StoreConfig(ref_previous_head_count=5), now)
    assert len(kept.previous_pointers) == 5
    young = _ref(history).for_new_pointer(
        random_obj_id(), StoreConfig(ref_previous_head_time_span_seconds=3), now
    )
    assert [p.timestamp_micros for p in young.previous_pointers] == [
        now,
        now,
        now - 1_000_000,
        now - 2_000_000,
        now - 3_000_000,
    ]


def test_store_config_from_nessie_style_keys() -> None:
    config = StoreConfig.from_mapping({"max-incremental-index-size": "1024", "namespace-validation": "false"})
    assert (config.max_incremental_index_size, config.namespace_validation) == (1024, False)
    with pytest.raises(ValueError, match="Unknown store config 'nope'"):
        StoreConfig.from_mapping({"nope": 1})
    with pytest.raises(ValueError, match="must be an integer"):
        StoreConfig.from_mapping({"commit-retries": "many"})
    with pytest.raises(ValueError, match="must not be negative"):
        StoreConfig(commit_timeout_millis=-1)


def test_store_config_defaults_are_nessies() -> None:
    """Every setting, by its Nessie config key, at Nessie's default."""
    import dataclasses

    from persist_spi.config import _kebab

    defaults = {_kebab(f.name): getattr(StoreConfig(), f.name) for f in dataclasses.fields(StoreConfig)}
    # lochkit's own settings (commit policies), which Nessie does not have:
    assert {k: defaults.pop(k) for k in ("commit-policy", "commit-lease-millis", "group-max-commits")} == {
        "commit-policy": "nessie",
        "commit-lease-millis": 1000,
        "group-max-commits": 64,
    }
    assert defaults == {
        "repository-id": "",
        "parents-per-commit": 20,
        "commit-timeout-millis": 5000,
        "commit-retries": 2**31 - 1,
        "retry-initial-sleep-millis-lower": 5,
        "retry-initial-sleep-millis-upper": 25,
        "retry-max-sleep-millis": 250,
        "max-incremental-index-size": 51200,
        "max-serialized-index-size": 204800,
        "max-reference-stripes-per-commit": 50,
        "assumed-wall-clock-drift-micros": 5_000_000,
        "namespace-validation": True,
        "ref-previous-head-count": 20,
        "ref-previous-head-time-span-seconds": 300,
    }
    assert StoreConfig.from_mapping({"max-incremental-index-size": 1024}).max_incremental_index_size == 1024
