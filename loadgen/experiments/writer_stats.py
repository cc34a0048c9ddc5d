"""What one writer of an experiment measured, in HDR histograms (constant memory however long the
run), and how it travels between processes."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from hdrh.histogram import HdrHistogram

from loadgen.latency import attempts_histogram, latency_histogram, max_ms, ms


@dataclass
class WriterStats:
    writer: str
    puts_per_commit: int
    commits: int = 0
    timeouts: int = 0
    conflicts: int = 0
    errors: int = 0
    elapsed_s: float = 0.0
    last_error: str | None = None
    #: Successful commits' latency, µs.
    latency: HdrHistogram = field(default_factory=latency_histogram)
    #: Attempts of every commit call that ended (landed or timed out).
    attempts: HdrHistogram = field(default_factory=attempts_histogram)

    def to_wire(self) -> dict[str, Any]:
        doc = {k: v for k, v in vars(self).items() if k not in ("latency", "attempts")}
        doc["latency"] = base64.b64encode(self.latency.encode()).decode()
        doc["attempts"] = base64.b64encode(self.attempts.encode()).decode()
        return doc

    @classmethod
    def from_wire(cls, doc: dict[str, Any]) -> WriterStats:
        rest = {k: v for k, v in doc.items() if k not in ("latency", "attempts")}
        stats = cls(**rest)
        stats.latency = HdrHistogram.decode(base64.b64decode(doc["latency"]))
        stats.attempts = HdrHistogram.decode(base64.b64decode(doc["attempts"]))
        return stats


def writer_row(stats: WriterStats, total_commits: int, duration_s: float) -> dict[str, Any]:
    """The table row of one writer, as printed and as written by ``--json``."""
    calls = stats.attempts.get_total_count()
    return {
        "writer": stats.writer,
        "puts_per_commit": stats.puts_per_commit,
        "commits": stats.commits,
        "commits_per_s": round(stats.commits / duration_s, 1) if duration_s > 0 else 0.0,
        "share": round(stats.commits / total_commits, 4) if total_commits else 0.0,
        "attempts_mean": round(stats.attempts.get_mean_value(), 2) if calls else 0.0,
        "attempts_p99": stats.attempts.get_value_at_percentile(99) if calls else 0,
        "attempts_max": stats.attempts.get_max_value() if calls else 0,
        "timeouts": stats.timeouts,
        "conflicts": stats.conflicts,
        "errors": stats.errors,
        "p50_ms": ms(stats.latency, 50),
        "p99_ms": ms(stats.latency, 99),
        "max_ms": max_ms(stats.latency),
    }
