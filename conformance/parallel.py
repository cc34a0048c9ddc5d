"""Running lochkit's tests on several pytest-xdist workers (``pytest -n 2``).

A worker keeps one backend's server up at a time (:mod:`conformance.backend_pool`), so spreading
one backend's tests over several workers would start its server on each, and stop it every time a
worker switched backends. Under xdist's default distribution (``load``, what ``-n`` alone selects)
this plugin therefore:

- when the command line (or ``LOCHKIT_BACKEND``) selects backends, schedules every test of one
  backend (a target over REST with its backend: they share one server) as one unit, which one
  worker runs from start to end; other tests go one by one, as ``load`` sends them. The largest
  units start first;
- has each worker hand its per-backend report to the controller when it finishes, so the summary
  and ``--lochkit-report`` cover the whole run, as without xdist.

The controller cannot see a test's parameters, only its id, so a test belongs to a backend when
the first part of its parameter id (``[rocksdb]``, ``[rocksdb-store_obj-after-write]``) is one of
the selected backends: the plugin parametrises by backend before any other parameter. Without
``-n`` (or without pytest-xdist installed) none of this runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import pytest

from conformance.session import activate, active, interrupt_on_sigterm
from conformance.suite_targets import parse_target

#: The key of a worker's report in the data it sends the controller when it finishes.
_REPORT: Final = "lochkit_report"


def configure(config: pytest.Config, backends: Callable[[], Sequence[str]], *, names_backends: bool) -> None:
    """Registers the hooks this module needs, if xdist distributes the session. ``backends`` gives
    the names the session's tests are parametrised with; ``names_backends``: the command line (or
    the environment) selects backends, so the session runs lochkit's suites. Only then does the
    plugin schedule the tests: a project's own session with lochkit merely installed keeps xdist's
    distribution, as it would without lochkit."""
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(_WorkerHooks(), "lochkit-xdist-worker")
    elif config.pluginmanager.hasplugin("xdist") and config.getoption("dist", "no") != "no":
        config.pluginmanager.register(_ControllerHooks(backends, names_backends), "lochkit-xdist-controller")
        # The controller runs no test, so nothing activates the session there before the end; on
        # SIGTERM it must still stop as on Ctrl-C, which has xdist shut its workers down (and they
        # stop the servers they started) instead of leaving them to notice on their own.
        interrupt_on_sigterm(config)


def unit_of(nodeid: str, backends: Sequence[str]) -> str | None:
    """The backend whose unit of work a test belongs to, from its id; None for a test of none."""
    if not nodeid.endswith("]"):
        return None
    opening = nodeid.find("[", nodeid.rfind("::"))
    if opening < 0:
        return None
    params = nodeid[opening + 1 : -1]
    # Longest first: "toy-sqlite" must not be taken for a backend "toy".
    for name in sorted(backends, key=len, reverse=True):
        if params == name or params.startswith(name + "-"):
            return parse_target(name).backend or name
    return None


def _scheduler(config: pytest.Config, log: Any, backends: Sequence[str]) -> Any:
    # Imported here: only a session that xdist distributes gets this far.
    from xdist.scheduler import LoadScopeScheduling

    class BackendScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """``load`` with each backend's tests kept together."""

        def _split_scope(self, nodeid: str) -> str:
            unit = unit_of(nodeid, backends)
            return nodeid if unit is None else f"lochkit backend {unit}"

    return BackendScheduling(config, log)


class _ControllerHooks:
    def __init__(self, backends: Callable[[], Sequence[str]], names_backends: bool) -> None:
        self.backends = backends
        self.names_backends = names_backends

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getoption("dist") != "load" or not self.names_backends:
            return None  # a distribution the user chose, or no suite run: xdist's own
        return _scheduler(config, log, self.backends())

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        sent = getattr(node, "workeroutput", {}).get(_REPORT)
        if not sent:
            return  # no lochkit test ran there, or the worker crashed (xdist reports its tests)
        lochkit = activate(node.config)
        lochkit.report.merge(sent["report"], sent["blocked"])
        lochkit.extra_closing_lines += sent["closing_lines"]


class _WorkerHooks:
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = session.config
        lochkit = active(config)
        if lochkit is None:
            return  # this worker ran no lochkit test
        config.workeroutput[_REPORT] = {  # type: ignore[attr-defined]
            "report": lochkit.report.to_json(),
            "blocked": dict(lochkit.report.blocked),
            "closing_lines": lochkit.failures.closing_lines(),
        }
