"""Long steps say what they are doing: on a terminal a line redrawn with the elapsed time and how far
along; elsewhere one line per step when it ends. Every provisioner gets this without code of its own."""

from __future__ import annotations

import io
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from persist_spi import progress
from provisioning import registry
from provisioning.base import Provisioned, ProvisioningFailed, ServerProvisioner
from provisioning.servers.process import run_checked

pytest_plugins = ["pytester"]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def lines() -> Iterator[list[str]]:
    """Steps reported in this test, as written to a log (every step, however short)."""
    written: list[str] = []
    previous = progress.install(progress.Reporter(written.append, min_seconds=0))
    try:
        yield written
    finally:
        progress.install(previous)


def test_in_a_log_each_step_is_one_line_when_it_ends(lines: list[str]) -> None:
    with progress.step("outer"), progress.step("inner", total=3) as inner:
        inner.advance(3)
    with pytest.raises(RuntimeError), progress.step("broken"):
        raise RuntimeError("x")
    assert [line.rsplit(" ", 2)[0] for line in lines] == [
        "inner: done in",
        "outer: done in",
        "broken: failed after",
    ]


def test_steps_shorter_than_a_second_leave_no_line_by_default() -> None:
    written: list[str] = []
    reporter = progress.Reporter(written.append)
    with reporter.step("quick"):
        pass
    assert written == []


def test_on_a_terminal_the_running_step_is_redrawn_with_how_far_it_got() -> None:
    screen = Terminal()
    written: list[str] = []
    reporter = progress.Reporter(written.append, screen, interval=0.05, min_seconds=0)
    with reporter.step("loading", total=200, unit="keys") as step:
        step.advance(50)
        time.sleep(0.3)
    drawn = screen.getvalue()
    assert "\r\x1b[Kloading (0 s, 50/200 keys, 25 %)" in drawn
    assert drawn.endswith("\r\x1b[K")  # the live line is cleared before the step's own line
    assert len(written) == 1
    assert written[0].startswith("loading: done in")


def test_a_reporter_for_a_stream_is_live_only_on_a_terminal() -> None:
    assert progress.Reporter.for_stream(Terminal()).live
    assert not progress.Reporter.for_stream(io.StringIO()).live


class Slow(ServerProvisioner):
    """A provisioner written without any progress code."""

    backends = ("slowdb",)

    def install(self, backend: str) -> str:
        return "slowdb 1.0"

    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        return Provisioned(backend, "slow://here", "local-process")


def test_every_provisioners_install_and_start_are_reported(
    lines: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(registry, "provisioners", lambda: {"slowdb": Slow()})
    assert registry.install_local("slowdb") == "slowdb 1.0"
    assert registry.start_local("slowdb", tmp_path).url == "slow://here"
    assert [line.split(": done")[0] for line in lines] == [
        "slowdb: installing the local server",
        "slowdb: starting a local server",
    ]


def test_an_install_command_shows_its_latest_output_and_keeps_its_tail_for_errors() -> None:
    screen = Terminal()
    previous = progress.install(progress.Reporter(lambda line: None, screen, interval=0.05))
    script = "import time\nfor i in range(3):\n    print(f'fetched {i}', flush=True); time.sleep(0.3)\n"
    try:
        out = run_checked([sys.executable, "-c", script], "fetching")
        with pytest.raises(ProvisioningFailed, match=r"(?s)failing failed \(exit 3\).*boom"):
            run_checked([sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"], "failing")
    finally:
        progress.install(previous)
    assert out.splitlines() == ["fetched 0", "fetched 1", "fetched 2"]
    assert re.search(r"\r\x1b\[Kfetching \(\d+ s\): fetched \d", screen.getvalue())


SLOW_SUITE = """
import time
import pytest

pytest_plugins = ["pytester"]
from backends.inmemory import InMemoryBackendFactory
from provisioning import registry
from provisioning.base import Provisioned, ServerProvisioner
from conformance.suites.base import ConformanceSuite


class Slow(ServerProvisioner):
    backends = ("slowdb",)

    def local_process(self, backend, workdir):
        time.sleep(1.2)
        return Provisioned(backend, "slow://here", "local-process")




class Factory(InMemoryBackendFactory):
    name = "slowdb"


@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return Factory()


class TestProbe(ConformanceSuite):
    area = "probe.area"

    def test_needs_a_backend(self, persist):
        pass
"""


def test_during_a_pytest_run_steps_reach_the_terminal_past_output_capture(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=SLOW_SUITE)
    # Known before any fixture runs, gone with the session (this run shares our process).
    pytester.makeconftest(
        "from provisioning import registry\n"
        "ORIGINAL = registry.provisioners\n"
        "def pytest_configure(config):\n"
        "    from test_probe import Slow\n"
        "    registry.provisioners = lambda: {'slowdb': Slow()}\n"
        "def pytest_unconfigure(config):\n"
        "    registry.provisioners = ORIGINAL\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.re_match_lines([r"slowdb: starting a local server: done in 1\.\d s"])
