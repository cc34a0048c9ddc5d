"""``--since``: an ISO date or time (``2026-01-31``, ``2026-01-31T12:00``), or an age (``7d``, ``12h``,
``30m``) counted back from now. Times without a zone are UTC."""

from __future__ import annotations

import datetime
import re
from typing import Final

from persist_spi.errors import InputError

_AGE: Final = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_SECONDS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class SinceError(InputError):
    pass


def parse_since(text: str, now: datetime.datetime | None = None) -> datetime.datetime:
    now = now or datetime.datetime.now(datetime.UTC)
    age = _AGE.match(text.lower())
    if age:
        return now - datetime.timedelta(seconds=float(age.group(1)) * _SECONDS[age.group(2)])
    try:
        moment = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise SinceError(
            f"--since '{text}' is neither an ISO date or time (2026-01-31, 2026-01-31T12:00) nor an age "
            "(7d, 12h, 30m)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.astimezone(datetime.UTC)
