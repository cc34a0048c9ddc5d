"""The list of differences from Nessie lives in one place (conformance/nessie_differences.py): the
documentation's short list (docs/generated/nessie-differences-summary.md) and
docs/nessie-differences.md are exactly its rendering, and everything an entry points at (tests,
suite tests) exists."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import conformance.all
from conformance import snippets
from conformance.nessie_differences import (
    DIFFERENCES,
    Difference,
    render_markdown,
    suite_deviations,
    summary_list,
)

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "docs" / "generated" / "nessie-differences-summary.md"


def test_the_short_list_is_exactly_the_registered_differences() -> None:
    kept = SUMMARY.read_text(encoding="utf-8")
    assert snippets.body(kept) == summary_list().strip(), (
        f"{SUMMARY.relative_to(ROOT)} is out of date: run {snippets.command_of(kept)}"
    )
    bullets = [line for line in snippets.body(kept).splitlines() if line.startswith("- **")]
    assert len(bullets) == len(DIFFERENCES)


def test_the_differences_document_is_the_rendered_registry() -> None:
    rendered = (ROOT / "docs" / "nessie-differences.md").read_text(encoding="utf-8")
    assert rendered == render_markdown(), (
        "docs/nessie-differences.md is out of date: run "
        "`python -m conformance.nessie_differences --markdown > docs/nessie-differences.md`"
    )


@pytest.mark.parametrize("difference", DIFFERENCES, ids=lambda d: d.id)
def test_every_named_test_exists(difference: Difference) -> None:
    assert difference.tests, f"{difference.id} names no test"
    for reference in difference.tests:
        path, _, name = reference.partition("::")
        assert (ROOT / path).exists(), f"{difference.id}: {path} does not exist"
        if name:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            assert name in functions, f"{difference.id}: {path} has no {name}"


def test_every_declared_suite_deviation_names_a_suite_test() -> None:
    for test in suite_deviations():
        cls, _, method = test.partition("::")
        assert cls.endswith("Suite"), f"{test}: declare deviations by the library's suite name"
        suite = getattr(conformance.all, "Test" + cls.removesuffix("Suite"), None)
        assert suite is not None, f"no suite class {cls}"
        assert callable(getattr(suite, method, None)), f"{cls} has no {method}"


def test_every_difference_says_both_sides_and_why() -> None:
    for d in DIFFERENCES:
        assert all((d.title, d.summary, d.lochkit, d.nessie, d.reason)), d.id


def test_the_real_servers_declared_deviations_are_the_registered_ones() -> None:
    from conformance.suite_targets import NESSIE_DEVIATIONS

    assert suite_deviations() == NESSIE_DEVIATIONS
