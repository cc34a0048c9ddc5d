"""``lochkit torture`` fails a run that verified nothing, as pytest fails "no tests collected": the
parts asked for do not apply to the backend, so no commit was checked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from reliability.campaign import PROFILES, run_campaign
from reliability.figures import markdown


def test_a_backend_where_no_requested_part_applies_is_a_problem(tmp_path: Path) -> None:
    report = run_campaign(["rocksdb"], PROFILES["ci"], parts=["server"], work=tmp_path, log=lambda _: None)
    (figures,) = report.backends
    assert figures.not_applicable["server faults"] == "embedded: no server process"
    assert figures.problems == ["no commit was checked: no part requested ran here"]


def test_a_part_that_checked_commits_is_not(tmp_path: Path) -> None:
    profile = PROFILES["ci"]
    report = run_campaign(
        ["inmemory"],
        dataclasses.replace(profile, scale_commits=3),
        parts=["scale"],
        work=tmp_path,
        log=lambda _: None,
    )
    (figures,) = report.backends
    assert figures.commits_checked == profile.scale_writers * 3
    assert figures.problems == []


def test_the_table_says_which_parts_did_not_run(tmp_path: Path) -> None:
    profile = PROFILES["ci"]
    report = run_campaign(
        ["inmemory"],
        dataclasses.replace(profile, scale_commits=3),
        parts=["scale"],
        work=tmp_path,
        log=lambda _: None,
    )
    (row,) = [line for line in markdown(report).splitlines() if line.startswith("| `inmemory`")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2:5] == ["not run", "not run", "not run"], cells  # crashes, restarts, toxics
    assert "linearizable" in cells[5], cells
    assert report.parts == ("scale",)
