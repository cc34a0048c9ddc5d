"""A conftest that overrides ``lochkit_backend_factory`` gets each suite once, whatever --backend
names (the version-store suites used to run once per selected name, all against the same adapter)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_toy_adapters_version_store_tests_are_collected_once_for_two_backend_names() -> None:
    command = [
        "pytest",
        "--co",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/third_party",
        "--backend",
        "inmemory,rocksdb",
    ]
    collected = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    addressing = [line for line in collected if "::TestVersionStoreAddressing::" in line]
    assert addressing, "no version-store test was collected"
    assert all(line.endswith("[own-factory]") for line in addressing), addressing[:3]
    assert max(Counter(addressing).values()) == 1
