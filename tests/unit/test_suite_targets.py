"""Targets of the suites: backend names, ``serve:NAME`` and ``nessie``; which suites run over REST,
and how a REST row reads in the matrix."""

from __future__ import annotations

import pytest

from conformance.matrix import render
from conformance.suite_targets import (
    CAPABILITIES,
    IN_PROCESS,
    LOCHKIT_SERVE,
    NESSIE,
    TARGET_CAPABILITIES,
    parse_target,
)

pytest_plugins = ["pytester"]


def test_target_names_parse_to_backend_and_transport() -> None:
    assert parse_target("rocksdb").transport == IN_PROCESS
    served = parse_target("serve:rocksdb")
    assert (served.backend, served.transport, served.over_rest) == ("rocksdb", LOCHKIT_SERVE, True)
    nessie = parse_target("nessie")
    assert (nessie.backend, nessie.transport) == (None, NESSIE)


@pytest.mark.parametrize("bad", ["serve:", "serve:nessie", "serve:serve:x"])
def test_a_serve_target_needs_a_lochkit_backend(bad: str) -> None:
    with pytest.raises(ValueError, match="serve:BACKEND"):
        parse_target(bad)


def test_every_missing_capability_has_a_reason() -> None:
    for transport, caps in CAPABILITIES.items():
        for name in TARGET_CAPABILITIES:
            if not getattr(caps, name):
                assert caps.reasons.get(name), f"{transport} lacks {name} without a reason"


PROBE = """
from conformance.all import TestPersistObjects, TestVersionStoreReads  # noqa: F401
"""


def test_over_rest_adds_serve_targets_to_the_version_store_suites_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--collect-only", "-q", "--backend", "inmemory", "--over-rest"
    )
    ids = [line for line in result.outlines if "::" in line]
    assert any("TestVersionStoreReads" in i and "[serve:inmemory]" in i for i in ids)
    assert any("TestVersionStoreReads" in i and "[inmemory]" in i for i in ids)
    assert not any("TestPersistObjects" in i and "serve:" in i for i in ids)


def test_only_rest_targets_skip_the_storage_suites_with_the_reason(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-rs",
        "--backend",
        "serve:inmemory",
        "-k",
        "test_store_and_fetch or test_entries_paging",
    )
    result.stdout.fnmatch_lines(["*this suite drives the storage layer (Persist) directly*"])
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 1
    assert outcomes.get("skipped", 0) >= 1


def test_a_misspelt_serve_backend_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--backend", "serve:rocksbd")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_matrix_marks_groups_a_rest_target_does_not_run() -> None:
    report = {
        "serve:rocksdb": {"areas": {"versionstore.reads": {"counts": {"passed": 3, "skipped": 1}}}},
        "rocksdb": {
            "areas": {
                "versionstore.reads": {"counts": {"passed": 4}},
                "persist.objects": {"counts": {"passed": 9}},
            }
        },
    }
    lines = render(report, markdown=True).splitlines()
    served = next(line for line in lines if line.startswith("| serve:rocksdb"))
    assert served.split(" | ")[2:4] == ["—", "3 1s"]
