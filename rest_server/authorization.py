"""Authorization rules in Nessie's form: ``nessie.server.authorization.rules.<name>=<CEL>``.

Each request's handler names the checks Nessie 0.99's services make for it (view a reference,
commit to it, read an entity value, ...); a check passes when any rule gives true for it, over the
variables Nessie binds: ``op`` (the check, e.g. ``'VIEW_REFERENCE'``), ``role`` (the principal's
name, ``''`` without authentication), ``roles`` (its roles), ``ref`` (a branch or tag name, or
``DETACHED``), ``path`` (the content key's path string, ``''`` for reference checks) and
``contentType`` (``'ICEBERG_TABLE'``, ... or ``''``). Like Nessie, when no rule mentions
``VIEW_REFERENCE`` every reference may be viewed. A refused request is Nessie's 403: every failed
check's message, joined by ``, ``.

Rules are compiled once, when the server starts; a file that does not parse, a rule that does not
compile or uses a variable Nessie does not declare stops the start with the file, line and rule.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import cel

from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.operations import Delete, Operation, Put
from persist_spi.versionstore.path_string import to_path_string
from rest_server.errors import ApiError
from rest_server.java_properties import PropertiesError, parse_properties
from rest_server.principal import Principal

PREFIX: Final = "nessie.server.authorization."
RULES_PREFIX: Final = PREFIX + "rules."
#: The variables Nessie 0.99 declares for authorization rules; a rule naming another is refused.
VARIABLES: Final = ("ref", "path", "contentType", "role", "roles", "op")
#: Nessie's name for a read addressed by commit hash alone.
DETACHED: Final = "DETACHED"
#: Nessie's implicit rule is ``op=='VIEW_REFERENCE' && ref.matches('.*')``; ``ref`` is always a
#: string, so this says the same without a regular expression (ten times slower in the bindings).
_ALLOW_VIEWING_ALL: Final = "op=='VIEW_REFERENCE'"


class Op(enum.Enum):
    """The checks Nessie's services make (Nessie's ``Check.CheckType``)."""

    VIEW_REFERENCE = "VIEW_REFERENCE"
    CREATE_REFERENCE = "CREATE_REFERENCE"
    ASSIGN_REFERENCE_TO_HASH = "ASSIGN_REFERENCE_TO_HASH"
    DELETE_REFERENCE = "DELETE_REFERENCE"
    READ_ENTRIES = "READ_ENTRIES"
    READ_CONTENT_KEY = "READ_CONTENT_KEY"
    LIST_COMMIT_LOG = "LIST_COMMIT_LOG"
    COMMIT_CHANGE_AGAINST_REFERENCE = "COMMIT_CHANGE_AGAINST_REFERENCE"
    READ_ENTITY_VALUE = "READ_ENTITY_VALUE"
    CREATE_ENTITY = "CREATE_ENTITY"
    UPDATE_ENTITY = "UPDATE_ENTITY"
    DELETE_ENTITY = "DELETE_ENTITY"


@dataclass(frozen=True)
class Check:
    """One question to the rules: may the principal do ``op`` on ``ref`` (and ``key``)?"""

    op: Op
    ref: str
    key: ContentKey | None = None
    content_type: str = ""

    @property
    def path(self) -> str:
        return to_path_string(self.key.elements) if self.key is not None else ""

    def refusal(self, role: str) -> str:
        """Nessie's words for this check refused."""
        if self.key is not None:
            return f"'{self.op.value}' is not allowed for role '{role}' on content '{self.path}'"
        return f"'{self.op.value}' is not allowed for role '{role}' on reference '{self.ref}'"


# --- the checks each operation makes, in Nessie's order ------------------------------------------


def view(ref: str) -> list[Check]:
    return [Check(Op.VIEW_REFERENCE, ref)]


def on_reference(op: Op, ref: str) -> list[Check]:
    """A reference operation: Nessie checks that the reference may be viewed first."""
    return [Check(Op.VIEW_REFERENCE, ref), Check(op, ref)]


def on_content(op: Op, ref: str, key: ContentKey, content_type: str = "") -> list[Check]:
    """An entity operation: Nessie checks that the reference may be viewed first."""
    return [Check(Op.VIEW_REFERENCE, ref), Check(op, ref, key, content_type)]


