"""This directory is named like the package it tests: its modules must import the real one."""

from __future__ import annotations

from pathlib import Path

import loadgen
from loadgen import contentgen


def test_loadgen_is_the_package_under_test_not_this_directory() -> None:
    here = Path(__file__).resolve().parent
    for module in (loadgen, contentgen):
        assert module.__file__ is not None
        assert here not in Path(module.__file__).resolve().parents, module.__file__
