"""Parsing ``--project`` and ``--since``: the arithmetic and the error messages."""

from __future__ import annotations

import datetime

import pytest

from reports.projection import ProjectionError, parse_projection
from reports.since import SinceError, parse_since


@pytest.mark.parametrize(
    ("text", "per_second", "seconds"),
    [
        ("10/s:30d", 10.0, 30 * 86400),
        ("600/m:1h", 10.0, 3600),
        ("36/h:2w", 0.01, 14 * 86400),
        ("1.5/s:1y", 1.5, 365 * 86400),
        (" 86400/d : 12h ", 1.0, 12 * 3600),
    ],
)
def test_projection_rate_and_retention(text: str, per_second: float, seconds: float) -> None:
    p = parse_projection(text)
    assert p.commits_per_s == pytest.approx(per_second)
    assert p.retention_s == pytest.approx(seconds)
    assert p.commits == pytest.approx(per_second * seconds)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("10:30d", "RATE/UNIT:RETENTION"),
        ("10/fortnight:30d", "rate unit 'fortnight'"),
        ("10/s:30q", "retention unit 'q'"),
        ("0/s:30d", "above zero"),
    ],
)
def test_projection_errors_say_what_is_expected(text: str, says: str) -> None:
    with pytest.raises(ProjectionError, match=says):
        parse_projection(text)


def test_since_accepts_dates_times_and_ages() -> None:
    now = datetime.datetime(2026, 3, 10, 12, 0, tzinfo=datetime.UTC)
    assert parse_since("2026-03-01", now) == datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)
    assert parse_since("2026-03-01T06:30Z", now) == datetime.datetime(2026, 3, 1, 6, 30, tzinfo=datetime.UTC)
    assert parse_since("7d", now) == now - datetime.timedelta(days=7)
    assert parse_since("90m", now) == now - datetime.timedelta(minutes=90)


def test_since_rejects_anything_else_with_examples() -> None:
    with pytest.raises(SinceError, match="7d"):
        parse_since("last tuesday")
