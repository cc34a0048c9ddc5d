"""One object of every kind the contract must store: standard types, custom types (plain and
updateable), JSON-like values, big ones and unknown ("generic") types. Each sample has a *changed*
variant with the same id and different content, for the upsert tests.

Importing this module registers the custom test types.
"""

from __future__ import annotations

import dataclasses
import random
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from persist_spi.headers import CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.keys import key
from persist_spi.objs import (
    CommitObj,
    CommitType,
    Compression,
    ContentValueObj,
    GenericObj,
    IndexObj,
    IndexSegmentsObj,
    IndexStripe,
    Obj,
    RefObj,
    StringObj,
    TagObj,
    UniqueIdObj,
    UpdateableObj,
    content_value,
    index_obj,
    index_segments,
    ref_obj,
    string_data,
    tag_obj,
    unique_id_for_uuid,
)
from persist_spi.objtypes import register_obj_type


@register_obj_type("LOCHKIT_TEST_SIMPLE", "lt-simple")
@dataclass(frozen=True, slots=True, kw_only=True)
class SimpleTestObj(Obj):
    parent: ObjId | None = None
    text: str | None = None
    number: int = 0
    numbers: tuple[int, ...] = ()
    flags: Mapping[str, str] = field(default_factory=dict)
    blob: bytes | None = None


@register_obj_type("LOCHKIT_TEST_ANOTHER", "lt-another")
@dataclass(frozen=True, slots=True, kw_only=True)
class AnotherTestObj(Obj):
    parent: ObjId | None = None
    text: str | None = None
    another: str | None = None


@register_obj_type("LOCHKIT_TEST_VERSIONED", "lt-versioned")
@dataclass(frozen=True, slots=True, kw_only=True)
class VersionedTestObj(UpdateableObj):
    some_value: str | None = None
    other_value: str | None = None


@register_obj_type("LOCHKIT_TEST_VERSIONED2", "lt-versioned2")
@dataclass(frozen=True, slots=True, kw_only=True)
class OtherVersionedTestObj(UpdateableObj):
    some_value: str | None = None


@register_obj_type("LOCHKIT_TEST_JSON", "lt-json")
@dataclass(frozen=True, slots=True, kw_only=True)
class JsonTestObj(Obj):
    """Holds an arbitrary JSON-like value (scalars, lists as tuples, maps, nulls)."""

    value: Any = None


def _rand_text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 äöüπ") for _ in range(n))


