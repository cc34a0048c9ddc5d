"""The plugin is loaded into every pytest session where lochkit is installed: a project that never
uses it must not notice it (no signal handler, no fixture, no plugin object, no output), and a
project that does gets all of it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import conformance

pytest_plugins = ["pytester"]

#: Names, in the inner session, of plugin objects that come from lochkit's modules (the entry point
#: itself, registered as "lochkit", is always there: pytest needs its options to parse a command line).
OUR_PLUGINS = """
import types


def lochkit_plugins(config):
    found = []
    for name, plugin in config.pluginmanager.list_name_plugin():
        module = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
        if name != "lochkit" and module.split(".")[0] in ("conformance", "persist_spi", "backends"):
            found.append(name)
    return found
"""

PLAIN_CONFTEST = f"""
import signal

import pytest

{OUR_PLUGINS}

SIGTERM_BEFORE = signal.getsignal(signal.SIGTERM)


@pytest.fixture
def persist():
    # The project's own fixture that happens to share a name with one of lochkit's.
    return "mine"
"""

PLAIN_TESTS = """
import signal

from conftest import SIGTERM_BEFORE, lochkit_plugins


def test_sigterm_is_left_alone():
    assert signal.getsignal(signal.SIGTERM) == SIGTERM_BEFORE


def test_a_fixture_of_the_same_name_is_the_projects(persist):
    assert persist == "mine"


def test_no_plugin_object_of_the_toolkit_is_registered(request):
    assert lochkit_plugins(request.config) == []
"""

USING_TESTS = f"""
import signal

{OUR_PLUGINS}


def test_sigterm_ends_the_run_like_ctrl_c(persist):
    handler = signal.getsignal(signal.SIGTERM)
    assert getattr(handler, "__module__", "").startswith("conformance."), handler


def test_its_plugin_objects_are_registered(request, persist):
    assert lochkit_plugins(request.config) != []
"""

SUITE_TESTS = """
import signal

from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    area = "probe.area"

    def test_runs_on_a_backend(self, persist):
        assert persist.fetch_reference("x") is None
        handler = signal.getsignal(signal.SIGTERM)
        assert getattr(handler, "__module__", "").startswith("conformance."), handler
"""


def _run(pytester: pytest.Pytester, **files: str) -> pytest.RunResult:
    pytester.makepyfile(**files)
    # A process of its own: signal handlers are per process, and this session's may differ.
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--no-header", "--setup-show", "-rA")


def test_a_project_that_does_not_use_lochkit_does_not_see_it(pytester: pytest.Pytester) -> None:
    result = _run(pytester, conftest=PLAIN_CONFTEST, test_plain=PLAIN_TESTS)
    result.assert_outcomes(passed=3)
    output = result.stdout.str() + result.stderr.str()
    # No fixture of lochkit's set up (--setup-show names every one), no summary, no warning.
    assert "lochkit" not in output.lower(), output


def test_a_test_using_a_lochkit_fixture_wakes_the_plugin(pytester: pytest.Pytester) -> None:
    result = _run(pytester, test_using=USING_TESTS)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*SETUP    S lochkit_backend_name*", "*SETUP    F persist (fixtures used:*"])


def test_a_conformance_suite_wakes_the_plugin_and_gets_its_summary(pytester: pytest.Pytester) -> None:
    result = _run(pytester, test_suite=SUITE_TESTS)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*lochkit conformance summary*", "*probe.area*"])


def test_no_module_of_the_plugin_imports_pytests_private_modules() -> None:
    """pytest's private modules change without notice between versions; the plugin is loaded by
    every session of every project where lochkit is installed, so it keeps to the public API."""
    offenders = []
    for path in sorted(Path(conformance.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "_pytest"]
    assert offenders == []
