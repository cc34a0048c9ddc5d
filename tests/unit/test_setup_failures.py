"""A backend that cannot be used fails (or, under ``--backend all``, skips) every test at once with
one stable cause: the first test shows it in full, later ones in one line, and the run's last
lines say what went wrong and how to fix it. No traceback grows from test to test."""

from __future__ import annotations

import re

import pytest

from persist_spi.registry import discover_backends

pytest_plugins = ["pytester"]

TESTS = 12


@pytest.fixture(params=["terminal", "ci"])
def ci_or_terminal(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """pytest prints whole failure messages in its short summary when the ``CI`` variable is set:
    the counts below must hold both ways."""
    for name in ("CI", "BUILD_NUMBER"):
        monkeypatch.delenv(name, raising=False)
    if request.param == "ci":
        monkeypatch.setenv("CI", "true")
    return str(request.param)


SUITE = f"""
import pytest
from conformance.suites.base import ConformanceSuite


class TestProbe(ConformanceSuite):
    area = "probe.area"

    @pytest.mark.parametrize("n", range({TESTS}))
    def test_needs_a_backend(self, persist, n):
        pass
"""

UNEXPECTED = """
import pytest
from backends.inmemory import InMemoryBackendFactory
from conformance.suites.base import ConformanceSuite


class Factory(InMemoryBackendFactory):
    name = "buggy"

    def create(self, url=None, options=None):
        raise ZeroDivisionError("a bug in the adapter")


@pytest.fixture(scope="session")
def lochkit_backend_factory():
    return Factory()


class TestProbe(ConformanceSuite):
    area = "probe.area"

    @pytest.mark.parametrize("n", range(5))
    def test_needs_a_backend(self, persist, n):
        pass
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_probe=SUITE)
    return pytester.runpytest("-p", "no:cacheprovider", "-ra", *args)


def test_a_named_backend_that_cannot_be_provisioned_fails_once_in_full_then_blocks(
    pytester: pytest.Pytester, ci_or_terminal: str
) -> None:
    result = _run(pytester, "--backend", "cockroachdb")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes() == {"errors": 1, "blocked": TESTS - 1}
    text = result.stdout.str()
    # The whole message once in the errors, once at the end; not once per test.
    # The error, the conformance summary, the closing lines; on CI pytest's short summary line
    # carries the one-line cause too (elsewhere it is cut to the terminal's width).
    expected = 4 if ci_or_terminal == "ci" else 3
    assert text.count("CockroachDB cannot be installed") == expected
    assert "Traceback" not in text
    assert "During handling" not in text
    assert len(result.outlines) < 40, text  # whatever the number of tests
    # The last screen names the cause and its fix, in this command's own options.
    tail = "\n".join(result.outlines[-6:])
    assert f"cockroachdb is not available here, so its {TESTS} tests failed without running" in tail
    assert "--backend-url 'cockroachdb=postgresql://root@HOST:26257/defaultdb?sslmode=disable'" in tail
    # The conformance summary counts them as pytest's last line does.
    header = next(line for line in result.outlines if line.startswith("backend cockroachdb"))
    assert header.endswith(f"(1 error, {TESTS - 1} blocked)"), header


def test_a_named_backend_whose_server_refuses_the_connection_is_summarised_with_the_cause(
    pytester: pytest.Pytester,
) -> None:
    # Port 1 on loopback: nothing listens there, so connecting is refused at once.
    url = "postgresql://nobody:planted-secret@127.0.0.1:1/x"
    result = _run(pytester, "--backend", "postgres", "--backend-url", f"postgres={url}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes() == {"errors": 1, "blocked": TESTS - 1}
    headers = [line for line in result.outlines if line.startswith("backend postgres")]
    assert len(headers) == 1, headers
    assert re.fullmatch(
        r"backend postgres could not be set up: postgres at postgresql://nobody@127\.0\.0\.1:1/x: "
        rf"cannot reach the server .*[Cc]onnection refused.* \(1 error, {TESTS - 1} blocked\)",
        headers[0],
    ), headers[0]
    assert "planted-secret" not in result.stdout.str()


def test_provisioning_external_without_an_address_fails_with_how_to_give_one(
    pytester: pytest.Pytester,
) -> None:
    result = _run(pytester, "--backend", "postgres", "--provision", "external")
    assert result.parseoutcomes() == {"errors": 1, "blocked": TESTS - 1}
    assert result.outlines[-4:-1] == [
        "",
        f"postgres is not available here, so its {TESTS} tests failed without running:",
        (
            "  provisioning 'external' needs the address of a running server: pass --backend-url "
            "postgres=URL (or set LOCHKIT_POSTGRES_URL)"
        ),
    ]


def test_a_backend_only_selected_by_all_that_cannot_be_obtained_is_one_skip_line(
    pytester: pytest.Pytester,
) -> None:
    # -k keeps the other backends' tests out, so no server is started for them.
    result = _run(pytester, "--backend", "all", "-k", "scylladb or inmemory")
    assert result.ret == pytest.ExitCode.OK
    # "all" is every backend whose driver is installed (Bigtable's client is not in the all extra).
    others = len([n for n, e in discover_backends().items() if e.installed]) - 2
    assert result.parseoutcomes() == {"passed": TESTS, "skipped": TESTS, "deselected": others * TESTS}
    mentions = [line for line in result.outlines if "scylladb" in line]
    assert len(mentions) == 2, mentions  # pytest's folded skip line and the summary's line
    assert mentions[0].startswith(f"SKIPPED [{TESTS}] backend scylladb: scylladb is not available here:")
    assert mentions[1].startswith("backend scylladb is not available here: ScyllaDB cannot be installed")
    assert mentions[1].endswith(f"({TESTS} skipped)")


def test_an_unexpected_setup_error_shows_its_traceback_once(
    pytester: pytest.Pytester, ci_or_terminal: str
) -> None:
    pytester.makepyfile(test_probe=UNEXPECTED)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.parseoutcomes() == {"errors": 1, "blocked": 4}
    text = result.stdout.str()
    assert text.count("Traceback (most recent call last)") == 1
    assert "ZeroDivisionError: a bug in the adapter" in text
