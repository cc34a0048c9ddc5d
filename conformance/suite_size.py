"""How many conformance tests there are, per suite area, counted by collecting the suites.

``python -m conformance.suite_size [--markdown-out FILE]`` prints the table; the documentation
includes the snippet it writes (``docs/generated/suite-size.md``), and a unit test keeps that
snippet equal to a fresh count. Collecting asks no database for anything.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance import snippets
from conformance.collection import collect

#: Collected for this backend: every backend collects the same tests (capabilities are checked
#: when a test runs), and the in-memory one needs no driver.
BACKEND = "inmemory"
#: The suite groups' order in the table: the contract, the logic above it, Nessie's model, the cache.
GROUP_ORDER = ("persist", "logic", "versionstore", "cache")


@dataclass
class SuiteSize:
    #: Tests per area that run once for each backend ``--backend`` names.
    per_backend: Counter[str] = field(default_factory=Counter)
    #: Tests per area that need no backend: they run once whatever ``--backend`` names.
    once: Counter[str] = field(default_factory=Counter)

    @property
    def backend_total(self) -> int:
        return sum(self.per_backend.values())

    @property
    def once_total(self) -> int:
        return sum(self.once.values())


class _Collector:
    """A pytest plugin that keeps each collected suite test's area and whether it takes a backend."""

    def __init__(self) -> None:
        self.size = SuiteSize()

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        for item in items:
            area = getattr(getattr(item, "cls", None), "area", None)
            if area is None:
                continue
            callspec = getattr(item, "callspec", None)
            takes_backend = callspec is not None and "lochkit_backend_name" in callspec.params
            (self.size.per_backend if takes_backend else self.size.once)[area] += 1


def count() -> SuiteSize:
    """Collect every suite for one backend (in this process) and count its tests by area."""
    collector = _Collector()
    collect(collector, ["--backend", BACKEND])
    return collector.size


def _group_key(area: str) -> tuple[int, str]:
    group = area.split(".")[0]
    return (GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER), area)


def markdown(size: SuiteSize) -> str:
    """One row per suite area, then the whole suite for one backend."""
    lines = ["| area | tests per backend |", "|---|---|"]
    areas = sorted(set(size.per_backend) | set(size.once), key=_group_key)
    for area in areas:
        cell = str(size.per_backend[area])
        if size.once[area]:
            cell += f" (+ {size.once[area]} that runs once whatever `--backend` names)"
        lines.append(f"| `{area}` | {cell} |")
    lines.append(f"| **all suites** | **{size.backend_total}** |")
    total = size.backend_total + size.once_total
    lines += [
        "",
        (
            f"A run on one backend collects {total} tests: {size.backend_total} per backend and "
            f"{size.once_total} that needs no backend. On a backend that cannot be obtained, pytest's last "
            f"line reads `1 error, {total - 1} blocked`; under `--backend all` such a backend is skipped "
            f"with `SKIPPED [{size.backend_total}]`."
        ),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.suite_size", description="Count the conformance tests per suite area."
    )
    snippets.add_option(parser, "the table")
    args = parser.parse_args(argv)
    snippets.refuse_unwritable(parser, args, "--markdown-out")
    table = markdown(count())
    print(table)
    if args.markdown_out:
        command = snippets.invocation(["python", "-m", "conformance.suite_size"], argv)
        snippets.write(args.markdown_out, table, command, source="counted by collecting the suites")
    return 0


if __name__ == "__main__":
    sys.exit(main())
