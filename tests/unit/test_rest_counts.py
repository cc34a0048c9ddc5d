"""The version-store counts over REST that the documentation shows (docs/generated/rest-counts.md)
are what the collected tests' markers predict now, and ``--check`` tells a real run that differs
from the prediction from one that does not."""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import pytest

import conformance.all
from conformance import rest_counts, snippets
from conformance.rest_counts import (
    TARGETS,
    Prediction,
    check,
    collect_args,
    is_version_store_suite,
    markdown,
    predicted,
    prediction_of,
)
from conformance.suite_targets import NESSIE

from .doc_pages import DOCS, ROOT

SNIPPET = DOCS / "generated" / "rest-counts.md"


pytest_plugins = ["pytester"]
#: Collected once for the module's tests (it takes seconds; pytester is per test).
_PREDICTION: list[Prediction] = []


@pytest.fixture
def prediction(pytester: pytest.Pytester) -> Prediction:
    if not _PREDICTION:
        # Only the version-store suites run over REST: collect just them, as the command does.
        suites = ", ".join(n for n, suite in vars(conformance.all).items() if is_version_store_suite(suite))
        pytester.makepyfile(test_version_store=f"from conformance.all import {suites}  # noqa: F401")
        items, _ = pytester.inline_genitems("-p", "no:cacheprovider", *collect_args())
        _PREDICTION.append(prediction_of(items))
    return _PREDICTION[0]


def test_every_target_collects_the_same_version_store_tests(prediction: Prediction) -> None:
    sizes = {target: len(items) for target, items in prediction.collected.items()}
    assert set(sizes) == set(TARGETS)
    assert len(set(sizes.values())) == 1, sizes


def test_the_documented_counts_are_what_the_markers_predict(prediction: Prediction) -> None:
    assert snippets.body(SNIPPET.read_text()) == markdown(prediction), (
        f"{SNIPPET.relative_to(ROOT)} is out of date: run {snippets.command_of(SNIPPET.read_text())}"
    )


def _report_of(prediction: Prediction, target: str) -> dict[str, Any]:
    """A conformance report of ``target`` in which every test did what the prediction says."""
    areas: dict[str, Any] = {}
    for item in prediction.collected[target]:
        counts = areas.setdefault(item.cls.area, {"counts": {}})["counts"]
        outcome = predicted(target, item)
        counts[outcome] = counts.get(outcome, 0) + 1
    return {target: {"areas": areas, "provisioning": {"method": "external"}}}


def test_a_run_as_predicted_passes_the_check_and_one_that_differs_does_not(prediction: Prediction) -> None:
    report = _report_of(prediction, NESSIE)
    assert check(prediction, report) == []
    differs = copy.deepcopy(report)
    area = next(iter(differs[NESSIE]["areas"].values()))
    area["counts"]["failed"] = 1
    problems = check(prediction, differs)
    assert len(problems) == 1
    assert problems[0].startswith(f"{NESSIE}: ran ")


def test_the_check_is_a_command_that_exits_1_on_a_difference(prediction: Prediction, tmp_path: Any) -> None:
    import json

    report = _report_of(prediction, NESSIE)
    next(iter(report[NESSIE]["areas"].values()))["counts"]["passed"] += 1
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    done = subprocess.run(
        [sys.executable, "-m", "conformance.rest_counts", "--check", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "nessie: differs" in done.stdout


def test_a_target_whose_driver_is_missing_is_predicted_as_if_collected(
    prediction: Prediction, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bigtable's client is not in the ``all`` extra (nor in CI): its ``serve:`` target cannot be
    collected there, and is predicted from its declared capabilities over another target's tests,
    which must give what collecting it gives where it is installed."""
    pytest.importorskip("google.cloud.bigtable_v2")
    target = "serve:bigtable"
    # The collected items once each (a test that needs no backend is listed under every target).
    items = list({id(item): item for items in prediction.collected.values() for item in items}.values())
    monkeypatch.setattr(rest_counts, "_collectable", lambda t: t != target)
    without = prediction_of([item for item in items if rest_counts.owner(item) != target])
    assert without.counts(target) == prediction.counts(target)
    assert len(without.collected[target]) == len(prediction.collected[target])
    assert target not in collect_args()[-1].split(",")
