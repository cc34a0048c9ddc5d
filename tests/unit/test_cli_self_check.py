"""``lochkit conformance --self-check``: what it refuses (the kill runs are CI's self-check step)."""

from __future__ import annotations

import pytest

from lochkit.cli import main


def test_conformance_needs_a_backend_or_the_self_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance"]) == 2
    assert "give --backend NAME" in capsys.readouterr().err


def test_an_unknown_mutant_names_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--self-check", "--mutant", "no-such-bug"]) == 2
    err = capsys.readouterr().err
    assert "No broken adapter named 'no-such-bug'" in err
    assert "cas-read-then-write" in err


@pytest.mark.parametrize(
    "extra", [["--backend", "postgres"], ["-k", "Objects"], ["--repeat", "0"], ["--jobs", "0"]]
)
def test_options_that_do_not_apply_are_refused(capsys: pytest.CaptureFixture[str], extra: list[str]) -> None:
    assert main(["conformance", "--self-check", *extra]) == 2
    assert "lochkit conformance:" in capsys.readouterr().err
