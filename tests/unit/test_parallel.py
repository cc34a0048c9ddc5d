"""The suites on several pytest-xdist workers: each backend's tests stay on one worker, and the
report covers every worker's tests."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest

from conformance.parallel import unit_of
from conformance.report import ConformanceReport

pytest_plugins = ["pytester"]

BACKENDS = ["inmemory", "toy-sqlite", "serve:rocksdb", "rocksdb", "nessie"]


@pytest.mark.parametrize(
    ("nodeid", "unit"),
    [
        ("t.py::TestX::test_a[inmemory]", "inmemory"),
        ("t.py::TestX::test_a[inmemory-store_obj-after-write]", "inmemory"),
        ("t.py::TestX::test_a[toy-sqlite]", "toy-sqlite"),
        ("t.py::TestX::test_a[toy-sqlite-x]", "toy-sqlite"),
        # Over REST, a target shares its backend's server, so its unit.
        ("t.py::TestX::test_a[serve:rocksdb]", "rocksdb"),
        ("t.py::TestX::test_a[rocksdb-1]", "rocksdb"),
        ("t.py::TestX::test_a[nessie]", "nessie"),
        # Not a backend's test: no parameter, another first parameter, a name only starting alike.
        ("t.py::TestX::test_a", None),
        ("t.py::test_a[1-inmemory]", None),
        ("t.py::test_a[inmemoryish]", None),
        ("t.py::test_a[toy]", None),
        ("dir[x]/t.py::test_a", None),
    ],
)
def test_a_test_belongs_to_the_backend_its_parameter_id_starts_with(nodeid: str, unit: str | None) -> None:
    assert unit_of(nodeid, BACKENDS) == unit


def test_reports_of_two_processes_merge_into_the_report_of_one() -> None:
    first, second, whole = ConformanceReport(), ConformanceReport(), ConformanceReport()
    rows = [
        ("inmemory", "a", "passed", "T::x[inmemory]", None),
        ("inmemory", "a", "skipped", "T::y[inmemory]", "no disk"),
        ("rocksdb", "a", "failed", "T::x[rocksdb]", None),
        ("rocksdb", "b", "error", "T::z[rocksdb]", None),
    ]
    for i, row in enumerate(rows):
        (first if i % 2 else second).record(*row, blocked=row[2] == "error")
        whole.record(*row, blocked=row[2] == "error")
    first.provisioning["rocksdb"] = {"method": "embedded"}
    whole.provisioning["rocksdb"] = {"method": "embedded"}
    merged = ConformanceReport()
    for part in (first, second):
        merged.merge(json.loads(json.dumps(part.to_json())), dict(part.blocked))
    assert merged.to_json() == whole.to_json()
    assert merged.lines() == whole.lines()
    assert merged.blocked == whole.blocked


SUITE = """
import os
import pytest
from conformance.suites.base import ConformanceSuite


class TestWhere(ConformanceSuite):
    area = "where"

    @pytest.mark.parametrize("n", range(6))
    def test_records_its_worker(self, persist, lochkit_backend_name, n):
        with open(os.environ["WHERE_LOG"], "a") as log:
            log.write(f"{lochkit_backend_name} {os.environ['PYTEST_XDIST_WORKER']}\\n")

    def test_fails_on_inmemory(self, persist, lochkit_backend_name):
        assert lochkit_backend_name != "inmemory"


def test_of_no_backend():
    pass
"""


def test_under_xdist_each_backend_runs_on_one_worker_and_the_report_counts_all(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_where=SUITE)
    where = pytester.path / "where.log"
    monkeypatch.setenv("WHERE_LOG", str(where))
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        "-n", "2", "-p", "no:cacheprovider", "--backend", "inmemory,rocksdb", f"--lochkit-report={report}"
    )
    result.assert_outcomes(passed=14, failed=1)
    workers: dict[str, set[str]] = defaultdict(set)
    for line in where.read_text().splitlines():
        backend, worker = line.split()
        workers[backend].add(worker)
    assert {b: len(w) for b, w in workers.items()} == {"inmemory": 1, "rocksdb": 1}
    doc = json.loads(report.read_text())
    assert doc["inmemory"]["areas"]["where"]["counts"]["passed"] == 6
    assert doc["inmemory"]["areas"]["where"]["counts"]["failed"] == 1
    assert doc["rocksdb"]["areas"]["where"]["counts"]["passed"] == 7
    assert doc["rocksdb"]["provisioning"]["method"] == "embedded"
    # The summary the controller prints is the merged one.
    summary = result.stdout.str()
    assert re.search(r"backend inmemory:.*\n.*\n  where +6 +1", summary), summary


SCHEDULER_PROBE = """
import os


def pytest_sessionfinish(session):
    dsession = session.config.pluginmanager.getplugin("dsession")
    if dsession is not None:
        with open(os.environ["SCHEDULER_LOG"], "w") as log:
            log.write(type(dsession.sched).__name__)
"""


@pytest.mark.parametrize(
    ("args", "scheduler"), [((), "LoadScheduling"), (("--backend", "inmemory"), "BackendScheduling")]
)
def test_only_a_session_that_selects_backends_gets_lochkits_scheduling(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], scheduler: str
) -> None:
    """A project that merely has lochkit installed keeps xdist's own distribution under -n."""
    pytest.importorskip("xdist")
    monkeypatch.delenv("LOCHKIT_BACKEND", raising=False)
    pytester.makeconftest(SCHEDULER_PROBE)
    pytester.makepyfile(test_plain="def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    log = pytester.path / "scheduler.log"
    monkeypatch.setenv("SCHEDULER_LOG", str(log))
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=2)
    assert log.read_text() == scheduler
