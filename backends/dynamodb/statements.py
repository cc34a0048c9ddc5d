"""How lochkit's rows become DynamoDB items, keys and conditions (DynamoDB has no statements: the
adapter sends these as the parts of its requests), and the row keys that keep repositories apart.
One :class:`ItemFormat` per storage layout; the adapter picks the one its ``layout=`` names.

lochkit's own layout (:data:`LOCHKIT_ITEMS`):

* key ``k`` = ``"<len(repo)>:<repo>:"`` followed by the ref name or the object id in hex. The
  length makes the repository part unambiguous, so ids such as ``a`` and ``a:b`` never mix, and a
  repository's keys share a prefix that ``begins_with`` filters can use.
* refs items: ``p`` pointer (B), ``d`` deleted (BOOL), ``c`` created µs (N), ``e`` extended info
  (B, absent when None), ``h`` previous pointers (B).
* objs items: ``y`` type code (S), ``z`` referenced µs (N), ``V`` version token (S, absent when
  None), ``v`` serialised object (B).

Nessie's DynamoDB2 layout (:data:`NESSIE_ITEMS`), attribute for attribute what a Nessie server
writes and reads, so both can work on the same tables:

* key ``k`` = ``repo + ":"`` followed by the ref name or the object id in lowercase hex. The
  repository part is not delimited: the adapter refuses repository ids containing ``:``.
* numbers (``c``, ``z``) are **decimal strings** (S), in items and in condition values alike:
  DynamoDB never finds an S equal to an N, so one wrong type would fail every compare-and-swap.
* ``c`` is absent when 0, ``e`` when None and ``h`` when the history is empty; the conditions
  test those with ``attribute_not_exists``, as Nessie's do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Final

from backends.dynamodb.capabilities import DYNAMODB_ITEM_LIMIT
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import CorruptData, ObjTooLarge
from persist_spi.ids import ObjId

Item = dict[str, Any]


def repo_prefix(repo: str) -> str:
    """The key prefix of ``repo``'s rows in lochkit's own layout."""
    return f"{len(repo)}:{repo}:"


def repo_of_key(key: str) -> str | None:
    """The repository id of a row key in lochkit's own layout, or None for keys lochkit does not
    own (the schema item)."""
    length, sep, rest = key.partition(":")
    if not sep or not length.isdigit() or len(rest) <= int(length) or rest[int(length)] != ":":
        return None
    return rest[: int(length)]


def key_of(key: str) -> Item:
    return {"k": {"S": key}}


class ItemFormat(ABC):
    """The items, keys and conditions of one storage layout."""

    #: The layout's name (``layout=`` of the URL).
    name: str
    #: DynamoDB's type letter for the numbers ``c`` and ``z``: ``N`` or ``S``.
    number_type: str
    #: Condition of creating a reference: no item with that key.
    ref_insert_condition: str
    #: Condition of inserting an object, and of refreshing the ``referenced`` time of one that
    #: exists (so that an object deleted in between does not come back as a stub without data).
    obj_insert_condition: str
    obj_exists_condition: str

    @abstractmethod
    def repo_prefix(self, repo: str) -> str:
        """The prefix of every key of ``repo``'s rows."""

    @abstractmethod
    def repo_of_key(self, key: str) -> str | None:
        """The repository id of a key, or None for keys of no repository."""

    def repository_id_problem(self, repo: str) -> str | None:
        """Why ``repo``'s keys could mix with another repository's, or None (lochkit's own keys
        delimit the id by its length)."""
        return None

    @abstractmethod
    def ref_item(self, prefix: str, row: RefRow) -> Item: ...

    @abstractmethod
    def ref_row(self, name: str, item: Item) -> RefRow: ...

    @abstractmethod
    def ref_condition(self, expected: RefRow) -> tuple[str, Item]:
        """The compare-and-swap condition over every field of ``RefRow.same_condition``, and its
        values. Comparisons with a missing attribute are false, so it also requires the item."""

    def number(self, value: int) -> Item:
        return {self.number_type: str(value)}

    def obj_item(self, prefix: str, row: ObjRow) -> Item:
        item: Item = {
            "k": {"S": prefix + row.obj_id.hex()},
            "y": {"S": row.obj_type},
            "z": self.number(row.referenced),
            "v": {"B": row.data},
        }
        if row.version_token is not None:
            item["V"] = {"S": row.version_token}
        return item

    def obj_row(self, obj_id: bytes, item: Item) -> ObjRow:
        token = item.get("V")
        return ObjRow(
            obj_id,
            item["y"]["S"],
            None if token is None else token["S"],
            bytes(item["v"]["B"]),
            self._read_number(item, "z"),
        )

    def prefix_filter(self, repos: set[str]) -> Item:
        """A server-side filter for erasing a few repositories (it cuts transfer, not read cost)."""
        if len(repos) > 20:
            return {}
        names = [f":r{i}" for i in range(len(repos))]
        values = {n: {"S": self.repo_prefix(r)} for n, r in zip(names, sorted(repos), strict=True)}
        condition = " OR ".join(f"begins_with(k, {n})" for n in names)
        return {"FilterExpression": condition, "ExpressionAttributeValues": values}

    def too_large(self, row: ObjRow) -> ObjTooLarge:
        """DynamoDB refused the item: report the item's size (names and key included) against 400 KiB."""
        return ObjTooLarge(
            item_size(self.obj_item("", row)),
            DYNAMODB_ITEM_LIMIT,
            ObjId(row.obj_id),
            "DynamoDB item of object",
        )

    def _read_number(self, item: Item, name: str) -> int:
        """An absent number is 0 (Nessie leaves ``c`` out when it is 0)."""
        value = item.get(name)
        if value is None:
            return 0
        text = value.get(self.number_type)
        if not isinstance(text, str) or not text.lstrip("-").isdigit():
            raise CorruptData(
                f"dynamodb item {item.get('k', {}).get('S')!r}: attribute {name!r} is {value!r}, not a "
                f"number stored as {self.number_type} (as layout={self.name} stores it); was the table "
                "written in the other layout?"
            )
        return int(text)


