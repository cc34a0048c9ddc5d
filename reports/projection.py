"""``--project RATE:RETENTION`` (for example ``10/s:30d``): how many commits a rate sustains over a
retention period, parsed here; the objects and bytes they need are computed in
:mod:`reports.storage_metrics`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from persist_spi.errors import InputError

_RATE_UNITS: Final = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_SPAN_UNITS: Final = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_PATTERN: Final = re.compile(
    r"^\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*([a-z]+)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]+)\s*$"
)


class ProjectionError(InputError):
    """A malformed ``--project`` value; the message shows the expected form."""


@dataclass(frozen=True)
class Projection:
    label: str
    commits_per_s: float
    retention_s: float

    @property
    def commits(self) -> float:
        return self.commits_per_s * self.retention_s


def parse_projection(text: str) -> Projection:
    """``10/s:30d`` -> 10 commits per second kept for 30 days. Rate units: s, m (or min), h, d;
    retention units: s, m (or min), h, d, w, y (365 days)."""
    match = _PATTERN.match(text.lower())
    if not match:
        raise ProjectionError(
            f"--project '{text}' is not RATE/UNIT:RETENTION, e.g. 10/s:30d (10 commits a second kept "
            "30 days) or 500/h:1y"
        )
    rate, rate_unit, span, span_unit = match.groups()
    if rate_unit not in _RATE_UNITS:
        raise ProjectionError(f"--project '{text}': rate unit '{rate_unit}' is not one of s, m, h, d")
    if span_unit not in _SPAN_UNITS:
        raise ProjectionError(
            f"--project '{text}': retention unit '{span_unit}' is not one of s, m, h, d, w, y"
        )
    commits_per_s = float(rate) / _RATE_UNITS[rate_unit]
    retention_s = float(span) * _SPAN_UNITS[span_unit]
    if commits_per_s <= 0 or retention_s <= 0:
        raise ProjectionError(f"--project '{text}': rate and retention must be above zero")
    return Projection(text.strip(), commits_per_s, retention_s)
