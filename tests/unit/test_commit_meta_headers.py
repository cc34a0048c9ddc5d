"""The commit-time headers a commit's id is hashed over: written as Java's ``Instant.toString``."""

from __future__ import annotations

import dataclasses
import datetime

import pytest

from persist_spi.headers import CommitHeaders
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


@pytest.mark.parametrize(
    "meta",
    [
        CommitMeta("m"),
        CommitMeta("m", committer="c", authors=("a1", "a2"), signed_off_by=("s",)),
        CommitMeta("m", authors=("only",), author_time=datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)),
        CommitMeta("m", committer="", authors=(), signed_off_by=("s1", "s2")),
    ],
)
def test_a_commit_without_properties_gets_the_headers_in_the_order_the_general_rule_adds_them(
    meta: CommitMeta,
) -> None:
    """Commits without properties take a shorter path; the names, values and their order (which
    decides the commit id through Java's hash order) are those of the pairs added one by one."""
    now = datetime.datetime(2026, 11, 28, 7, 10, 19, 250_000, tzinfo=UTC)
    made = meta.to_headers(now)
    commit_time, author_time = made.first("date"), made.first("author-date")
    assert commit_time is not None
    assert author_time is not None
    expected = [("date", commit_time), ("author-date", author_time)]
    expected += [("committer", meta.committer)] if meta.committer else []
    expected += [("author", a) for a in meta.authors] + [("signed-off-by", s) for s in meta.signed_off_by]
    general = CommitHeaders(expected)
    assert list(made.items()) == list(general.items())
    assert made.pairs_size() == sum(len(n) + len(v) + 2 for n, v in general.pairs())
    # With a property the general path runs; the reserved headers come out the same, after it.
    with_property = dataclasses.replace(meta, properties={"p": "v"}).to_headers(now)
    assert list(with_property.items()) == [("p", ("v",)), *made.items()]
