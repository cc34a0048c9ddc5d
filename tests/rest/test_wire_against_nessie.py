"""The same requests to ``lochkit serve`` and to a real Nessie server: the answers have the same
statuses, error codes and JSON fields. Runs when ``LOCHKIT_NESSIE_TESTS=1`` (CI sets it); it
provisions Nessie 0.99.0 as the ``nessie`` provisioner does. (``test_answer_shapes`` compares
recorded answers field for field, in order; this compares live answers' field names.)"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
import requests

from persist_spi.ids import EMPTY_OBJ_ID

from .wire import CONVERTED_BY_NESSIE, INVALID, TABLE, VALID, Api, put, served_form

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
    from nessie_client import NessieRestClient
    from provisioning.servers.nessie import PROVISIONER
    from provisioning.workdir import make_workdir, remove_workdir

    given = os.environ.get("LOCHKIT_NESSIE_URL")
    provisioned = None
    where = None
    if not given:
        where = make_workdir("nessie-wire")
        provisioned = PROVISIONER.local_process("nessie", where)
    uri = given or (provisioned.url if provisioned is not None else "") or ""
    try:
        with NessieRestClient(uri) as client:
            reset_nessie(client)
        yield uri
    finally:
        if provisioned is not None:
            provisioned.stop()
        if where is not None:
            remove_workdir(where)


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
    """Equal field names, recursively."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        assert set(ours) == set(theirs), (where, set(theirs) ^ set(ours))
        for name in set(theirs) & set(ours):
            _same_fields(theirs[name], ours[name], f"{where}.{name}")
    elif isinstance(theirs, list) and isinstance(ours, list):
        if not where.endswith(".previous"):  # a reused Nessie remembers older heads
            assert len(theirs) == len(ours), where
        for i, (a, b) in enumerate(zip(theirs, ours, strict=False)):
            _same_fields(a, b, f"{where}[{i}]")


