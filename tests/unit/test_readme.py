"""The README is a landing page: its first lines are the two commands (the try-out and the full test
run, said to be alternatives), CI runs the second, the first installs what it needs and no more,
the tour's commands exist with the options it shows, and every link into the documentation works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from lochkit.commands import COMMANDS
from persist_spi.registry import backend_factory

from .doc_pages import ROOT, options_not_accepted

README = (ROOT / "README.md").read_text()
#: What a reader sees first: a terminal's worth of lines.
FIRST_SCREEN = "\n".join(README.splitlines()[:25])


def _first_block() -> list[str]:
    return README.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()


def test_the_readme_is_a_landing_page_not_a_manual() -> None:
    assert len(README.splitlines()) <= 150


def test_the_first_lines_are_the_two_commands_said_to_be_alternatives() -> None:
    assert README.splitlines()[2] == "```sh", "the commands come right after the title"
    try_out, full = _first_block()[:2]
    assert try_out.endswith("lochkit conformance --backend rocksdb")
    assert full.endswith("pytest --backend all -n 2")
    assert "alternatives" in FIRST_SCREEN
    # Each is said for what it is: how long, what it needs.
    assert "minute" in FIRST_SCREEN
    for needed in ("Java", "Maven", "Go"):
        assert needed in FIRST_SCREEN


def _extras(command: str) -> str:
    """The extras a ``pip install -e '.[...]'`` command installs."""
    found = re.search(r"-e '\.\[(.+?)\]'", command)
    assert found is not None, f"no editable install in {command!r}"
    return found.group(1)


def test_ci_runs_the_readmes_test_command() -> None:
    full = _first_block()[1]
    extras = _extras(full)
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"pip install --quiet -e '.[{extras}]'" in ci
    command = full.rsplit("&& ", 1)[1]  # .venv/bin/pytest --backend all -n 2
    assert re.search(rf"^(step \S+ )?{re.escape(command)}\b", ci, re.M), f"CI does not run {command}"


def test_the_first_command_installs_what_the_conformance_run_on_rocksdb_needs_and_no_more() -> None:
    first = _first_block()[0]
    extras = set(_extras(first).split(","))
    assert extras == {backend_factory("rocksdb").extra, "conformance"}


def _tour_commands() -> list[str]:
    tour = README.split("## A quick tour", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in re.findall(r"^\s*(lochkit .+)$", tour, re.M)]


def test_the_tour_goes_conformance_generate_experiment_report_serve() -> None:
    names = [command.split()[1] for command in _tour_commands()]
    assert names == ["conformance", "generate", "experiment", "report", "serve"]


@pytest.mark.parametrize("command", _tour_commands())
def test_every_tour_command_exists_with_the_options_it_shows(command: str) -> None:
    name, usage = command.split()[1], " ".join(command.split()[2:])
    assert name in COMMANDS
    assert not options_not_accepted(name, usage), (
        f"lochkit {name} does not take {options_not_accepted(name, usage)}"
    )


def test_every_link_into_the_documentation_exists() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", README)
    assert links
    for link in links:
        assert (ROOT / link).exists(), link


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


def test_the_reliability_table_is_the_long_campaigns() -> None:
    """The README's reliability rows are the long campaign's, as generated, and the backends it has
    not run yet are the ones the generated page names."""
    from conformance import snippets

    generated = snippets.body((ROOT / "docs" / "generated" / "torture-long.md").read_text())
    section = README.split("## Reliability", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows, "no backend row in the README's reliability table"
    assert all(row in generated.splitlines() for row in rows), rows
    assert len(rows) == len(re.findall(r"^\| `[a-z0-9]+` \| (?!\d)", generated.split("\n\n")[0], re.M))
    missing = re.search(r"Not in these runs: ([^.]+)\.", generated)
    if missing:
        assert f"Not yet run in the long profile: {missing.group(1)}." in section
    else:
        assert "Not yet run" not in section
