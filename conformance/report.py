"""Per-area results of a conformance run: printed at the end and optionally written as JSON."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "error")
_PLURAL = {"error": "errors"}
#: A reason shared by more tests than this is printed with a count instead of their names.
_NAMED_TESTS = 3


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
        #: backend -> how many of its errors were "blocked" (failed at once, after the first,
        #: for the same setup failure): counted apart only in the one-line summary, as pytest does.
        self.blocked: dict[str, int] = defaultdict(int)

    def record(
        self, backend: str, area: str, outcome: str, test_id: str, reason: str | None, blocked: bool = False
    ) -> None:
        entry = self.areas[backend][area]
        entry.counts[outcome] += 1
        if blocked:
            self.blocked[backend] += 1
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
            if info.get("method") == "none":
                # Not provisioned or refused: no test ran, so a table of zeros says nothing.
                out.append(f"backend {backend} {info.get('description', '')} ({self._counted(backend)})")
                continue
            out.append(f"backend {backend}: {info.get('description', '')}".rstrip())
            out.append(f"  {'area':<28}" + "".join(f"{o:>9}" for o in OUTCOMES))
            for area in sorted(self.areas[backend]):
                counts = self.areas[backend][area].counts
                out.append(f"  {area:<28}" + "".join(f"{counts[o]:>9}" for o in OUTCOMES))
            totals = self._totals(backend)
            out.append(f"  {'TOTAL':<28}" + "".join(f"{totals[o]:>9}" for o in OUTCOMES))
            out += self._reason_lines(backend)
        return out

    def _counted(self, backend: str) -> str:
        """Outcomes in pytest's own words (``1 error, 924 blocked``), so the two lines agree."""
        counts = {o: n for o, n in self._totals(backend).items() if n}
        blocked = self.blocked.get(backend, 0)
        if blocked:
            counts["error"] -= blocked
            counts = {o: n for o, n in counts.items() if n} | {"blocked": blocked}
        return ", ".join(f"{n} {_PLURAL.get(o, o) if n > 1 else o}" for o, n in counts.items())

    def _totals(self, backend: str) -> dict[str, int]:
        totals = dict.fromkeys(OUTCOMES, 0)
        for entry in self.areas[backend].values():
            for outcome in OUTCOMES:
                totals[outcome] += entry.counts[outcome]
        return totals

    def _reason_lines(self, backend: str) -> list[str]:
        """One line per distinct reason, naming its tests when there are few."""
        by_reason: dict[tuple[str, str], list[str]] = defaultdict(list)
        for area in sorted(self.areas[backend]):
            for test_id, (outcome, reason) in sorted(self.areas[backend][area].reasons.items()):
                by_reason[(outcome, reason)].append(test_id)
        out = []
        for (outcome, reason), tests in by_reason.items():
            if len(tests) <= _NAMED_TESTS:
                out.append(f"    {outcome}: {', '.join(tests)}: {reason}")
            else:
                out.append(f"    {outcome}: {len(tests)} tests: {reason}")
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

    def merge(self, doc: dict[str, Any], blocked: dict[str, int]) -> None:
        """Adds a report another process wrote (:meth:`to_json`) and its blocked counts to this one:
        the counts of a backend and area present in both are summed."""
        for backend, entry in doc.items():
            if entry.get("provisioning"):
                self.provisioning.setdefault(backend, entry["provisioning"])
            for area, found in entry["areas"].items():
                counts = self.areas[backend][area]
                for outcome, n in found["counts"].items():
                    counts.counts[outcome] = counts.counts.get(outcome, 0) + n
                for test_id, why in found["not_passed"].items():
                    counts.reasons[test_id] = (why["outcome"], why["reason"])
        for backend, n in blocked.items():
            self.blocked[backend] += n

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")
