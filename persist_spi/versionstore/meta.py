"""Commit metadata (message, authors, times, properties) and its mapping onto commit headers."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field

from persist_spi.headers import CommitHeaders

_RESERVED = frozenset({"date", "author-date", "committer", "author", "signed-off-by"})


@dataclass(frozen=True)
class CommitMeta:
    message: str = ""
    authors: tuple[str, ...] = ()
    committer: str | None = None
    signed_off_by: tuple[str, ...] = ()
    author_time: datetime.datetime | None = None
    commit_time: datetime.datetime | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    #: Multi-valued properties (Nessie's ``allProperties``); ``properties`` wins for a name in both.
    all_properties: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Filled in when read back from a commit.
    hash: str | None = None
    parent_hashes: tuple[str, ...] = ()

    def to_headers(self, now: datetime.datetime) -> CommitHeaders:
        """Headers for a new commit; the commit time is always "now", which is what makes two
        otherwise identical commits get different ids."""
        pairs: list[tuple[str, str]] = [("date", _iso(now))]
        pairs.append(("author-date", _iso(self.author_time or now)))
        if self.committer:
            pairs.append(("committer", self.committer))
        pairs += [("author", a) for a in self.authors]
        pairs += [("signed-off-by", s) for s in self.signed_off_by]
        merged = {**self.all_properties, **{n: (v,) for n, v in self.properties.items()}}
        for name, values in merged.items():
            if name.lower() in _RESERVED:
                raise ValueError(f"Commit property '{name}' is reserved")
            pairs += [(name, value) for value in values]
        return CommitHeaders(pairs)

    @classmethod
    def from_commit(
        cls, message: str, headers: CommitHeaders, commit_hash: str, parents: tuple[str, ...]
    ) -> CommitMeta:
        return cls(
            message=message,
            authors=headers.get("author", ()),
            committer=headers.first("committer"),
            signed_off_by=headers.get("signed-off-by", ()),
            author_time=_parse(headers.first("author-date")),
            commit_time=_parse(headers.first("date")),
            properties={n: v[0] for n, v in headers.items() if n not in _RESERVED and v},
            all_properties={n: tuple(v) for n, v in headers.items() if n not in _RESERVED and v},
            hash=commit_hash,
            parent_hashes=parents,
        )


def _iso(value: datetime.datetime) -> str:
    return value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def _parse(value: str | None) -> datetime.datetime | None:
    if value is None:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