def read_content_key(ref: str, key: ContentKey, content_type: str = "") -> Check:
    """Whether one key may be listed (entries, diffs, log operations); refused keys are left out."""
    return Check(Op.READ_CONTENT_KEY, ref, key, content_type)


# --- rules ------------------------------------------------------------------------------------


class RulesError(ValueError):
    """An authorization rules file that cannot be used, with where and why."""


@dataclass(frozen=True)
class Rule:
    name: str
    expression: str
    #: ``file:line`` the rule was read from.
    origin: str
    program: Any = field(compare=False, repr=False)


@dataclass(frozen=True)
class Authorization:
    """The rules ``lochkit serve`` enforces (``create_app(..., authorization=...)``)."""

    rules: tuple[Rule, ...]

    def checker(self, principal: Principal | None) -> AccessChecker:
        return AccessChecker(self, principal)


def compile_rule(name: str, expression: str, origin: str) -> Rule:
    where = f"{origin}: authorization rule '{name}'"
    if not name:
        raise RulesError(f"{origin}: a rule needs a name: {RULES_PREFIX}<name>=<CEL expression>")
    if not expression.strip():
        raise RulesError(f"{where} has no expression")
    try:
        program = cel.compile(expression)
    except (ValueError, RuntimeError) as e:
        raise RulesError(f"{where} does not compile: {e}") from None
    unknown = sorted(set(program.variables()) - set(VARIABLES))
    if unknown:
        raise RulesError(
            f"{where} uses {', '.join(repr(u) for u in unknown)}, which Nessie's rules do not have "
            f"(variables: {', '.join(VARIABLES)})"
        )
    return Rule(name, expression, origin, program)


def rules_from_properties(text: str, source: str) -> Authorization:
    """The rules of a ``.properties`` text; other settings than Nessie's authorization ones are
    ignored, so a whole ``application.properties`` can be given."""
    try:
        properties = parse_properties(text, source)
    except PropertiesError as e:
        raise RulesError(str(e)) from None
    rules: list[Rule] = []
    for prop in properties:
        origin = f"{source}:{prop.line}"
        if prop.key.startswith(RULES_PREFIX):
            name = prop.key[len(RULES_PREFIX) :].strip('"')
            rules.append(compile_rule(name, prop.value, origin))
        elif prop.key == PREFIX + "enabled" and prop.value.strip().lower() != "true":
            raise RulesError(
                f"{origin}: {prop.key}={prop.value} turns authorization off; to serve without "
                "authorization, start without --authorization-rules"
            )
        elif prop.key == PREFIX + "type" and prop.value.strip().upper() != "CEL":
            raise RulesError(f"{origin}: {prop.key}={prop.value}: only CEL rules are supported")
    if not rules:
        raise RulesError(
            f"{source}: no authorization rules; write them as {RULES_PREFIX}<name>=<CEL expression>"
        )
    if not any(Op.VIEW_REFERENCE.value in rule.expression for rule in rules):
        rules.append(compile_rule("__ALLOW_VIEWING_REF_ID", _ALLOW_VIEWING_ALL, "(implicit)"))
    return Authorization(tuple(rules))


