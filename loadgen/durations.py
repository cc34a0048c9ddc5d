"""One syntax for every duration a ``lochkit`` command takes (``generate -d``, ``experiment
--duration``, ``scenario -t``): what the help of each says (:data:`FORMS`) is what this parser
accepts, and a value it refuses gets an error that lists those same forms."""

from __future__ import annotations

import re
from typing import Final

from persist_spi.errors import InputError

#: The forms, as every option's help and every error message shows them.
FORMS: Final = "10s, 2m, 1h30m, 500ms, ISO-8601 (PT30S, P1DT2H) or plain seconds (30, 2.5)"

_UNIT_SECONDS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
#: One or more number-unit parts, largest unit first (locust's -t spelling, plus ms and d).
_UNITS: Final = re.compile(r"(?:(\d+(?:\.\d+)?)(ms|d|h|m|s))+")
_UNIT_PART: Final = re.compile(r"(\d+(?:\.\d+)?)(ms|d|h|m|s)")
#: java.time.Duration's PnDTnHnMn.nS, as Nessie's content generator takes it (no signs: a
#: duration here is how long something runs).
_ISO: Final = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d+)?)S)?)?")


class DurationError(InputError):
    """A value that is not a duration; the message names the option and the accepted forms."""


def parse_duration(text: str, option: str = "--duration") -> float:
    """Seconds from any of :data:`FORMS` (case-insensitive, blanks ignored)."""
    value = re.sub(r"\s+", "", text).lower()
    seconds = _plain(value)
    if seconds is None and _UNITS.fullmatch(value):
        seconds = _units(value)
    if seconds is None:
        seconds = _iso(value.upper())
    if seconds is None:
        raise DurationError(f"{option} '{text}' is not a duration: use {FORMS}")
    return seconds


def _plain(value: str) -> float | None:
    if not re.fullmatch(r"\d+(?:\.\d+)?", value):
        return None
    return float(value)


def _units(value: str) -> float | None:
    parts = _UNIT_PART.findall(value)
    ranks = [list(_UNIT_SECONDS).index(unit) for _, unit in parts]
    if ranks != sorted(ranks, reverse=True) or len(set(ranks)) != len(ranks):  # 1m1h, 1s1s
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def _iso(value: str) -> float | None:
    match = _ISO.fullmatch(value)
    if match is None or value in ("P", "PT") or value.endswith("T"):
        return None
    days, hours, minutes, seconds = match.groups()
    return (
        int(days or 0) * 86400
        + int(hours or 0) * 3600
        + int(minutes or 0) * 60
        + float((seconds or "0").replace(",", "."))
    )
