"""The same requests to ``lochkit serve`` and to a real Nessie server: the answers have the same
statuses, error codes and JSON fields. Runs when ``LOCHKIT_NESSIE_TESTS=1`` (CI sets it); it
provisions Nessie 0.99.0 as the ``nessie`` provisioner does.

Commit meta is compared as "lochkit's fields are Nessie's": Nessie also writes empty fields
(``committer: ""``, ``allSignedOffBy: []``) that lochkit leaves out."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
import requests

from persist_spi.ids import EMPTY_OBJ_ID

pytestmark = pytest.mark.skipif(
    os.environ.get("LOCHKIT_NESSIE_TESTS") != "1",
    reason="the real Nessie server runs when LOCHKIT_NESSIE_TESTS=1 (needs Java 21+, a 245 MB jar)",
)
SPEC2 = {"Nessie-Client-Spec": "2"}
EMPTY = str(EMPTY_OBJ_ID)


@pytest.fixture(scope="module")
def nessie() -> Iterator[str]:
    """``LOCHKIT_NESSIE_URL`` if given, else a Nessie server started for this module; emptied first."""
    from conformance.rest_harness import reset_nessie
    from conformance.servers.nessie import PROVISIONER
    from nessie_client import NessieRestClient

    given = os.environ.get("LOCHKIT_NESSIE_URL")
    provisioned = None
    if not given:
        provisioned = PROVISIONER.local_process(
            "nessie", Path(tempfile.mkdtemp(prefix="lochkit-nessie-wire-"))
        )
    uri = given or (provisioned.url if provisioned is not None else "") or ""
    try:
        with NessieRestClient(uri) as client:
            reset_nessie(client)
        yield uri
    finally:
        if provisioned is not None:
            provisioned.stop()


@pytest.fixture(scope="module")
def lochkit(served_inmemory: Callable[[], AbstractContextManager[str]]) -> Iterator[str]:
    with served_inmemory() as uri:
        yield uri


def _call(base: str, method: str, path: str, body: Any = None, **params: Any) -> tuple[int, Any]:
    response = requests.request(
        method, base + path, json=body, params=params or None, headers=SPEC2, timeout=60
    )
    return response.status_code, response.json() if response.content else None


def _head(base: str, ref: str = "main") -> str:
    return str(_call(base, "GET", f"/trees/{ref}")[1]["reference"]["hash"])


def _both(
    nessie: str, lochkit: str, method: str, path: str, body: Any = None, **params: Any
) -> tuple[Any, Any]:
    """The same request to both; the same status; the two answers."""
    theirs = _call(nessie, method, path.replace("{head}", _head(nessie)), body, **params)
    ours = _call(lochkit, method, path.replace("{head}", _head(lochkit)), body, **params)
    assert theirs[0] == ours[0], (path, theirs, ours)
    return theirs[1], ours[1]


def _same_fields(theirs: Any, ours: Any, where: str = "") -> None:
    """Equal field names, recursively; under commit meta, lochkit's fields must be Nessie's."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        if where.endswith(("commitMeta", "commitMetaOfHEAD", "meta")):
            assert set(ours) <= set(theirs), (where, set(ours) - set(theirs))
        else:
            assert set(ours) == set(theirs), (where, set(theirs) ^ set(ours))
        for name in set(theirs) & set(ours):
            _same_fields(theirs[name], ours[name], f"{where}.{name}")
    elif isinstance(theirs, list) and isinstance(ours, list):
        if not where.endswith(".previous"):  # a reused Nessie remembers older heads
            assert len(theirs) == len(ours), where
        for i, (a, b) in enumerate(zip(theirs, ours, strict=False)):
            _same_fields(a, b, f"{where}[{i}]")


def _put(dotted: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"type": "PUT", "key": {"elements": dotted.split(".")}, "content": content}


TABLE = {
    "type": "ICEBERG_TABLE",
    "metadataLocation": "m1",
    "snapshotId": 1,
    "schemaId": 0,
    "specId": 0,
    "sortOrderId": 0,
}


def test_the_same_requests_get_answers_of_the_same_shape(nessie: str, lochkit: str) -> None:
    theirs, ours = _both(nessie, lochkit, "GET", "/config")
    assert set(ours) <= set(theirs)
    commit = {
        "commitMeta": {"message": "c1", "allProperties": {"p": ["a", "b"]}},
        "operations": [_put("n1", {"type": "NAMESPACE", "elements": ["n1"]}), _put("n1.t1", TABLE)],
    }
    _same_fields(*_both(nessie, lochkit, "POST", "/trees/main@{head}/history/commit", commit))
    branch = {"type": "BRANCH", "name": "main", "hash": EMPTY}
    _same_fields(*_both(nessie, lochkit, "POST", "/trees", branch, name="dev", type="BRANCH"))
    for path, params in (
        ("/trees", {"fetch": "ALL"}),
        ("/trees/main", {"fetch": "ALL"}),
        ("/trees/main/entries", {"content": "true"}),
        ("/trees/main/entries", {"filter": "entry.contentType == 'ICEBERG_TABLE'"}),
        ("/trees/main/history", {"fetch": "ALL"}),
        ("/trees/main~1/history", {}),
        ("/trees/main/contents/n1.t1", {}),
        ("/trees/main/contents", {"key": ["n1", "n1.t1"]}),
        ("/trees/dev/diff/main", {}),
        ("/trees/main/recent-changes", {}),
    ):
        _same_fields(*_both(nessie, lochkit, "GET", path, **params), where=path)


def test_errors_have_the_same_status_code_and_details(nessie: str, lochkit: str) -> None:
    for path in ("/trees/nope/entries", "/trees/main/contents/no.such.key"):
        theirs, ours = _both(nessie, lochkit, "GET", path)
        assert theirs["errorCode"] == ours["errorCode"]
        assert theirs.get("errorDetails") == ours.get("errorDetails")
    stale = {"commitMeta": {"message": "late"}, "operations": [_put("n1.t2", TABLE)]}
    _both(nessie, lochkit, "POST", "/trees/main@{head}/history/commit", stale)
    # the same key created again from the old expected hash: a conflict on both
    theirs, ours = _both(nessie, lochkit, "POST", f"/trees/main@{EMPTY}/history/commit", stale)
    assert (theirs["errorCode"], ours["errorCode"]) == ("REFERENCE_CONFLICT", "REFERENCE_CONFLICT")
    assert [c["conflictType"] for c in theirs["errorDetails"]["conflicts"]] == [
        c["conflictType"] for c in ours["errorDetails"]["conflicts"]
    ]
    theirs, ours = _both(nessie, lochkit, "GET", "/trees/main/entries", filter="entry.namespace ==")
    assert (theirs["errorCode"], ours["errorCode"]) == ("BAD_REQUEST", "BAD_REQUEST")
