"""lochkit's answers under authorization rules are Nessie's: one scenario (refused and allowed
requests of every kind, an anonymous caller) compared with the answers recorded from Nessie 0.99
with the same rules, field for field (the recording keeps no key order: that is pinned by
``test_answer_shapes.py``); with ``LOCHKIT_NESSIE_RECORDINGS=1`` the recording itself is checked
against a live Nessie server started with those rules (after a Nessie version change, or when it is
made again)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.rest import authz_scenario as scenario
from tests.rest.authz_harness import served_with_rules


def _recorded() -> list[dict[str, Any]]:
    return list(json.loads(scenario.RECORDED.read_text(encoding="utf-8")))


def _compare(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert [a["what"] for a in actual] == [e["what"] for e in expected]
    for got, want in zip(actual, expected, strict=True):
        assert (got["status"], got["body"]) == (want["status"], want["body"]), got["what"]


def test_lochkit_answers_as_nessie_did_under_the_same_rules() -> None:
    with served_with_rules(scenario.properties_text()) as uri:
        _compare(scenario.run(uri), _recorded())


@pytest.fixture
def nessie_with_rules() -> Iterator[str]:
    if os.environ.get("LOCHKIT_NESSIE_RECORDINGS") != "1":
        pytest.skip(
            "re-checks the recorded Nessie answers against a live Nessie server when "
            "LOCHKIT_NESSIE_RECORDINGS=1 (Java 21+, a 245 MB jar)"
        )
    from provisioning.servers.nessie import start_server
    from provisioning.workdir import workdir

    with workdir("nessie-authz") as where:
        provisioned = start_server(where, scenario.nessie_properties())
        try:
            yield provisioned.url or ""
        finally:
            provisioned.stop()


def test_the_recording_is_what_nessie_answers(nessie_with_rules: str) -> None:
    _compare(scenario.run(nessie_with_rules), _recorded())
