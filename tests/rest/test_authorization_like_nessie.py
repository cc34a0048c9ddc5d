"""lochkit's answers under authorization rules are Nessie's: one scenario (refused and allowed
requests of every kind, an anonymous caller) compared with the answers recorded from Nessie 0.99
with the same rules; with ``LOCHKIT_NESSIE_TESTS=1`` the recording is checked against a live
Nessie server started with those rules.

Answer shapes that differ without authorization are left out of the comparison (they are not what
these tests are about): the order of ``addedContents`` and ``[]`` for none, and the empty commit
meta fields lochkit does not write (``committer``, ``authors``, ``allSignedOffBy``)."""

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


_EMPTY_META_FIELDS = ("committer", "authors", "allSignedOffBy")


def _shape_free(value: Any) -> Any:
    if isinstance(value, list):
        return [_shape_free(v) for v in value]
    if not isinstance(value, dict):
        return value
    doc = {k: _shape_free(v) for k, v in value.items()}
    if "addedContents" in doc:
        doc["addedContents"] = sorted(doc["addedContents"] or [], key=lambda a: a["key"]["elements"])
    if isinstance(doc.get("commitMeta"), dict):
        doc["commitMeta"] = {k: v for k, v in doc["commitMeta"].items() if k not in _EMPTY_META_FIELDS}
    return doc


def _compare(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert [a["what"] for a in actual] == [e["what"] for e in expected]
    for got, want in zip(actual, expected, strict=True):
        assert (got["status"], _shape_free(got["body"])) == (want["status"], _shape_free(want["body"])), got[
            "what"
        ]


def test_lochkit_answers_as_nessie_did_under_the_same_rules() -> None:
    with served_with_rules(scenario.properties_text()) as uri:
        _compare(scenario.run(uri), _recorded())


@pytest.fixture
def nessie_with_rules() -> Iterator[str]:
    if os.environ.get("LOCHKIT_NESSIE_TESTS") != "1":
        pytest.skip("the real Nessie server runs when LOCHKIT_NESSIE_TESTS=1 (needs Java 21+, a 245 MB jar)")
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
