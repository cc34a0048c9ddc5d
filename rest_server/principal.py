"""Who sent a request: the principal an authenticated request carries through the application.

Authentication (a middleware in front of the routes) puts the :class:`Principal` it established
into the ASGI scope under :data:`SCOPE_KEY`; handlers and authorization read it with
:func:`principal_of`. A server running without authentication has no principal (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

#: Where a request's principal lives in its ASGI scope.
SCOPE_KEY: Final = "lochkit.principal"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: its name (a token's principal, a JWT's subject) and its roles."""

    name: str
    roles: frozenset[str] = field(default_factory=frozenset)


def principal_of(scope: Mapping[str, Any]) -> Principal | None:
    """The principal authentication established for this request, or None (no authentication)."""
    principal = scope.get(SCOPE_KEY)
    return principal if isinstance(principal, Principal) else None


__all__ = ["SCOPE_KEY", "Principal", "principal_of"]
