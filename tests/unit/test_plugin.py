"""The conformance plugin's own behaviour: declared deviations are strict expected failures,
missing capabilities skip with their reason, and reports count per area."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest_plugins = ["pytester"]

FACTORY = """
import pytest
from backends.inmemory import InMemoryBackendFactory
from backends.inmemory.adapter import InMemoryAdapter
from persist_spi.adapter import Capabilities
from conformance.suites.base import ConformanceSuite

REASONS = {"multi_process": "one lock"}
CAPS = Capabilities(durable=False, deviations={DEVIATIONS}, capability_reasons=REASONS)


class Adapter(InMemoryAdapter):
    name = "probe"

    @property
    def capabilities(self):
        return CAPS


class Factory(InMemoryBackendFactory):
    name = "probe"

    @property
    def capabilities(self):
        return CAPS

    def create(self, url=None, options=None):
        return Adapter("probe")


@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return Factory()


class TestProbe(ConformanceSuite):
    area = "probe.area"

    def test_passes(self, persist):
        assert persist.fetch_reference("x") is None

    def test_fails(self, persist):
        assert persist.fetch_reference("x") is not None

    @pytest.mark.lochkit_requires("multi_process")
    def test_needs_processes(self, persist):
        pass
"""


def _run(pytester: pytest.Pytester, deviations: dict[str, str]) -> tuple[pytest.RunResult, dict[str, Any]]:
    pytester.makepyfile(test_probe=FACTORY.replace("{DEVIATIONS}", repr(deviations)))
    report = pytester.path / "report.json"
    result = pytester.runpytest("-p", "no:cacheprovider", "--lochkit-report", str(report))
    return result, json.loads(report.read_text())


def test_a_declared_deviation_is_an_expected_failure(pytester: pytest.Pytester) -> None:
    result, report = _run(pytester, {"test_fails": "the probe never finds refs"})
    result.assert_outcomes(passed=1, xfailed=1, skipped=1)
    area = report["probe"]["areas"]["probe.area"]
    assert area["counts"]["xfailed"] == 1
    assert "the probe never finds refs" in area["not_passed"]["TestProbe::test_fails"]["reason"]
    assert "one lock" in area["not_passed"]["TestProbe::test_needs_processes"]["reason"]


def test_a_deviation_that_no_longer_holds_fails_the_run(pytester: pytest.Pytester) -> None:
    result, report = _run(pytester, {"test_passes": "stale declaration"})
    assert result.ret != 0
    result.assert_outcomes(failed=2, skipped=1)  # the XPASS(strict) plus the real failure
    assert report["probe"]["areas"]["probe.area"]["counts"]["failed"] == 2


def test_an_undeclared_failure_fails_the_run(pytester: pytest.Pytester) -> None:
    result, _ = _run(pytester, {})
    assert result.ret != 0
    result.assert_outcomes(passed=1, failed=1, skipped=1)


def test_a_misspelt_backend_is_one_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=FACTORY.replace("{DEVIATIONS}", "{}"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend", "inmemroy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*No backend named 'inmemroy' is registered (known: *inmemory*"])


BROKEN_FACTORY = """
import pytest
from backends.inmemory import InMemoryBackendFactory
from conformance.suites.base import ConformanceSuite
from persist_spi.errors import BackendUnavailable

CREATED = []


class Factory(InMemoryBackendFactory):
    name = "refusing"

    def create(self, url=None, options=None):
        CREATED.append(url)
        raise BackendUnavailable("refusing", "nowhere", "cannot reach the server", "Start it")


@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return Factory()


class TestProbe(ConformanceSuite):
    area = "probe.area"

    @pytest.mark.parametrize("n", range(3))
    def test_needs_a_backend(self, persist, n):
        pass


def test_the_server_was_asked_once():
    assert len(CREATED) == 1
"""


def test_a_backend_that_cannot_be_set_up_fails_each_test_without_retrying(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_probe=BROKEN_FACTORY)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.parseoutcomes() == {"passed": 1, "errors": 1, "blocked": 2}
    result.stdout.fnmatch_lines(
        [
            "*refusing could not be set up: refusing at nowhere: cannot reach the server",
            "fix: Start it",
        ]
    )


ISOLATION = """
from contextlib import closing

import pytest
from conformance.suites.base import ConformanceSuite
from persist_spi.objs import content_value
from persist_spi.references import Reference
from persist_spi.ids import random_obj_id


class TestIsolation(ConformanceSuite):
    area = "probe.isolation"

    @pytest.mark.parametrize("n", range(3))
    def test_starts_empty_and_leaves_data_behind(self, persist, persist_factory, n):
        other = persist_factory("shared-name")
        for p in (persist, other):
            with closing(p.scan_all_objects(None)) as found:
                assert list(found) == []
            assert p.fetch_reference("refs/heads/x") is None
            p.store_obj(content_value("cid", 1, b"left behind %d" % n))
            p.add_reference(Reference("refs/heads/x", random_obj_id()))
"""


@pytest.mark.parametrize("backend", ["inmemory", "rocksdb"])
def test_every_test_starts_on_empty_repositories(pytester: pytest.Pytester, backend: str) -> None:
    """What one test leaves behind, in the default repository or a named one, the next never sees."""
    pytester.makepyfile(test_isolation=ISOLATION)
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend", backend)
    result.assert_outcomes(passed=3)


UNKNOWN_CAPABILITY = """
import pytest
from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    area = "probe.area"

    @pytest.mark.lochkit_requires("scan")
    def test_needs_scans(self, persist):
        pass
"""


def test_requiring_a_capability_that_does_not_exist_is_an_error_naming_the_known_ones(
    pytester: pytest.Pytester,
) -> None:
    """Not a skip: a misspelt (or retired) capability would otherwise skip its test forever."""
    pytester.makepyfile(test_probe=UNKNOWN_CAPABILITY)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*unknown capability 'scan'; the capabilities are hard_object_size_limit, multi_process, durable, *"]
    )


def test_every_autouse_fixture_of_a_suite_runs_after_the_gate() -> None:
    """The gate records each test's backend and area for the report. A suite's own autouse
    fixture runs before fixtures named by ``usefixtures``, so one that reaches the backend without
    asking for the gate first would skip its tests (on a backend not available here) before they
    are recorded, and the report would lose them. Read from the suites' source, so that no
    pytest internals are involved."""
    import ast
    from pathlib import Path

    import conformance.suites

    unordered: list[str] = []
    autouse_fixtures = 0
    for path in sorted(Path(conformance.suites.__file__).parent.glob("*.py")):
        for cls in ast.walk(ast.parse(path.read_text())):
            if not isinstance(cls, ast.ClassDef):
                continue
            for function in cls.body:
                if not isinstance(function, ast.FunctionDef):
                    continue
                decorators = [ast.unparse(d) for d in function.decorator_list]
                if not any(d.startswith("pytest.fixture") and "autouse=True" in d for d in decorators):
                    continue
                autouse_fixtures += 1
                if "_lochkit_gate" not in [a.arg for a in function.args.args]:
                    unordered.append(f"{path.name}: {cls.name}.{function.name}")
    assert autouse_fixtures > 0, "no autouse fixture found: the scan no longer reads the suites"
    assert unordered == []