def _uuid_str(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _rid(rng: random.Random) -> ObjId:
    return ObjId(rng.randbytes(32))


def standard_samples(rng: random.Random) -> list[Obj]:
    values: list[Obj] = [
        content_value(_uuid_str(rng), payload, rng.randbytes(size))
        for payload, size in ((1, 40), (127, 1), (11, 0), (33, 300), (42, 5000))
    ]
    stripes = tuple(IndexStripe(key(f"ns{i}", "a"), key(f"ns{i}", "z"), _rid(rng)) for i in range(3))
    unicode_stripes = (IndexStripe(key("äöü", "π"), key("日本", "語"), _rid(rng)),)
    commit_full = CommitObj(
        id=_rid(rng),
        created=1_700_000_000_000_123,
        seq=42,
        tail=tuple(_rid(rng) for _ in range(5)),
        secondary_parents=tuple(_rid(rng) for _ in range(5)),
        headers=CommitHeaders([("author", "alice"), ("author", "bob"), ("Date", "2026-11-22T10:00:00Z")]),
        message="A fully populated commit",
        incremental_index=rng.randbytes(200),
        reference_index=None,
        reference_index_stripes=stripes,
        incomplete_index=False,
        commit_type=CommitType.INTERNAL,
    )
    commit_minimal = CommitObj(
        id=_rid(rng), seq=1, tail=(EMPTY_OBJ_ID,), incremental_index=b"\x02\x00", incomplete_index=True
    )
    commit_with_segments = CommitObj(
        id=_rid(rng), seq=7, tail=(_rid(rng),), reference_index=_rid(rng), message="segments"
    )
    return [
        *values,
        index_segments(stripes),
        index_segments(unicode_stripes),
        index_obj(b"\x02\x00"),
        index_obj(rng.randbytes(700)),
        tag_obj("a tag message", CommitHeaders({"tagger": ("me",), "x": ("1", "2")}), b"signature"),
        tag_obj(None, None, None),
        commit_full,
        commit_minimal,
        commit_with_segments,
        string_data("text/plain", Compression.NONE, None, (), b""),
        string_data(
            "application/json",
            Compression.GZIP,
            "file.json",
            tuple(_rid(rng) for _ in range(5)),
            rng.randbytes(100),
        ),
        ref_obj("refs/heads/main", EMPTY_OBJ_ID, 0, None),
        ref_obj("refs/tags/v1", _rid(rng), 1_700_000_000_000_000, _rid(rng)),
        unique_id_for_uuid("content-id", uuid.UUID(int=rng.getrandbits(128))),
    ]


def custom_samples(rng: random.Random) -> list[Obj]:
    big_text = _rand_text(rng, 12 * 1024)
    return [
        SimpleTestObj(id=_rid(rng)),
        SimpleTestObj(
            id=_rid(rng),
            parent=_rid(rng),
            text="hello",
            number=42,
            numbers=(1, 2, 3),
            flags={"a": "b"},
            blob=b"\x00\x01",
        ),
        SimpleTestObj(
            id=_rid(rng),
            text=big_text,
            numbers=tuple(range(500)),
            flags={f"k{i}": _rand_text(rng, 20) for i in range(200)},
        ),
        AnotherTestObj(id=_rid(rng)),
        AnotherTestObj(id=_rid(rng), parent=_rid(rng), text="text", another="another"),
        AnotherTestObj(id=_rid(rng), text=_rand_text(rng, 100)),
        VersionedTestObj(id=_rid(rng), version_token="v1", some_value="some", other_value="other"),
        OtherVersionedTestObj(id=_rid(rng), version_token="t1", some_value="x"),
    ]


def json_samples(rng: random.Random) -> list[Obj]:
    values: list[Any] = [
        "a string",
        42,
        -(2**62),
        3.5,
        True,
        False,
        None,
        "",
        0,
        ("a", "list", 1, 2.0),
        (),
        {"a": 1, "b": ("x", None)},
        {},
        {"nested": {"deeper": {"deepest": ("v",)}}},
        tuple({"id": i, "name": f"bean-{i}"} for i in range(20)),
        {"big": _rand_text(rng, 20_000)},
        "ünïcödé ✓ 日本語 \U0001f600",
    ]
    return [JsonTestObj(id=_rid(rng), value=v) for v in values]


def generic_samples(rng: random.Random) -> list[Obj]:
    return [
        GenericObj(
            id=_rid(rng),
            type_name=f"genericType_{uuid.UUID(int=rng.getrandbits(128)).hex}",
            attributes={"name": "x", "numbers": [1, 2, 3], "nested": {"a": None}},
        ),
        GenericObj(
            id=_rid(rng), type_name="genericVersioned", version_token="gv1", attributes={"value": "v"}
        ),
    ]


def all_samples(seed: int = 4711) -> list[Obj]:
    """Every sample, deterministic for a seed (so parametrised test ids are stable)."""
    rng = random.Random(seed)
    return [*standard_samples(rng), *custom_samples(rng), *json_samples(rng), *generic_samples(rng)]


def sample_id(obj: Obj) -> str:
    """A readable pytest id for a sample."""
    return f"{obj.obj_type.name.lower()}-{str(obj.id)[:8]}"


def changed(obj: Obj) -> Obj:
    """A different object under the same id (what only an upsert may write)."""
    if isinstance(obj, CommitObj):
        return dataclasses.replace(obj, message=obj.message + " changed", seq=obj.seq + 1)
    if isinstance(obj, ContentValueObj):
        return dataclasses.replace(obj, data=obj.data + b"changed")
    if isinstance(obj, IndexObj):
        return dataclasses.replace(obj, index=obj.index + b"\x00")
    if isinstance(obj, IndexSegmentsObj):
        return dataclasses.replace(
            obj, stripes=obj.stripes[:-1] or (IndexStripe(key("x"), key("y"), random_obj_id()),)
        )
    if isinstance(obj, TagObj):
        return dataclasses.replace(obj, message=(obj.message or "") + " changed")
    if isinstance(obj, StringObj):
        return dataclasses.replace(obj, text=obj.text + b"changed")
    if isinstance(obj, RefObj):
        return dataclasses.replace(obj, created_at_micros=obj.created_at_micros + 1)
    if isinstance(obj, UniqueIdObj):
        return dataclasses.replace(obj, space=obj.space + "-changed")
    if isinstance(obj, SimpleTestObj):
        return dataclasses.replace(obj, text=(obj.text or "") + " changed")
    if isinstance(obj, AnotherTestObj):
        return dataclasses.replace(obj, another=(obj.another or "") + " changed")
    if isinstance(obj, VersionedTestObj):
        return dataclasses.replace(obj, some_value="changed", version_token=obj.version_token + "-2")
    if isinstance(obj, OtherVersionedTestObj):
        return dataclasses.replace(obj, some_value="changed", version_token=obj.version_token + "-2")
    if isinstance(obj, JsonTestObj):
        return dataclasses.replace(obj, value={"changed": obj.value})
    if isinstance(obj, GenericObj):
        return dataclasses.replace(obj, attributes={**obj.attributes, "changed": True})
    raise TypeError(f"no changed variant for {type(obj).__name__}")
