"""Commit specs as Nessie's clients write them in paths: a hash, then relative lookups."""

from __future__ import annotations

import datetime
import re

import pytest

from persist_spi.errors import InputError
from persist_spi.versionstore.commit_specs import Lookup, parse_commit_spec


def test_a_hash_with_chained_lookups_parses_in_order() -> None:
    spec = parse_commit_spec("2e1cfa82b035c26c~1^2*2024-05-01T10:00:00.123456789Z")
    assert spec.hash is not None
    assert str(spec.hash) == "2e1cfa82b035c26c"
    assert [r.lookup for r in spec.relative] == [Lookup.PREDECESSOR, Lookup.PARENT, Lookup.TIMESTAMP]
    assert [r.count for r in spec.relative[:2]] == [1, 2]
    # nanoseconds are cut to the microseconds Python keeps
    assert spec.relative[2].instant == datetime.datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=datetime.UTC)
    assert str(spec) == "2e1cfa82b035c26c~1^2*2024-05-01T10:00:00.123456Z"


def test_a_timestamp_may_be_milliseconds_since_the_epoch() -> None:
    (millis,) = parse_commit_spec("*1685185847230").relative
    assert millis.instant == datetime.datetime(2023, 5, 27, 11, 10, 47, 230000, tzinfo=datetime.UTC)


@pytest.mark.parametrize("bad", ["", "~0", "zz", "abc", "~1x", "^-1", "2e1cfa82~", "*2024-05-01"])
def test_anything_else_is_refused_with_the_rule(bad: str) -> None:
    with pytest.raises(ValueError, match="Invalid"):
        parse_commit_spec(bad)


@pytest.mark.parametrize(
    "bad",
    [
        "~2024-05-01T10:00:00Z",  # a count is a number of steps, not an instant
        "^2024-05-01T10:00:00.5Z",
        "*2024-13-01T10:00:00Z",  # shaped like an instant, but no such month
        "*1001-52-26T10:56:40.795Z",
        "*99999999999999999999",  # milliseconds past any date
    ],
)
def test_lookups_that_match_the_syntax_but_mean_nothing_are_input_errors(bad: str) -> None:
    with pytest.raises(InputError, match=f"Invalid relative lookup '{re.escape(bad)}'"):
        parse_commit_spec(bad)
