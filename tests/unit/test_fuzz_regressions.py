"""Every input the fuzzers ever crashed a decoder with, replayed: each must now be decoded or
rejected with the decoder's documented error. Add a crash as a file under
tests/fuzz_regressions/<target>/ (the fuzzer's crash-* artifact, renamed to say what it is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliability.fuzz.targets import SECRET, TARGETS

ROOT = Path(__file__).resolve().parents[1] / "fuzz_regressions"
CASES = sorted(p for p in ROOT.rglob("*") if p.is_file())


def test_every_regression_belongs_to_a_registered_target() -> None:
    assert CASES, "the regression corpus is empty"
    assert {p.parent.name for p in CASES} <= set(TARGETS)


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_regression_input_is_decoded_or_cleanly_rejected(case: Path) -> None:
    TARGETS[case.parent.name].check(case.read_bytes())


@pytest.mark.parametrize("case", [p for p in CASES if p.parent.name == "backend-urls"], ids=lambda p: p.name)
def test_url_regressions_never_show_the_password(case: Path) -> None:
    target = TARGETS["backend-urls"]
    rejection = ""
    try:
        target.run(case.read_bytes())
    except target.allowed as rejected:
        rejection = str(rejected)
    assert SECRET not in rejection


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_seed_is_accepted(name: str) -> None:
    """Seeds are valid inputs: a target that rejects them would only fuzz its error path."""
    target = TARGETS[name]
    seeds = target.seeds()
    assert seeds
    for seed in seeds:
        target.run(seed)
