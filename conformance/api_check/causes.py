"""What a failed response-schema check means, in words that are the same for every answer failing
the same way.

A body that fails a ``oneOf`` / ``anyOf`` (a reference is a Branch, Tag or Detached; reference
metadata is an object or null) is reported by the validator as "not valid under any of the
schemas": the cause is inside the alternative that was meant. Here the value is validated again
against that spot of the schema, and the errors of the meant alternatives (not those that fail only
on the discriminator or on being null) are followed down to the ones that say what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import jsonschema_rs

_COMPOSITE = ("OneOfNotValid", "AnyOf")


def leaf_messages(failure: Any) -> list[str]:
    """The validator's messages (the value itself left out) that explain ``failure``, a schemathesis
    JSON Schema failure; each with where in the schema it arose."""
    root = failure._root_schema
    if not isinstance(root, dict):
        return [_short(str(failure._raw_message))]
    names = getattr(failure, "_name_to_uri", None) or {}
    path = list(failure.schema_path)
    parent = _at(root, path[:-1])
    if not isinstance(parent, dict):
        return [_short(str(failure._raw_message))]
    definitions = {k: v for k, v in root.items() if k.startswith("x-") or k in ("definitions", "$defs")}
    validator = jsonschema_rs.Draft4Validator({**definitions, **parent})
    leaves = _leaves(validator.iter_errors(failure.instance), [])
    found = sorted({_described(message, place, names) for message, place in leaves})
    return found or [_short(str(failure._raw_message))]


def _leaves(errors: Iterator[Any] | Sequence[Any], place: list[str]) -> Iterator[tuple[str, list[str]]]:
    for error in errors:
        kind = type(error.kind).__name__
        if kind in _COMPOSITE:
            depth = len(list(error.instance_path))
            meant = [alt for alt in error.kind.context if not _not_meant(alt, depth)]
            for alternative in meant or error.kind.context:
                yield from _leaves(alternative, [*place, *(str(p) for p in error.schema_path)])
        else:
            yield _short(error.message), [*place, *(str(p) for p in error.schema_path)]


def _not_meant(errors: Sequence[Any], top: int) -> bool:
    """An alternative that fails on the discriminator's value or on the value's own type (a branch
    checked as a Tag; an object checked as null) is not the one meant; ``top`` is the depth of the
    value in the body."""
    for error in errors:
        path, depth = [str(p) for p in error.schema_path], len(list(error.instance_path))
        if path and ((path[-1] == "enum" and depth <= top + 1) or (path[-1] == "type" and depth == top)):
            return True
    return False


def _short(message: str) -> str:
    if message.startswith(("{", "[")) and " is " in message:
        return "value is " + message.rsplit(" is ", 1)[1]  # drop the value itself
    if message.startswith('"') and " does not match " in message:
        return "value does not match " + message.split(" does not match ", 1)[1]
    return message


def _described(message: str, place: list[str], names: dict[str, str]) -> str:
    """The message and the innermost named schema it arose in (``in CommitMeta_V2``)."""
    named = [p for p in place if p in names]
    return f"{message} (in {names[named[-1]].rsplit('/', 1)[-1]})" if named else message


def _at(node: Any, path: Sequence[Any]) -> Any:
    for part in path:
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
    return node


__all__ = ["leaf_messages"]
