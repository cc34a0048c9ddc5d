"""How lochkit's rows become DynamoDB items, keys and conditions (DynamoDB has no statements: the
adapter sends these as the parts of its requests), and the row keys that keep repositories apart.

* key ``k`` = ``"<len(repo)>:<repo>:"`` followed by the ref name or the object id in hex. The
  length makes the repository part unambiguous, so ids such as ``a`` and ``a:b`` never mix, and a
  repository's keys share a prefix that ``begins_with`` filters can use.
* refs items: ``p`` pointer (B), ``d`` deleted (BOOL), ``c`` created µs (N), ``e`` extended info
  (B, absent when None), ``h`` previous pointers (B).
* objs items: ``y`` type code (S), ``z`` referenced µs (N), ``V`` version token (S, absent when
  None), ``v`` serialised object (B).
"""

from __future__ import annotations

from typing import Any

from backends.dynamodb.capabilities import DYNAMODB_ITEM_LIMIT
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import ObjTooLarge
from persist_spi.ids import ObjId

Item = dict[str, Any]


def repo_prefix(repo: str) -> str:
    return f"{len(repo)}:{repo}:"


def repo_of_key(key: str) -> str | None:
    """The repository id of a row key, or None for keys lochkit does not own (the schema item)."""
    length, sep, rest = key.partition(":")
    if not sep or not length.isdigit() or len(rest) <= int(length) or rest[int(length)] != ":":
        return None
    return rest[: int(length)]


def key_of(key: str) -> Item:
    return {"k": {"S": key}}


def ref_item(prefix: str, row: RefRow) -> Item:
    item: Item = {
        "k": {"S": prefix + row.name},
        "p": {"B": row.pointer},
        "d": {"BOOL": row.deleted},
        "c": {"N": str(row.created_at_micros)},
        "h": {"B": row.previous_pointers},
    }
    if row.extended_info is not None:
        item["e"] = {"B": row.extended_info}
    return item


def ref_row(name: str, item: Item) -> RefRow:
    extended = item.get("e")
    return RefRow(
        name,
        bytes(item["p"]["B"]),
        bool(item["d"]["BOOL"]),
        int(item["c"]["N"]),
        None if extended is None else bytes(extended["B"]),
        bytes(item["h"]["B"]),
    )


def ref_condition(expected: RefRow) -> tuple[str, Item]:
    """The compare-and-swap condition: every field of ``RefRow.same_condition``. Comparisons with a
    missing attribute are false, so the condition also requires the item to exist."""
    values: Item = {
        ":p": {"B": expected.pointer},
        ":d": {"BOOL": expected.deleted},
        ":c": {"N": str(expected.created_at_micros)},
    }
    condition = "p = :p AND d = :d AND c = :c AND "
    if expected.extended_info is None:
        condition += "attribute_not_exists(e)"
    else:
        condition += "e = :e"
        values[":e"] = {"B": expected.extended_info}
    return condition, values


def obj_item(prefix: str, row: ObjRow) -> Item:
    item: Item = {
        "k": {"S": prefix + row.obj_id.hex()},
        "y": {"S": row.obj_type},
        "z": {"N": str(row.referenced)},
        "v": {"B": row.data},
    }
    if row.version_token is not None:
        item["V"] = {"S": row.version_token}
    return item


def obj_row(obj_id: bytes, item: Item) -> ObjRow:
    token = item.get("V")
    return ObjRow(
        obj_id,
        item["y"]["S"],
        None if token is None else token["S"],
        bytes(item["v"]["B"]),
        int(item["z"]["N"]),
    )


def prefix_filter(repos: set[str]) -> Item:
    """A server-side filter for erasing a few repositories (it cuts transfer, not read cost)."""
    if len(repos) > 20:
        return {}
    names = [f":r{i}" for i in range(len(repos))]
    values = {n: {"S": repo_prefix(r)} for n, r in zip(names, sorted(repos), strict=True)}
    condition = " OR ".join(f"begins_with(k, {n})" for n in names)
    return {"FilterExpression": condition, "ExpressionAttributeValues": values}


def too_large(row: ObjRow) -> ObjTooLarge:
    """DynamoDB refused the item: report the item's size (names and key included) against 400 KiB."""
    size = sum(len(name) + _value_size(value) for name, value in obj_item("", row).items())
    return ObjTooLarge(size, DYNAMODB_ITEM_LIMIT, ObjId(row.obj_id), "DynamoDB item of object")


def _value_size(value: Item) -> int:
    raw = next(iter(value.values()))
    return len(raw) if isinstance(raw, bytes) else len(str(raw).encode("utf-8"))
