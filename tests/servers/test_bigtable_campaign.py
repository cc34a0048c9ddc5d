"""``lochkit torture`` on Bigtable's emulator (a real one, started for the test): the emulator keeps
its data in memory, so the server-restart part is reported as not applicable with the reason its
provisioner declares, while the parts that kill writers or check linearizability run on it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.bigtable_v2")

from provisioning.servers.bigtable import NOT_RESTARTABLE
from reliability.campaign import PROFILES, run_campaign
from reliability.figures import markdown


def test_restarts_are_not_applicable_and_the_other_parts_run(tmp_path: Path) -> None:
    profile = dataclasses.replace(PROFILES["ci"], scale_commits=3)
    report = run_campaign(["bigtable"], profile, parts=["server", "scale"], work=tmp_path, log=lambda _: None)
    assert report.problems == []
    (figures,) = report.backends
    assert figures.not_applicable == {"server faults": NOT_RESTARTABLE}
    assert figures.problems == []
    assert figures.commits_checked == profile.scale_writers * 3
    assert figures.linearizable is True
    text = markdown(report)
    assert f"- `bigtable`, server faults: {NOT_RESTARTABLE}" in text