def load_rules(path: str | Path) -> Authorization:
    """The rules of the file at ``path`` (``lochkit serve --authorization-rules``)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RulesError(f"cannot read authorization rules from {path}: {e}") from None
    return rules_from_properties(text, str(path))


# --- checking ---------------------------------------------------------------------------------


class AccessChecker:
    """One request's checks against the rules; each check is evaluated once."""

    def __init__(self, authorization: Authorization, principal: Principal | None) -> None:
        self._rules = authorization.rules
        self._role = principal.name if principal is not None else ""
        self._roles = sorted(principal.roles) if principal is not None else []
        self._decided: dict[Check, bool] = {}

    def allows(self, check: Check) -> bool:
        decided = self._decided.get(check)
        if decided is None:
            decided = self._decided[check] = self._evaluate(check)
        return decided

    def require(self, checks: Iterable[Check]) -> None:
        """Nessie's 403 naming every refused check (in order, each once) unless all pass."""
        refused = [c.refusal(self._role) for c in dict.fromkeys(checks) if not self.allows(c)]
        if refused:
            raise ApiError(403, "FORBIDDEN", ", ".join(refused))

    def _evaluate(self, check: Check) -> bool:
        activation = {
            "op": check.op.value,
            "role": self._role,
            "roles": self._roles,
            "ref": check.ref,
            "path": check.path,
            "contentType": check.content_type,
        }
        # One context for every rule: the bindings convert a dict on each call, a context once
        # (measured four times faster over four rules).
        context = cel.Context(activation)
        for rule in self._rules:
            try:
                result = rule.program.execute(context)
            except Exception as e:  # the bindings raise KeyError, TypeError, ValueError, RuntimeError
                raise ApiError(
                    500, "UNKNOWN", f"Failed to execute authorization rule '{rule.name}' ({rule.origin}): {e}"
                ) from None
            if result is True:
                return True
            if not isinstance(result, bool):
                raise ApiError(
                    500,
                    "UNKNOWN",
                    f"Authorization rule '{rule.name}' ({rule.origin}) gave {result!r}, not true or false",
                )
        return False


class AllowAll(AccessChecker):
    """Without rules every check passes (a server started without ``--authorization-rules``)."""

    def __init__(self) -> None:
        pass

    def allows(self, check: Check) -> bool:
        return True

    def require(self, checks: Iterable[Check]) -> None:
        return None


ALLOW_ALL: Final = AllowAll()


def ref_name(ref: Any) -> str:
    """The ``ref`` a check names: a reference's name, or DETACHED for a read by hash alone."""
    return ref.name if ref is not None else DETACHED


def content_types(found: Mapping[ContentKey, Content]) -> dict[ContentKey, str]:
    return {key: content.TYPE_NAME for key, content in found.items()}


def commit_checks(
    ref: str, operations: Sequence[Operation], deleted: Mapping[ContentKey, str]
) -> list[Check]:
    """A commit's checks (Nessie's commit validator, once the store accepted the operations):
    commit to the reference, then a delete per Delete (``deleted`` maps the keys to their content
    types), then per Put an update when it names the content id (an update, or the new key of a
    rename) or a create when it does not (new content, or a key deleted and added again), with the
    new content's type. Like Nessie, deletes come first; Unchanged operations are not checked."""
    checks = on_reference(Op.COMMIT_CHANGE_AGAINST_REFERENCE, ref)
    for op in operations:
        if isinstance(op, Delete) and op.key in deleted:
            checks += on_content(Op.DELETE_ENTITY, ref, op.key, deleted[op.key])
    for op in operations:
        if isinstance(op, Put):
            kind = Op.UPDATE_ENTITY if op.content.id is not None else Op.CREATE_ENTITY
            checks += on_content(kind, ref, op.key, op.content.TYPE_NAME)
    return checks


def change_checks(
    ref: str,
    keys: Iterable[ContentKey],
    before: Mapping[ContentKey, Content],
    after: Mapping[ContentKey, Content],
) -> list[Check]:
    """The entity checks of changing ``keys`` from ``before`` to ``after`` on ``ref`` (a merge or
    transplant, as Nessie's commit validator sees the commit it writes): a key that goes is
    deleted, then one that appears is created and one that stays is updated, with the content's
    type (deletes first, as Nessie)."""
    deletes: list[Check] = []
    puts: list[Check] = []
    for key in keys:
        old, new = before.get(key), after.get(key)
        if new is not None:
            kind = Op.UPDATE_ENTITY if old is not None else Op.CREATE_ENTITY
            puts += on_content(kind, ref, key, new.TYPE_NAME)
        elif old is not None:
            deletes += on_content(Op.DELETE_ENTITY, ref, key, old.TYPE_NAME)
    return deletes + puts


__all__ = [
    "ALLOW_ALL",
    "DETACHED",
    "VARIABLES",
    "AccessChecker",
    "Authorization",
    "Check",
    "Op",
    "Rule",
    "RulesError",
    "change_checks",
    "commit_checks",
    "compile_rule",
    "content_types",
    "load_rules",
    "on_content",
    "on_reference",
    "read_content_key",
    "ref_name",
    "rules_from_properties",
    "view",
]
