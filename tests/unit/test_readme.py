"""The README says what the code does: its matrix is what the matrix tool renders from the CI run's
report, its commands and options exist, its numbers are counted, its contents list every section."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.matrix import LEGEND, render
from lochkit.cli import build_parsers
from lochkit.commands import COMMANDS
from persist_spi.registry import backend_factory

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
#: The report of the run the README's matrix shows (``--lochkit-report``; per-test reasons dropped).
SAMPLE_REPORT = Path(__file__).with_name("data") / "conformance-report.json"


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert match, f"no section '{title}'"
    return match.group(1)


def test_contents_lists_every_section_in_order() -> None:
    sections = re.findall(r"^## (.+)$", README, re.M)
    listed = re.findall(r"^- \[(.+?)\]\(#(.+?)\)$", _section("Contents"), re.M)
    assert [title for title, _ in listed] == [s for s in sections if s != "Contents"]
    for title, anchor in listed:
        assert anchor == re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def test_the_matrix_is_what_the_matrix_tool_renders_from_the_runs_report() -> None:
    rendered = render(json.loads(SAMPLE_REPORT.read_text()), markdown=True)
    section = _section("Backends and the conformance matrix")
    assert rendered in section
    assert LEGEND in " ".join(section.split())


def test_the_toy_adapters_size_is_counted() -> None:
    lines = len((ROOT / "conformance" / "examples" / "toy_sqlite.py").read_text().splitlines())
    assert f"a toy SQLite adapter of {lines} lines" in README


def test_the_first_command_installs_what_the_conformance_run_on_rocksdb_needs_and_no_more() -> None:
    first = README.split("```sh\n", 1)[1].splitlines()[0]
    extras = set(re.search(r"-e '\.\[(.+?)\]'", first).group(1).split(","))  # type: ignore[union-attr]
    assert "lochkit conformance --backend rocksdb" in first
    assert extras == {backend_factory("rocksdb").extra, "conformance"}


def test_the_prerequisites_table_names_every_server_lochkit_can_provide() -> None:
    from conformance.provisioning import provisioners

    table = _section("Prerequisites")
    first_cells = re.findall(r"^\| ([^|]+) \|", table, re.M)
    named = {name for cell in first_cells for name in re.findall(r"`([a-z]+)`", cell)}
    assert named == set(provisioners())


def test_the_own_adapter_recipe_says_how_to_keep_out_the_plugins_lochkit_conformance_keeps_out() -> None:
    from lochkit.commands.conformance import UNUSED_PLUGINS

    recipe = _section("Running the suite against your own adapter")
    addopts = re.search(r"^addopts = \"(.*)\"$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert addopts
    for plugin in UNUSED_PLUGINS:
        assert f"`pytest -p no:{plugin}`" in recipe
        assert f"-p no:{plugin}" in addopts.group(1)


#: The whole suite on a backend that cannot be obtained here.
COCKROACHDB_SUITE = ("--pyargs", "conformance.all", "--backend", "cockroachdb")


def test_the_counts_of_an_unusable_backend_are_the_suites_current_size() -> None:
    # Collecting a backend that cannot be provisioned here asks no server for anything.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--co", "-q", *COCKROACHDB_SUITE],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = int(re.search(r"^(\d+) tests? collected", done.stdout, re.M).group(1))  # type: ignore[union-attr]
    # Under `--backend all` only the tests run once per backend are that backend's.
    tests = [line for line in done.stdout.splitlines() if "::" in line]
    assert len(tests) == collected
    per_backend = sum(1 for line in tests if "cockroachdb" in line)
    section = " ".join(_section("The conformance plugin").split())  # wherever the lines wrap
    assert f"`1 error, {collected - 1} blocked`" in section
    assert f"`its {collected} tests failed without running`" in section
    assert f"`SKIPPED [{per_backend}] backend cockroachdb: ...`" in section
    assert f"It is {per_backend}, not {collected}:" in section


def _command_rows() -> list[tuple[str, str]]:
    table = _section("Commands")
    return re.findall(r"^\| `lochkit ([a-z-]+)([^`]*)` \|", table, re.M)


def test_every_command_is_in_the_commands_table() -> None:
    assert {name for name, _ in _command_rows()} >= set(COMMANDS)


def _options_of(parser: argparse.ArgumentParser) -> set[str]:
    """Every option ``parser`` takes, its subcommands' included (``lochkit experiment asymmetric``)."""
    options: set[str] = set()
    for action in parser._actions:
        options.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                options |= _options_of(sub)
    return options


def _scenario_options() -> set[str]:
    """``lochkit scenario`` hands its arguments to locust; lochkit's own are those its --help lists
    (asked in a subprocess: importing locust would monkey-patch this test process for gevent)."""
    script = "from lochkit.cli import main; main(['scenario', 'commit-to-branch', '--help'])"
    shown = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # --web is read by the command itself; --sim-* stands for every scenario's own options.
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", shown)) | {"--web", "--sim-"}


@pytest.mark.parametrize(("command", "usage"), _command_rows())
def test_every_option_the_commands_table_shows_is_accepted(command: str, usage: str) -> None:
    _, parsers = build_parsers(own_parsers=True)
    if command == "scenario":
        options = _scenario_options()
    else:
        options = _options_of(parsers[command]) if command in parsers else set()
    shown = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", usage.replace("\\|", " ")))
    assert shown <= options, f"lochkit {command} does not take {sorted(shown - options)}"


def test_every_plugin_option_the_readme_lists_exists(pytestconfig: pytest.Config) -> None:
    table = _section("The conformance plugin")
    listed = re.findall(r"^\| `(--[a-z-]+)", table, re.M)
    assert listed
    for option in listed:
        pytestconfig.getoption(option)  # raises ValueError for an unknown option


def test_tox_says_which_tests_its_environments_run() -> None:
    tox = (ROOT / "tox.ini").read_text()
    comment = " ".join(line.lstrip("# ") for line in tox.splitlines() if line.startswith("#"))
    command = re.search(r"^commands =\n\s+pytest (\S+)", tox, re.M).group(1)  # type: ignore[union-attr]
    assert command in comment  # it names what it runs
    if command != "tests" and not command.startswith("tests/unit"):
        assert "runs the unit tests" not in comment


#: Modules only other extras bring: the first command installs none of them.
OTHER_EXTRAS_MODULES = (
    "requests", "starlette", "uvicorn", "cel", "pyarrow", "locust", "pyspark", "pandas",
    "psycopg", "pymongo", "cassandra", "boto3", "testcontainers", "docker",
)  # fmt: skip

WITHOUT_OTHER_EXTRAS = """
import sys
from importlib.abc import MetaPathFinder

class Absent(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (not in the first command's extras)")
        return None

sys.meta_path.insert(0, Absent())
from lochkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_first_commands_extras_are_enough_for_the_suites_on_rocksdb(tmp_path: Path) -> None:
    script = tmp_path / "without_other_extras.py"
    script.write_text(f"BLOCKED = {set(OTHER_EXTRAS_MODULES)!r}\n{WITHOUT_OTHER_EXTRAS}")
    # One suite of each kind of fixture: Persist, storage logic, version store, object cache.
    chosen = "TestPersistReferences or TestLogicRepository or TestVersionStoreReads or TestCachingPersist"
    done = subprocess.run(
        [sys.executable, str(script), "conformance", "--backend", "rocksdb", "-k", chosen],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"\d+ passed", done.stdout.splitlines()[-1])
