"""Commit metadata (message, authors, times, properties) and its mapping onto commit headers."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field

from persist_spi.errors import InputError
from persist_spi.headers import CommitHeaders
from persist_spi.objs import CommitObj

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
        otherwise identical commits get different ids. Added in the order Nessie adds them
        (properties first), which decides the hash order of names sharing a bucket of Java's
        ``HashMap`` (:mod:`persist_spi.java_order`)."""
        if not self.properties and not self.all_properties:
            return CommitHeaders.from_lowercase(self._reserved_headers(now))
        pairs: list[tuple[str, str]] = []
        for name, values in self.merged_properties().items():
            if name.lower() in _RESERVED:
                raise InputError(f"Commit property '{name}' is reserved")
            pairs += [(name, value) for value in values]
        commit_time = _iso(now)
        pairs.append(("date", commit_time))
        pairs.append(("author-date", commit_time if self.author_time is None else _iso(self.author_time)))
        if self.committer:
            pairs.append(("committer", self.committer))
        pairs += [("author", a) for a in self.authors]
        pairs += [("signed-off-by", s) for s in self.signed_off_by]
        return CommitHeaders(pairs)

    def _reserved_headers(self, now: datetime.datetime) -> dict[str, tuple[str, ...]]:
        """The headers of a commit without properties, by lowercase name, in the order
        :meth:`to_headers` adds them (the common case, built without the general merge)."""
        commit_time = _iso(now)
        headers: dict[str, tuple[str, ...]] = {
            "date": (commit_time,),
            "author-date": (commit_time if self.author_time is None else _iso(self.author_time),),
        }
        if self.committer:
            headers["committer"] = (self.committer,)
        if self.authors:
            headers["author"] = tuple(self.authors)
        if self.signed_off_by:
            headers["signed-off-by"] = tuple(self.signed_off_by)
        return headers

    def merged_properties(self) -> dict[str, tuple[str, ...]]:
        """Every property with all its values. A ``properties`` value replaces the values of the
        same name in ``all_properties``, unless it is their first value (as in a commit read back,
        which fills in both)."""
        merged = {n: tuple(v) for n, v in self.all_properties.items()}
        for name, value in self.properties.items():
            values = merged.get(name)
            if not values or values[0] != value:
                merged[name] = (value,)
        return merged

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


def with_commit_time(headers: CommitHeaders, now: datetime.datetime) -> CommitHeaders:
    """``headers`` with the commit time set to ``now`` (the author time is kept): the metadata of
    a commit replayed elsewhere, as Nessie's transplant writes it."""
    return CommitHeaders([("date", _iso(now)), *((n, v) for n, v in headers.pairs() if n != "date")])


def commit_meta_of(commit: CommitObj) -> CommitMeta:
    """The commit meta a log entry shows for ``commit`` (hash and parents filled in)."""
    parents = (commit.direct_parent, *commit.secondary_parents)
    return CommitMeta.from_commit(
        commit.message, commit.headers, str(commit.id), tuple(str(p) for p in parents)
    )


def commit_time_of(commit: CommitObj) -> datetime.datetime:
    """When ``commit`` was made: its commit-time header, else the time it was stored."""
    from_header = _parse(commit.headers.first("date"))
    if from_header is not None:
        return from_header
    return datetime.datetime.fromtimestamp(commit.created / 1_000_000, datetime.UTC)


def _iso(value: datetime.datetime) -> str:
    """As Java's ``Instant.toString`` writes it (Nessie's header value, hashed into the commit id):
    the fraction in groups of three digits, none when whole seconds."""
    # One isoformat call without arguments and a slice: every commit writes this. isoformat gives
    # no fraction for whole seconds and six digits otherwise; whole milliseconds keep three.
    utc = value if value.tzinfo is datetime.UTC else value.astimezone(datetime.UTC)
    text = utc.isoformat()  # a UTC time ends in "+00:00"
    micros = utc.microsecond
    if micros == 0 or micros % 1000:
        return text[:-6] + "Z"
    return text[:-9] + "Z"


def _parse(value: str | None) -> datetime.datetime | None:
    if value is None:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