class LochkitItems(ItemFormat):
    name = "lochkit"
    number_type = "N"
    ref_insert_condition = "attribute_not_exists(k)"
    obj_insert_condition = "attribute_not_exists(k)"
    obj_exists_condition = "attribute_exists(k)"

    def repo_prefix(self, repo: str) -> str:
        return repo_prefix(repo)

    def repo_of_key(self, key: str) -> str | None:
        return repo_of_key(key)

    def ref_item(self, prefix: str, row: RefRow) -> Item:
        item: Item = {
            "k": {"S": prefix + row.name},
            "p": {"B": row.pointer},
            "d": {"BOOL": row.deleted},
            "c": self.number(row.created_at_micros),
            "h": {"B": row.previous_pointers},
        }
        if row.extended_info is not None:
            item["e"] = {"B": row.extended_info}
        return item

    def ref_row(self, name: str, item: Item) -> RefRow:
        extended = item.get("e")
        return RefRow(
            name,
            bytes(item["p"]["B"]),
            bool(item["d"]["BOOL"]),
            self._read_number(item, "c"),
            None if extended is None else bytes(extended["B"]),
            bytes(item["h"]["B"]),
        )

    def ref_condition(self, expected: RefRow) -> tuple[str, Item]:
        values: Item = {
            ":p": {"B": expected.pointer},
            ":d": {"BOOL": expected.deleted},
            ":c": self.number(expected.created_at_micros),
        }
        condition = "p = :p AND d = :d AND c = :c AND "
        if expected.extended_info is None:
            condition += "attribute_not_exists(e)"
        else:
            condition += "e = :e"
            values[":e"] = {"B": expected.extended_info}
        return condition, values


class NessieItems(ItemFormat):
    name = "nessie"
    number_type = "S"
    # Nessie's own conditions: a reference exists when it has a pointer, an object when it has a type.
    ref_insert_condition = "attribute_not_exists(p)"
    obj_insert_condition = "attribute_not_exists(y)"
    obj_exists_condition = "attribute_exists(y)"

    def repo_prefix(self, repo: str) -> str:
        return repo + ":"

    def repo_of_key(self, key: str) -> str | None:
        repo, sep, _ = key.partition(":")
        return repo if sep else None

    def repository_id_problem(self, repo: str) -> str | None:
        if ":" not in repo:
            return None
        return (
            "in Nessie's layout every key is the repository id, ':' and the name, unescaped, so an "
            "id containing ':' would share keys, scans and erasing with another repository (a:b "
            "with a); choose an id without ':'"
        )

    def ref_item(self, prefix: str, row: RefRow) -> Item:
        item: Item = {
            "k": {"S": prefix + row.name},
            "p": {"B": row.pointer},
            "d": {"BOOL": row.deleted},
        }
        if row.created_at_micros != 0:
            item["c"] = self.number(row.created_at_micros)
        if row.extended_info is not None:
            item["e"] = {"B": row.extended_info}
        if row.previous_pointers:
            item["h"] = {"B": row.previous_pointers}
        return item

    def ref_row(self, name: str, item: Item) -> RefRow:
        extended, history, deleted = item.get("e"), item.get("h"), item.get("d")
        return RefRow(
            name,
            bytes(item["p"]["B"]),
            deleted is not None and bool(deleted.get("BOOL")),
            self._read_number(item, "c"),
            None if extended is None else bytes(extended["B"]),
            b"" if history is None else bytes(history["B"]),
        )

    def ref_condition(self, expected: RefRow) -> tuple[str, Item]:
        values: Item = {":deleted": {"BOOL": expected.deleted}, ":pointer": {"B": expected.pointer}}
        condition = "(d = :deleted) AND (p = :pointer)"
        if expected.created_at_micros != 0:
            condition += " AND (c = :createdAt)"
            values[":createdAt"] = self.number(expected.created_at_micros)
        else:
            condition += " AND attribute_not_exists(c)"
        if expected.extended_info is not None:
            condition += " AND (e = :extendedInfo)"
            values[":extendedInfo"] = {"B": expected.extended_info}
        else:
            condition += " AND attribute_not_exists(e)"
        return condition, values


LOCHKIT_ITEMS: Final = LochkitItems()
NESSIE_ITEMS: Final = NessieItems()
ITEM_FORMATS: Final = {f.name: f for f in (LOCHKIT_ITEMS, NESSIE_ITEMS)}


def item_size(item: Item) -> int:
    """An item's size as DynamoDB limits it: attribute names and values (a little more for numbers
    and booleans, whose text is counted)."""
    return sum(len(name.encode("utf-8")) + _value_size(value) for name, value in item.items())


def _value_size(value: Item) -> int:
    raw = next(iter(value.values()))
    return len(raw) if isinstance(raw, bytes) else len(str(raw).encode("utf-8"))
