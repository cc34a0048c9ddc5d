"""Page-size paging: a page holds at most ``max-records`` items; when more follow, the answer says
``hasMore`` and carries an opaque ``token`` that resumes the listing at the first item left out.

Tokens are the version store's own resume points (a key for entries and diffs, a commit id for the
log, a reference name for references), so a listing resumed later continues where it stopped even
if the reference moved in between, as Nessie's do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from rest_server.errors import bad_request

T = TypeVar("T")


@dataclass
class Page(Generic[T]):
    items: list[T] = field(default_factory=list)
    #: Resumes at the first item left out; None when the listing is complete.
    token: str | None = None

    def answer(self, items_field: str, items: list[object], **after: object) -> dict[str, object]:
        """A listing's answer in the order of Nessie's fields: ``token``, the items, what else the
        listing says (``after``), then ``hasMore``."""
        return {"token": self.token, items_field: items, **after, "hasMore": self.token is not None}


def take_page(items: Iterable[T], max_records: int | None, token_of: Callable[[T], str]) -> Page[T]:
    """The first ``max_records`` items (all of them when None or not positive, as in Nessie)."""
    page: Page[T] = Page()
    for item in items:
        if max_records is not None and 0 < max_records <= len(page.items):
            page.token = token_of(item)
            break
        page.items.append(item)
    return page


def max_records(raw: str | None, strict_max: int | None = None) -> int | None:
    """The ``max-records`` parameter; a strict maximum caps it (and applies when it is absent)."""
    if raw is None or raw == "":
        return strict_max
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f"max-records must be a whole number, not '{raw}'") from None
    if strict_max is not None:
        return min(max(value, 0), strict_max) or strict_max
    return value


__all__ = ["Page", "max_records", "take_page"]
