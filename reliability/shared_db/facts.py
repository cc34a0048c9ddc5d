"""What a version store shows of a repository, gathered the same way from a Nessie server (over REST)
and from lochkit (in-process), so that the two can be compared with ``==``: the references and
their heads, each branch's log, every key's content on each reference, and diffs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from persist_spi.versionstore.api import VersionStoreApi
from persist_spi.versionstore.content import Content
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.refs import NamedRef, RefKind


def _meta(meta: CommitMeta) -> tuple[Any, ...]:
    """A commit's meta as both sides report it (times to the millisecond: REST's precision)."""
    commit_time = meta.commit_time.isoformat(timespec="milliseconds") if meta.commit_time else None
    author_time = meta.author_time.isoformat(timespec="milliseconds") if meta.author_time else None
    return (
        meta.message,
        # The same stored commit reads differently in-process and over REST when a header is empty:
        # an empty author is dropped over REST, an absent committer is null there.
        tuple(a for a in meta.authors if a),
        meta.committer or None,
        commit_time,
        author_time,
        tuple(sorted(meta.properties.items())),
        tuple(meta.parent_hashes),
    )


@dataclass
class Facts:
    """One side's view; equal Facts mean both implementations read the same repository."""

    default_branch: str = ""
    references: dict[str, tuple[str, str]] = field(default_factory=dict)
    logs: dict[str, list[tuple[str, tuple[Any, ...]]]] = field(default_factory=dict)
    contents: dict[str, dict[str, Content]] = field(default_factory=dict)
    diffs: dict[str, list[tuple[str, Content | None, Content | None]]] = field(default_factory=dict)

    @property
    def commits(self) -> int:
        """Distinct commits on all logs."""
        return len({h for log in self.logs.values() for h, _ in log})

    def differences(self, other: Facts) -> list[str]:
        """What differs from ``other``, one line per part (empty when equal)."""
        out = []
        for name in ("default_branch", "references", "logs", "contents", "diffs"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                out.append(f"{name}: {_describe(mine, theirs)}")
        return out


def _describe(mine: Any, theirs: Any) -> str:
    """The first difference, down to the first differing entry of a log or listing."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        keys = sorted(set(mine) | set(theirs), key=str)
        parts = [
            f"{k}: {_describe(mine.get(k), theirs.get(k))}" for k in keys if mine.get(k) != theirs.get(k)
        ]
        return "; ".join(parts)[:3000]
    if isinstance(mine, list) and isinstance(theirs, list):
        for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
            if a != b:
                return f"entry {i}: {a!r} != {b!r}"[:1500]
        return f"{len(mine)} entries != {len(theirs)} entries"
    return f"{mine!r} != {theirs!r}"[:1500]


def gather(api: VersionStoreApi, diffs: Sequence[tuple[str, str]] = ()) -> Facts:
    """Every reference with its head, each branch's log, the contents on every reference, and the
    diff of each ``(from, to)`` pair of reference names."""
    facts = Facts(default_branch=api.default_branch())
    refs: dict[str, NamedRef] = {}
    for info in api.list_references():
        ref = info.named_ref
        refs[ref.name] = ref
        facts.references[ref.name] = (ref.kind.name, info.hash.hex())
    for name, ref in sorted(refs.items()):
        if ref.kind is RefKind.BRANCH:
            facts.logs[name] = [(e.hash.hex(), _meta(e.meta)) for e in api.get_commits(ref)]
        facts.contents[name] = {
            str(e.key): e.content for e in api.get_entries(ref, with_content=True) if e.content is not None
        }
    for source, target in diffs:
        if source in refs and target in refs:
            facts.diffs[f"{source}..{target}"] = [
                (str(d.key), d.from_content, d.to_content) for d in api.get_diffs(refs[source], refs[target])
            ]
    return facts
