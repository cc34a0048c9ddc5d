"""Documentation snippets: the renderer's Markdown between lines saying which command wrote it, when
and where; the body comes back out unchanged, and no snippet names this machine's directories."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conformance import snippets

TABLE = "| a | b |\n|---|---|\n| 1 | 2 |"


def test_the_body_comes_back_out_and_the_command_is_named() -> None:
    text = snippets.render(TABLE, "lochkit bench --markdown-out x.md", source="backend rocksdb")
    assert snippets.body(text) == TABLE
    assert snippets.command_of(text) == "lochkit bench --markdown-out x.md"
    assert text.splitlines()[0] == snippets.MARK


def test_the_provenance_line_says_when_and_on_what_machine() -> None:
    when = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    last = snippets.render(TABLE, "cmd", source="input: x.json", when=when).strip().splitlines()[-1]
    assert last.startswith("_Written by `cmd` on 2026-01-02 03:04 UTC, ")
    assert f"{os.cpu_count()} cores" in last
    assert last.endswith("; input: x.json._")


def test_a_file_that_is_not_a_snippet_is_refused() -> None:
    with pytest.raises(ValueError):
        snippets.command_of("| a | b |")


def test_paths_in_the_command_line_name_no_machine_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    inside = str(tmp_path / "docs" / "generated" / "x.md")
    home = str(Path.home() / "reports" / "r.json")
    line = snippets.portable_command(["lochkit", "torture", "--markdown-out", inside, f"--json={home}"])
    assert line == "lochkit torture --markdown-out docs/generated/x.md '--json=~/reports/r.json'"
    assert str(tmp_path) not in line


def test_an_unwritable_destination_is_said_before_anything_runs(tmp_path: Path) -> None:
    assert snippets.out_problem("--markdown-out", None) is None
    assert snippets.out_problem("--markdown-out", tmp_path / "x.md") is None
    missing = snippets.out_problem("--markdown-out", tmp_path / "no" / "x.md")
    assert missing is not None
    assert "its directory does not exist" in missing
    directory = snippets.out_problem("--markdown-out", tmp_path)
    assert directory is not None
    assert "is a directory" in directory
