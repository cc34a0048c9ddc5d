"""``lochkit torture`` fails a run that verified nothing, as pytest fails "no tests collected": the
parts asked for do not apply to the backend, so no commit was checked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from reliability.campaign import PROFILES, run_campaign
from reliability.figures import CampaignReport, markdown


def test_a_backend_where_no_requested_part_applies_is_a_problem(tmp_path: Path) -> None:
    report = run_campaign(["rocksdb"], PROFILES["ci"], parts=["server"], work=tmp_path, log=lambda _: None)
    (figures,) = report.backends
    assert figures.not_applicable["server faults"] == "embedded: no server process"
    assert figures.problems == ["no commit was checked: no part requested ran here"]


def _scale_only_in_memory(work: Path) -> CampaignReport:
    """The linearizability part alone, 3 commits per writer."""
    profile = dataclasses.replace(PROFILES["ci"], scale_commits=3)
    return run_campaign(["inmemory"], profile, parts=["scale"], work=work, log=lambda _: None)


def test_a_part_that_checked_commits_is_not(tmp_path: Path) -> None:
    report = _scale_only_in_memory(tmp_path)
    (figures,) = report.backends
    assert figures.commits_checked == PROFILES["ci"].scale_writers * 3
    assert figures.problems == []


def test_the_table_says_which_parts_did_not_run(tmp_path: Path) -> None:
    report = _scale_only_in_memory(tmp_path)
    (row,) = [line for line in markdown(report).splitlines() if line.startswith("| `inmemory`")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2:5] == ["not run", "not run", "not run"], cells  # crashes, restarts, toxics
    assert "linearizable" in cells[5], cells
    assert report.parts == ("scale",)
