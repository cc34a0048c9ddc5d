"""Per-area results of a conformance run: printed at the end and optionally written as JSON."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")


@dataclass
class AreaCounts:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    reasons: dict[str, tuple[str, str]] = field(default_factory=dict)  # test id -> (outcome, reason)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


class ConformanceReport:
    def __init__(self) -> None:
        # backend -> area -> counts
        self.areas: dict[str, dict[str, AreaCounts]] = defaultdict(lambda: defaultdict(AreaCounts))
        self.provisioning: dict[str, dict[str, Any]] = {}

    def record(self, backend: str, area: str, outcome: str, test_id: str, reason: str | None) -> None:
        entry = self.areas[backend][area]
        entry.counts[outcome] += 1
        if reason and outcome in ("skipped", "xfailed", "xpassed"):
            entry.reasons[test_id] = (outcome, reason)

    @property
    def failed(self) -> bool:
        return any(
            c.counts["failed"] or c.counts["error"] or c.counts["xpassed"]
            for areas in self.areas.values()
            for c in areas.values()
        )

    def lines(self) -> list[str]:
        out: list[str] = []
        for backend in sorted(self.areas):
            info = self.provisioning.get(backend, {})
            out.append(f"backend {backend}: {info.get('description', '')}".rstrip())
            header = f"  {'area':<28}" + "".join(f"{o:>9}" for o in OUTCOMES)
            out.append(header)
            totals = dict.fromkeys(OUTCOMES, 0)
            for area in sorted(self.areas[backend]):
                counts = self.areas[backend][area].counts
                for o in OUTCOMES:
                    totals[o] += counts[o]
                out.append(f"  {area:<28}" + "".join(f"{counts[o]:>9}" for o in OUTCOMES))
            out.append(f"  {'TOTAL':<28}" + "".join(f"{totals[o]:>9}" for o in OUTCOMES))
            for area in sorted(self.areas[backend]):
                for test_id, (outcome, reason) in sorted(self.areas[backend][area].reasons.items()):
                    out.append(f"    {outcome}: {test_id}: {reason}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            backend: {
                "provisioning": self.provisioning.get(backend, {}),
                "areas": {
                    area: {
                        "counts": c.counts,
                        "not_passed": {t: {"outcome": o, "reason": r} for t, (o, r) in c.reasons.items()},
                    }
                    for area, c in sorted(areas.items())
                },
            }
            for backend, areas in sorted(self.areas.items())
        }

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")
