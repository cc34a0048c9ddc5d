"""The commit-time headers a commit's id is hashed over: written as Java's ``Instant.toString``."""

from __future__ import annotations

import datetime

import pytest

from persist_spi.versionstore.meta import CommitMeta, with_commit_time

UTC = datetime.UTC
PLUS_TWO = datetime.timezone(datetime.timedelta(hours=2))


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime.datetime(2026, 11, 28, 7, 10, 19, tzinfo=UTC), "2026-11-28T07:10:19Z"),
        (datetime.datetime(2026, 11, 28, 7, 10, 19, 120_000, tzinfo=UTC), "2026-11-28T07:10:19.120Z"),
        (datetime.datetime(2026, 11, 28, 7, 10, 19, 1_000, tzinfo=UTC), "2026-11-28T07:10:19.001Z"),
        (datetime.datetime(2026, 11, 28, 7, 10, 19, 123, tzinfo=UTC), "2026-11-28T07:10:19.000123Z"),
        (datetime.datetime(2026, 11, 28, 7, 10, 19, 999_999, tzinfo=UTC), "2026-11-28T07:10:19.999999Z"),
        (datetime.datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00Z"),
        # Another zone is written as the same instant in UTC.
        (
            datetime.datetime(2026, 11, 28, 9, 10, 19, 500_000, tzinfo=PLUS_TWO),
            "2026-11-28T07:10:19.500Z",
        ),
    ],
)
def test_commit_times_are_written_as_java_instants(moment: datetime.datetime, text: str) -> None:
    headers = CommitMeta("m").to_headers(moment)
    assert headers.first("date") == text
    assert with_commit_time(headers, moment).first("date") == text


def test_the_author_time_is_the_commit_time_unless_given() -> None:
    now = datetime.datetime(2026, 11, 28, 7, 10, 19, 250_000, tzinfo=UTC)
    authored = datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert CommitMeta("m").to_headers(now).first("author-date") == "2026-11-28T07:10:19.250Z"
    headers = CommitMeta("m", author_time=authored).to_headers(now)
    assert headers.first("author-date") == "2025-01-02T03:04:05Z"
    assert headers.first("date") == "2026-11-28T07:10:19.250Z"