def test_the_same_requests_get_answers_of_the_same_shape(nessie: str, lochkit: str) -> None:
    theirs, ours = _both(nessie, lochkit, "GET", "/config")
    assert set(ours) <= set(theirs)
    commit = {
        "commitMeta": {"message": "c1", "allProperties": {"p": ["a", "b"]}},
        "operations": [put("n1", {"type": "NAMESPACE", "elements": ["n1"]}), put("n1.t1", TABLE)],
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
    stale = {"commitMeta": {"message": "late"}, "operations": [put("n1.t2", TABLE)]}
    _both(nessie, lochkit, "POST", "/trees/main@{head}/history/commit", stale)
    # the same key created again from the old expected hash: a conflict on both
    theirs, ours = _both(nessie, lochkit, "POST", f"/trees/main@{EMPTY}/history/commit", stale)
    assert (theirs["errorCode"], ours["errorCode"]) == ("REFERENCE_CONFLICT", "REFERENCE_CONFLICT")
    assert [c["conflictType"] for c in theirs["errorDetails"]["conflicts"]] == [
        c["conflictType"] for c in ours["errorDetails"]["conflicts"]
    ]
    theirs, ours = _both(nessie, lochkit, "GET", "/trees/main/entries", filter="entry.namespace ==")
    assert (theirs["errorCode"], ours["errorCode"]) == ("BAD_REQUEST", "BAD_REQUEST")


# --- content documents ---------------------------------------------------------------------------


def _attempt(base: str, key: str, content: Any) -> tuple[int, Any]:
    """Commit ``content`` at ``key`` on main: the answer; a refused commit must not move main."""
    api = Api(base)
    before = api.head()
    status, doc = api.try_commit("main", put(key, content))
    if status != 200:
        assert api.head() == before, (base, "a refused commit moved main")
    return status, doc


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_content_is_refused_by_both(nessie: str, lochkit: str, name: str) -> None:
    case = INVALID[name]
    (theirs_status, theirs), (ours_status, ours) = (
        _attempt(b, "bad", case.content) for b in (nessie, lochkit)
    )
    assert (theirs_status, ours_status) == (400, 400), (theirs, ours)
    assert theirs["errorCode"] == ours["errorCode"] == "BAD_REQUEST"
    assert set(ours) == set(theirs)
    if case.both_say is not None:
        assert case.both_say in theirs["message"], theirs["message"]
        assert case.both_say in ours["message"], ours["message"]


@pytest.mark.parametrize("name", list(VALID))
def test_valid_content_is_stored_and_served_back_alike(nessie: str, lochkit: str, name: str) -> None:
    key = f"ok-{name}"
    served = []
    for base in (nessie, lochkit):
        status, doc = _attempt(base, key, VALID[name])
        assert status == 200, (base, doc)
        served.append(Api(base).ok("GET", f"/trees/main/contents/{key}")["content"])
    theirs, ours = served
    assert served_form(ours) == served_form(theirs) == served_form(VALID[name])


@pytest.mark.parametrize("name", list(CONVERTED_BY_NESSIE))
def test_values_nessie_converts_are_refused_by_lochkit(nessie: str, lochkit: str, name: str) -> None:
    """The difference "Content field types": Nessie stores the converted value, lochkit refuses
    the document naming the field."""
    content, converted = CONVERTED_BY_NESSIE[name]
    key = f"converted-{name}"
    status, _ = _attempt(nessie, key, content)
    assert status == 200
    stored = Api(nessie).ok("GET", f"/trees/main/contents/{key}")["content"]
    assert {k: stored[k] for k in converted} == converted
    status, doc = _attempt(lochkit, key, content)
    assert (status, doc["errorCode"]) == (400, "BAD_REQUEST")
    (field,) = converted
    assert field in doc["message"]


# --- configuration -------------------------------------------------------------------------------


def test_each_server_serves_the_api_versions_its_config_advertises(nessie: str, lochkit: str) -> None:
    """Nessie 0.99 serves v1 and v2 and says 1..2; lochkit serves v2 only and says 2..2 (the
    difference "API versions")."""
    advertised = {}
    for base in (nessie, lochkit):
        config = Api(base).ok("GET", "/config")
        versions = range(config["minSupportedApiVersion"], config["maxSupportedApiVersion"] + 1)
        root = base.removesuffix("/api/v2")
        for version in (*versions, versions.stop):
            answer = requests.get(f"{root}/api/v{version}/config", timeout=60).status_code
            assert (answer == 200) == (version in versions), (base, version, answer)
        advertised[base] = (versions.start, versions.stop - 1, config["actualApiVersion"])
    assert (advertised[nessie], advertised[lochkit]) == ((1, 2, 2), (2, 2, 2))


# --- merging with a branch that has no commits ---------------------------------------------------


def test_merging_a_branch_forked_from_an_empty_main(nessie: str, lochkit: str) -> None:
    """Both report a branch forked from an empty main as 1 ahead, 0 behind, common ancestor the
    no-ancestor hash. lochkit's merge agrees (the differences "Merging into a branch without
    commits" and "Merging from a branch without commits"): it brings the branch into main, and
    merging the empty main into the branch brings nothing. Nessie answers "No common ancestor",
    and merging its empty main into the branch deletes the branch's content."""
    answers = {}
    for base in (nessie, lochkit):
        api = Api(base)
        api.ok(
            "PUT",
            f"/trees/main@{api.head()}",
            {"type": "BRANCH", "name": "main", "hash": EMPTY},
            type="BRANCH",
        )
        api.ok(
            "POST", "/trees", {"type": "BRANCH", "name": "main", "hash": EMPTY}, name="forked", type="BRANCH"
        )
        head = api.commit("forked", put("t", TABLE))
        metadata = api.ok("GET", "/trees/forked", fetch="ALL")["reference"]["metadata"]
        from_main = api.call(
            "POST", f"/trees/forked@{head}/history/merge", {"fromRefName": "main", "fromHash": EMPTY}
        )
        entries = api.ok("GET", "/trees/forked/entries")["entries"]
        api.ok(
            "PUT",
            f"/trees/forked@{api.head('forked')}",
            {"type": "BRANCH", "name": "forked", "hash": head},
            type="BRANCH",
        )
        into_main = api.call(
            "POST", f"/trees/main@{EMPTY}/history/merge", {"fromRefName": "forked", "fromHash": head}
        )
        answers[base] = (head, metadata, from_main, entries, into_main)
        api.ok("DELETE", f"/trees/forked@{head}", type="BRANCH")

    for _, metadata, *_ in answers.values():
        assert (metadata["numCommitsAhead"], metadata["numCommitsBehind"]) == (1, 0)
        assert metadata["commonAncestorHash"] == EMPTY

    head, _, (status, from_main), entries, (into_status, into_main) = answers[lochkit]
    assert status == 200
    assert (from_main["wasApplied"], from_main["commonAncestor"], len(entries)) == (False, EMPTY, 1)
    assert into_status == 200
    assert (into_main["wasApplied"], into_main["commonAncestor"]) == (True, EMPTY)

    head, _, (status, from_main), entries, (into_status, into_main) = answers[nessie]
    assert status == 200
    assert (from_main["wasApplied"], from_main["commonAncestor"], entries) == (True, head, [])
    assert (into_status, into_main["errorCode"]) == (404, "REFERENCE_NOT_FOUND")
    assert into_main["message"] == f"No common ancestor in parents of {EMPTY} and {head}"


# --- a rename and a re-add of the old key in one commit ------------------------------------------


@pytest.mark.parametrize("rename_first", [True, False], ids=["rename-then-re-add", "re-add-then-rename"])
def test_a_rename_and_a_re_add_of_the_old_key_count_in_operation_order(
    nessie: str, lochkit: str, rename_first: bool
) -> None:
    """Delete ``old``, Put its content id at ``renamed`` and Put a new table without id at ``old``:
    the deleted value serves the Put that comes first. A re-add after the rename updates a live key
    without content id, refused by both with the same 400; before the rename, both commit."""

    def delete(dotted: str) -> dict[str, Any]:
        return {"type": "DELETE", "key": {"elements": dotted.split(".")}}

    answers = {}
    for base in (nessie, lochkit):
        api = Api(base)
        api.commit("main", put("old", TABLE))
        try:
            old_id = api.ok("GET", "/trees/main/contents/old")["content"]["id"]
            rename = put("renamed", {**TABLE, "id": old_id})
            re_add = put("old", {**TABLE, "metadataLocation": "m2"})
            answers[base] = api.try_commit(
                "main", delete("old"), *((rename, re_add) if rename_first else (re_add, rename))
            )
        finally:
            present = [
                k for k in ("old", "renamed") if api.call("GET", f"/trees/main/contents/{k}")[0] == 200
            ]
            api.commit("main", *(delete(k) for k in present))  # leaves main as it found it
    (status, theirs), (our_status, ours) = answers[nessie], answers[lochkit]
    assert status == our_status == (400 if rename_first else 200), (theirs, ours)
    if rename_first:
        assert (
            theirs["message"] == ours["message"] == "New value to update existing key 'old' has no content ID"
        )
        assert theirs["errorCode"] == ours["errorCode"] == "BAD_REQUEST"
