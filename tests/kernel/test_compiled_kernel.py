"""The compiled kernel stores exactly the bytes the pure-Python source stores.

These run where lochkit itself runs compiled (a wheel built with ``LOCHKIT_COMPILE=1``; CI's
compiled-kernel step). ``LOCHKIT_PURE_TREE`` names a checkout of the same source without compiled
modules: it draws the reference histories in a subprocess. In a pure-Python run there is nothing to
compare, and the tests say so as skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from persist_spi.kernel import COMPILED_MODULES, compiled_modules
from tests.kernel.histories import digests

SEEDS = range(40)
PURE_TREE = "LOCHKIT_PURE_TREE"

pytestmark = pytest.mark.skipif(
    not compiled_modules(),
    reason="lochkit runs pure Python here: these compare a compiled build with it (CI runs them compiled)",
)


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    tree = os.environ.get(PURE_TREE)
    if not tree:
        pytest.fail(f"set {PURE_TREE} to a checkout of the same source, without compiled modules")
    done = subprocess.run(
        [sys.executable, "-m", "tests.kernel.histories", *map(str, SEEDS)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(Path(tree).resolve())},
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    drawn: dict[str, Any] = json.loads(done.stdout)
    return drawn


def test_every_module_of_the_kernel_runs_compiled() -> None:
    assert compiled_modules() == COMPILED_MODULES


def test_the_reference_ran_pure_python(reference: dict[str, Any]) -> None:
    assert reference["kernel"] == "pure Python"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_history_stores_the_same_bytes(reference: dict[str, Any], seed: int) -> None:
    expected = reference["histories"][str(seed)]
    assert len(expected) > 20  # a history that stored something
    assert digests(seed) == expected
