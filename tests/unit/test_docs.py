"""The documentation (docs/, mkdocs.yml) says what the code does and renders: every table has its
separator row, no page cites internal work items or commit hashes, every page is in the site's
navigation and the site builds with every warning an error, and the reference pages' commands,
options, servers and plugin options exist."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lochkit.commands import COMMANDS

from .doc_pages import DOCS, ROOT, options_not_accepted, tables_without_separator, user_docs


def _page(name: str) -> str:
    return (DOCS / name).read_text()


@pytest.mark.parametrize("path", user_docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_table_has_its_separator_row(path: Path) -> None:
    bad = tables_without_separator(path.read_text())
    assert not bad, f"{path.relative_to(ROOT)}: a table without a separator row at line(s) {bad}"


def test_a_table_without_a_separator_row_is_found() -> None:
    broken = "text\n\n| backend | policy |\n| inmemory | nessie |\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert tables_without_separator(broken) == [3]
    assert tables_without_separator("```\n| not | a table |\n```\n") == []


#: Internal work items, commit hashes and a design note's wording have no place in user docs.
INTERNAL = (
    r"\b[Ii]ssue \d+\b",
    r"\bfix-\d+\b",
    r"\bseed's claim\b",
    r"\bwork item\b",
    r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w/-])",  # a commit hash
)


@pytest.mark.parametrize("path", [*user_docs(), ROOT / ".ci" / "run"], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_cites_internal_work_items_or_commit_hashes(path: Path) -> None:
    text = path.read_text()
    if path.name == "run":  # CI's script: only its comments are prose
        text = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    found = [m.group(0) for pattern in INTERNAL for m in re.finditer(pattern, text)]
    assert not found, f"{path.relative_to(ROOT)}: {found}"


def _nav_pages() -> set[str]:
    return set(re.findall(r"^\s+- (?:.+: )?([\w/.-]+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M))


def test_every_page_is_in_the_sites_navigation() -> None:
    pages = {
        str(p.relative_to(DOCS))
        for p in DOCS.rglob("*.md")
        if p.relative_to(DOCS).parts[0] not in ("generated", "hooks")
    }
    nav = _nav_pages()
    assert pages - nav == set(), "pages missing from mkdocs.yml's nav"
    assert nav - pages == set(), "mkdocs.yml's nav names pages that do not exist"


@pytest.mark.skipif(
    shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None, reason="needs the docs extra"
)
def test_the_site_builds_with_every_warning_an_error(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "search" / "search_index.json").stat().st_size > 0  # searchable


def _command_rows() -> list[tuple[str, str]]:
    return re.findall(r"^\| `lochkit ([a-z-]+)([^`]*)` \|", _page("commands.md"), re.M)


def test_every_command_is_on_the_commands_page() -> None:
    assert {name for name, _ in _command_rows()} >= set(COMMANDS)


@pytest.mark.parametrize(("command", "usage"), _command_rows())
def test_every_option_the_commands_page_shows_is_accepted(command: str, usage: str) -> None:
    assert not options_not_accepted(command, usage), (
        f"lochkit {command}: {options_not_accepted(command, usage)}"
    )


def test_every_plugin_option_the_plugin_page_lists_exists(pytestconfig: pytest.Config) -> None:
    listed = re.findall(r"^\| `(--[a-z-]+)", _page("plugin.md"), re.M)
    assert listed
    for option in listed:
        pytestconfig.getoption(option)  # raises ValueError for an unknown option


def test_the_servers_page_names_every_server_lochkit_can_provide() -> None:
    from provisioning.registry import provisioners

    table = _page("servers.md").split("## What each server needs", 1)[1].split("\n## ", 1)[0]
    first_cells = re.findall(r"^\| ([^|]+) \|", table, re.M)
    named = {name for cell in first_cells for name in re.findall(r"`([a-z]+)`", cell)}
    assert named == set(provisioners())


def test_the_own_adapter_recipe_says_how_to_keep_out_the_plugins_lochkit_conformance_keeps_out() -> None:
    from lochkit.commands.conformance import UNUSED_PLUGINS

    recipe = _page("own-adapter.md")
    addopts = re.search(r"^addopts = \"(.*)\"$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert addopts
    for plugin in UNUSED_PLUGINS:
        assert f"`pytest -p no:{plugin}`" in recipe
        assert f"-p no:{plugin}" in addopts.group(1)


def test_tox_says_which_tests_its_environments_run() -> None:
    tox = (ROOT / "tox.ini").read_text()
    comment = " ".join(line.lstrip("# ") for line in tox.splitlines() if line.startswith("#"))
    commands = re.findall(r"^\s+pytest (\S+)", tox, re.M)
    assert commands
    for command in commands:
        assert command in comment  # it names what each environment runs
    if not any(command == "tests" or command.startswith("tests/unit") for command in commands):
        assert "runs the unit tests" not in comment
