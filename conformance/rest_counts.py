"""What the version-store suites should give over REST, predicted from the collected tests' markers.

For each REST target (``serve:NAME`` for every backend ``lochkit serve`` runs on, and ``nessie``, a
real Nessie server) the same capability checks the plugin's gate makes, with each backend's declared
capabilities, the REST targets' own capabilities and the declared deviations, say whether a test
should pass, be skipped or fail as declared. ``python -m conformance.rest_counts --markdown-out
FILE`` writes the table the REST documentation includes (``docs/generated/rest-counts.md``); a unit
test keeps it equal to a fresh prediction. Collecting asks no server for anything.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final, TypeGuard

from conformance import snippets
from conformance.collection import collect
from conformance.matrix import ReportError, load
from conformance.suite_targets import (
    NESSIE,
    NESSIE_DEVIATIONS,
    SERVE_DEVIATIONS,
    missing_backend_capability,
    missing_target_capability,
    parse_target,
    serve_name,
)
from conformance.suites.base import ConformanceSuite, deviation_reason
from persist_spi.adapter import Capabilities
from persist_spi.registry import discover_backends

#: The backends ``lochkit serve`` is predicted over (the ones with a server or embedded store here).
#: Bigtable's client is an extra of its own: where it is not installed, its target is predicted
#: from its declared capabilities over the tests collected for the others (every served target
#: collects the same tests).
SERVED: Final = ("inmemory", "rocksdb", "postgres", "mariadb", "mongodb", "cassandra", "dynamodb", "bigtable")
TARGETS: Final = (*(serve_name(b) for b in SERVED), NESSIE)
#: The areas of the version-store suites, the ones that run over REST.
VERSION_STORE: Final = "versionstore."


@cache
def _declared(backend: str) -> Capabilities:
    # Declared capabilities need no driver: the entry point's factory answers without it.
    factory = discover_backends()[backend].factory
    if factory is None:
        raise ValueError(f"backend {backend} failed to load")
    return factory.capabilities


def _collectable(target: str) -> bool:
    """Whether the plugin can collect ``target`` here (its backend's driver is installed)."""
    backend = parse_target(target).backend
    return backend is None or discover_backends()[backend].installed


def collect_args() -> tuple[str, ...]:
    """What collecting the version-store suites for every target that can be collected here takes."""
    return ("-k", "versionstore", "--backend", ",".join(t for t in TARGETS if _collectable(t)))


def is_version_store_suite(cls: object) -> TypeGuard[type[ConformanceSuite]]:
    return isinstance(cls, type) and issubclass(cls, ConformanceSuite) and cls.area.startswith(VERSION_STORE)


def needed(item: Any) -> list[str]:
    """The capabilities a collected test asks for (``lochkit_requires`` markers)."""
    return [c for marker in item.iter_markers("lochkit_requires") for c in marker.args]


def predicted(target_name: str, item: Any) -> str:
    """What the gate and the fixtures will make of the collected test ``item`` on ``target_name``:
    ``passed`` (expected to pass), ``skipped`` or ``xfailed`` (a declared deviation)."""
    cls = getattr(item, "cls", None)
    if not is_version_store_suite(cls):
        raise ValueError(f"{item.nodeid} is not a version-store suite test")
    target = parse_target(target_name)
    if target.over_rest and not getattr(cls, "runs_over_rest", False):
        return "skipped"
    wanted = needed(item)
    if missing_target_capability(target, wanted):
        return "skipped"
    if target.backend is None:
        # A Nessie server has no backend: a test that reaches for the storage is skipped there.
        if "lochkit_backend_factory" in item.fixturenames:
            return "skipped"
        deviations = NESSIE_DEVIATIONS
    else:
        caps = _declared(target.backend)
        if missing_backend_capability(target.backend, caps, wanted):
            return "skipped"
        deviations = {**caps.deviations, **SERVE_DEVIATIONS}
    reason = deviation_reason(deviations, cls, item.originalname)
    return "xfailed" if reason is not None else "passed"


@dataclass
class Prediction:
    #: Target -> its collected version-store tests (a test that needs no backend belongs to each).
    collected: dict[str, list[Any]] = field(default_factory=dict)

    def counts(self, target: str) -> Counter[str]:
        return Counter(predicted(target, item) for item in self.collected[target])

    def target_skips(self, target: str) -> int:
        """Tests ``target`` skips for its own missing capabilities (not its backend's)."""
        parsed = parse_target(target)
        return sum(1 for item in self.collected[target] if missing_target_capability(parsed, needed(item)))

    def more_skipped_without(self, target: str, capability: str) -> int:
        """Tests expected to pass on ``target`` that a backend lacking ``capability`` would skip."""
        return sum(
            1
            for item in self.collected[target]
            if capability in needed(item) and predicted(target, item) == "passed"
        )


def owner(item: Any) -> str | None:
    """The target a collected test runs on; None for a test that needs no backend."""
    callspec = getattr(item, "callspec", None)
    name = callspec.params.get("lochkit_backend_name") if callspec else None
    return name if isinstance(name, str) else None


def prediction_of(items: Sequence[Any]) -> Prediction:
    """The prediction for collected tests (those of other suites are left out)."""
    prediction = Prediction({target: [] for target in TARGETS})
    for item in items:
        if not is_version_store_suite(getattr(item, "cls", None)):
            continue
        # A test that needs no backend is collected once, and belongs to whichever target runs.
        target_name = owner(item)
        for target in [target_name] if target_name else TARGETS:
            prediction.collected[target].append(item)
    stand_in = next((t for t in TARGETS if t != NESSIE and prediction.collected[t]), None)
    for target in TARGETS:
        if stand_in is not None and not _collectable(target):
            prediction.collected[target] = list(prediction.collected[stand_in])
    return prediction


class _Collector:
    def __init__(self) -> None:
        self.prediction = Prediction()

    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        self.prediction = prediction_of(items)


def predict() -> Prediction:
    """Collect the version-store suites for every REST target (in this process)."""
    collector = _Collector()
    collect(collector, collect_args())
    return collector.prediction


def check(prediction: Prediction, report: dict[str, Any]) -> list[str]:
    """How a conformance report's REST targets differ from the prediction: one line per target
    whose counts differ (empty when every REST target in the report ran as predicted). A test that
    needs no backend runs once per run, recorded under one of the targets: a target's counts may
    include it or not."""
    problems = []
    for target, data in sorted(report.items()):
        if target not in prediction.collected:
            continue
        items = prediction.collected[target]
        owned = [item for item in items if owner(item)]
        with_shared = +Counter(predicted(target, item) for item in items)
        without_shared = +Counter(predicted(target, item) for item in owned)
        measured: Counter[str] = Counter()
        for area in data["areas"].values():
            measured.update({o: n for o, n in area["counts"].items() if n})
        if +measured not in (with_shared, without_shared):
            problems.append(f"{target}: ran {dict(+measured)}, predicted {dict(with_shared)}")
    return problems


def markdown(prediction: Prediction) -> str:
    """The table per target, then the skips it explains."""
    lines = [
        "| target | tests | expected passed | expected skipped | expected failures (declared) |",
        "|---|---|---|---|---|",
    ]
    for target in TARGETS:
        counts = prediction.counts(target)
        lines.append(
            f"| `{target}` | {len(prediction.collected[target])} | {counts['passed']} | {counts['skipped']} "
            f"| {counts['xfailed']} |"
        )
    served = serve_name(SERVED[0])
    nessie = prediction.counts(NESSIE)
    nessie_own = prediction.target_skips(NESSIE)
    lines += [
        "",
        (
            f"Every `serve:` target skips {prediction.target_skips(served)} of the "
            f"{len(prediction.collected[served])} version-store tests for capabilities REST lacks; the "
            "other skips are its backend's missing capabilities. FerretDB declares no `multi_process`, so "
            f"{prediction.more_skipped_without(serve_name('mongodb'), 'multi_process')} more are skipped on "
            "`serve:mongodb` when it runs on FerretDB. On `nessie`, "
            f"{nessie_own} skips are capabilities a Nessie server lacks and {nessie['skipped'] - nessie_own} "
            "are tests that read the storage."
        ),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.rest_counts",
        description="Predict the version-store suites' counts over REST from the collected tests' markers.",
    )
    snippets.add_option(parser, "the table")
    parser.add_argument(
        "--check",
        metavar="REPORT",
        type=Path,
        help="instead, compare the REST targets of a conformance report (--lochkit-report) with the "
        "prediction; exit 1 if any differs",
    )
    args = parser.parse_args(argv)
    snippets.refuse_unwritable(parser, args, "--markdown-out")
    if args.check is not None:
        try:
            report = load(args.check)
        except ReportError as e:
            parser.error(str(e))
        problems = check(predict(), report)
        for line in problems:
            print(line, file=sys.stderr)
        checked = sorted(t for t in report if t in TARGETS)
        print(f"{', '.join(checked) or 'no REST target'}: {'differs' if problems else 'as predicted'}")
        return 1 if problems else 0
    table = markdown(predict())
    print(table)
    if args.markdown_out:
        command = snippets.invocation(["python", "-m", "conformance.rest_counts"], argv)
        snippets.write(
            args.markdown_out, table, command, source="predicted from the collected tests' markers"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
