"""The version-store counts over REST that the README and docs/rest.md quote are what the collected
tests' markers predict: the same capability checks the plugin's gate makes, with each backend's
declared capabilities, the REST targets' capabilities and the declared deviations. CI's measured
runs (serve:rocksdb, nessie) agree with the prediction; the other serve targets are predicted only."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import TypeGuard

import pytest

import conformance.all
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
from persist_spi.registry import backend_factory

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
SERVED = ("inmemory", "rocksdb", "postgres", "mongodb", "cassandra", "dynamodb")
TARGETS = (*(serve_name(b) for b in SERVED), NESSIE)
#: The areas of the version-store suites, the ones that run over REST.
VERSION_STORE = "versionstore."


@cache
def _declared(backend: str) -> Capabilities:
    return backend_factory(backend).capabilities  # looking a factory up reads the entry points


def _is_version_store_suite(cls: object) -> TypeGuard[type[ConformanceSuite]]:
    return isinstance(cls, type) and issubclass(cls, ConformanceSuite) and cls.area.startswith(VERSION_STORE)


def _needed(item: pytest.Item) -> list[str]:
    return [c for marker in item.iter_markers("lochkit_requires") for c in marker.args]


def _predicted(target_name: str, item: pytest.Item) -> str:
    """What the gate and the fixtures will make of ``item`` on the target ``target_name`` (passed
    meaning: expected to pass)."""
    cls = getattr(item, "cls", None)
    assert _is_version_store_suite(cls)
    target = parse_target(target_name)
    if target.over_rest and not getattr(cls, "runs_over_rest", False):
        return "skipped"
    needed = _needed(item)
    if missing_target_capability(target, needed):
        return "skipped"
    if target.backend is None:
        # A Nessie server has no backend: a test that reaches for the storage is skipped there.
        if "lochkit_backend_factory" in item.fixturenames:  # type: ignore[attr-defined]
            return "skipped"
        deviations = NESSIE_DEVIATIONS
    else:
        caps = _declared(target.backend)
        if missing_backend_capability(target.backend, caps, needed):
            return "skipped"
        deviations = {**caps.deviations, **SERVE_DEVIATIONS}
    reason = deviation_reason(deviations, cls, item.originalname)  # type: ignore[attr-defined]
    return "xfailed" if reason is not None else "passed"


#: Collected once for the module's tests (it takes seconds; pytester is per test).
_COLLECTED: dict[str, list[pytest.Item]] = {}


@pytest.fixture
def collected(pytester: pytest.Pytester) -> dict[str, list[pytest.Item]]:
    if not _COLLECTED:
        # Only the version-store suites run over REST: collect just them (what -k versionstore selects).
        suites = ", ".join(n for n, suite in vars(conformance.all).items() if _is_version_store_suite(suite))
        pytester.makepyfile(test_version_store=f"from conformance.all import {suites}  # noqa: F401")
        items, _ = pytester.inline_genitems("-p", "no:cacheprovider", "--backend", ",".join(TARGETS))
        _COLLECTED.update({target: [] for target in TARGETS})
        for item in items:
            callspec = getattr(item, "callspec", None)
            # A test that needs no backend is collected once, and belongs to whichever target runs.
            owners = [callspec.params["lochkit_backend_name"]] if callspec else TARGETS
            for target in owners:
                _COLLECTED[target].append(item)
    return _COLLECTED


def _counts(target: str, items: list[pytest.Item]) -> Counter[str]:
    return Counter(_predicted(target, item) for item in items)


def _flat(text: str) -> str:
    return " ".join(text.split())  # wherever the lines wrap


def test_every_target_collects_the_same_version_store_tests(collected: dict[str, list[pytest.Item]]) -> None:
    sizes = {target: len(items) for target, items in collected.items()}
    assert len(set(sizes.values())) == 1, sizes


def test_the_rest_docs_table_is_what_the_markers_predict(collected: dict[str, list[pytest.Item]]) -> None:
    docs = (ROOT / "docs" / "rest.md").read_text()
    for target, items in collected.items():
        counts = _counts(target, items)
        cells = [len(items), counts["passed"], counts["skipped"], counts["xfailed"]]
        row = rf"^\| `{re.escape(target)}`[^|]*" + "".join(rf" \| {n}" for n in cells) + r" \|"
        assert re.search(row, docs, re.M), f"{target}: {dict(counts)} of {len(items)}"


def test_every_measured_run_in_the_docs_table_is_what_the_markers_predict(
    collected: dict[str, list[pytest.Item]],
) -> None:
    docs = (ROOT / "docs" / "rest.md").read_text()
    measured = dict(re.findall(r"^\| `([a-z:]+)`[^|]*(?:\|[^|]*){4}\| (\d+ passed[^|(]*)", docs, re.M))
    assert set(measured) >= {serve_name("rocksdb"), NESSIE}  # what CI runs
    for target, outcome in measured.items():
        counts = _counts(target, collected[target])
        said = {what: int(n) for n, what in re.findall(r"(\d+) (passed|skipped|expected failures)", outcome)}
        assert said.get("passed") == counts["passed"], target
        assert said.get("skipped", 0) == counts["skipped"], target
        assert said.get("expected failures", 0) == counts["xfailed"], target


def test_the_serve_targets_own_skips_are_counted_in_the_docs(collected: dict[str, list[pytest.Item]]) -> None:
    served = parse_target(serve_name("inmemory"))
    items = collected[served.name]
    own = sum(1 for item in items if missing_target_capability(served, _needed(item)))
    docs = _flat((ROOT / "docs" / "rest.md").read_text())
    assert f"Over `serve:` that skips {own} of the {len(items)} version-store tests" in docs


def test_the_readme_quotes_the_predicted_nessie_counts(collected: dict[str, list[pytest.Item]]) -> None:
    counts = _counts(NESSIE, collected[NESSIE])
    readme = _flat((ROOT / "README.md").read_text())
    quoted = (
        f"The version-store suites against the real server: {counts['passed']} passed, "
        f"{counts['xfailed']} declared deviations, {counts['skipped']} skipped"
    )
    assert quoted in readme
    # The skips, split as docs/rest.md explains them.
    nessie = parse_target(NESSIE)
    capabilities = sum(1 for item in collected[NESSIE] if missing_target_capability(nessie, _needed(item)))
    storage = counts["skipped"] - capabilities
    docs = _flat((ROOT / "docs" / "rest.md").read_text())
    assert (
        f"the version-store suites give {counts['passed']} passed, {counts['skipped']} skipped "
        f"({capabilities} for capabilities a Nessie server lacks, {storage} for tests that read the "
        f"storage) and {counts['xfailed']} declared deviations"
    ) in docs


def test_the_docs_say_how_many_more_skip_on_ferretdb(collected: dict[str, list[pytest.Item]]) -> None:
    # The mongodb factory declares real MongoDB's capabilities; FerretDB, found at connection
    # time, declares no multi_process, so its run skips those tests too.
    served = parse_target(serve_name("mongodb"))
    more = sum(
        1
        for item in collected[served.name]
        if "multi_process" in _needed(item) and _predicted(served.name, item) == "passed"
    )
    docs = _flat((ROOT / "docs" / "rest.md").read_text())
    assert f"FerretDB declares no `multi_process`, so {more} more are skipped" in docs
