"""lochkit's REST server at the HTTP level: what a Nessie client sees on the wire. Paths with
relative specs, Nessie's JSON shapes and error model (details only under client spec 2), CEL
filters, page-size paging with opaque tokens, reference metadata and history, gzip bodies.

The server runs on a background thread over an in-memory store, on a free loopback port."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
import requests

from .wire import EMPTY, SPEC2, TABLE, Api, put


def iceberg(location: str) -> dict[str, Any]:
    return {**TABLE, "metadataLocation": location}


def namespace(dotted: str) -> dict[str, Any]:
    return {"type": "NAMESPACE", "elements": dotted.split(".")}


@pytest.fixture
def api(served_inmemory: Callable[[], AbstractContextManager[str]]) -> Iterator[Api]:
    with served_inmemory() as uri:
        yield Api(uri)


@pytest.fixture
def catalog(api: Api) -> dict[str, str]:
    """n1 (namespace) with tables t1 and t2, n2 with t3; then a second commit updating nothing new."""
    first = api.commit(
        "main",
        put("n1", namespace("n1")),
        put("n1.t1", iceberg("m1")),
        put("n1.t2", iceberg("m2")),
        message="first",
    )
    second = api.commit("main", put("n2", namespace("n2")), put("n2.t3", iceberg("m3")), message="second")
    return {"first": first, "second": second}


def test_config_answers_like_nessie(api: Api) -> None:
    doc = api.ok("GET", "/config")
    assert doc["defaultBranch"] == "main"
    assert doc["noAncestorHash"] == EMPTY
    assert doc["specVersion"] == "2.2.0"


def test_config_advertises_exactly_the_api_versions_served(api: Api) -> None:
    """API v2 only: minSupportedApiVersion is 2, and /api/v1 answers 404."""
    doc = api.ok("GET", "/config")
    versions = ("minSupportedApiVersion", "maxSupportedApiVersion", "actualApiVersion")
    assert [doc[name] for name in versions] == [2, 2, 2]
    root = api.base.removesuffix("/api/v2")
    for version in (1, 3):
        assert requests.get(f"{root}/api/v{version}/config", timeout=30).status_code == 404


# --- paths ---------------------------------------------------------------------------------------


def test_relative_specs_and_the_default_branch_in_paths(api: Api, catalog: dict[str, str]) -> None:
    entries = api.ok("GET", "/trees/main~1/entries")
    assert entries["effectiveReference"] == {"type": "BRANCH", "name": "main", "hash": catalog["first"]}
    assert sorted(".".join(e["name"]["elements"]) for e in entries["entries"]) == ["n1", "n1.t1", "n1.t2"]
    detached = api.ok("GET", f"/trees/@{catalog['second']}~1/entries")
    assert detached["effectiveReference"] == {"type": "DETACHED", "hash": catalog["first"]}
    log = api.ok("GET", "/trees/-/history", **{"max-records": 1})
    assert log["logEntries"][0]["commitMeta"]["hash"] == catalog["second"]
    assert (
        api.ok("GET", f"/trees/main@{catalog['second']}^1/history")["logEntries"][0]["commitMeta"]["message"]
        == "first"
    )
    past = api.ok("GET", "/trees/main*946684800000/entries")  # 2000-01-01: before everything
    assert (past["entries"], past["effectiveReference"]["hash"]) == ([], EMPTY)


def test_a_malformed_reference_element_is_a_bad_request_naming_the_rule(api: Api) -> None:
    status, doc = api.call("GET", "/trees/main~x/entries")
    assert (status, doc["errorCode"]) == (400, "BAD_REQUEST")
    assert "relative lookups" in doc["message"]


@pytest.mark.parametrize(
    "element", ["main~2024-05-01T10:00:00Z", "main*2024-13-01T10:00:00Z", "-*99999999999999999999"]
)
def test_a_lookup_that_means_nothing_is_a_bad_request_not_a_server_error(api: Api, element: str) -> None:
    # Found by the API check (schemathesis): these were answered 500.
    for path in (f"/trees/{element}/entries", f"/trees/{element}/recent-changes"):
        status, doc = api.call("GET", path)
        assert (status, doc["errorCode"]) == (400, "BAD_REQUEST"), (path, doc)
        assert "Invalid relative lookup" in doc["message"]


def test_a_hash_is_not_allowed_when_fetching_a_reference(api: Api, catalog: dict[str, str]) -> None:
    status, doc = api.call("GET", f"/trees/main@{catalog['first']}")
    assert (status, doc["message"]) == (400, "Hashes are not allowed when fetching a reference by name")


# --- contents ------------------------------------------------------------------------------------


def test_contents_one_several_and_missing(api: Api, catalog: dict[str, str]) -> None:
    one = api.ok("GET", "/trees/main/contents/n1.t1")
    assert one["content"]["metadataLocation"] == "m1"
    assert one["effectiveReference"]["hash"] == catalog["second"]
    several = api.ok("GET", "/trees/main/contents", key=["n1.t1", "n2.t3", "absent"])
    # in the order Nessie lists them (its hash map's), not the order asked for
    assert [c["key"]["elements"] for c in several["contents"]] == [["n2", "t3"], ["n1", "t1"]]
    posted = api.ok("POST", "/trees/main/contents", {"requestedKeys": [{"elements": ["n1", "t2"]}]})
    assert posted["contents"][0]["content"]["metadataLocation"] == "m2"
    status, missing = api.call("GET", "/trees/main/contents/n1.absent")
    assert (status, missing["errorCode"]) == (404, "CONTENT_NOT_FOUND")
    assert missing["message"] == "Could not find content for key 'n1.absent' in reference 'main'."
    assert missing["errorDetails"] == {"type": "CONTENT_KEY", "contentKey": {"elements": ["n1", "absent"]}}


# --- errors --------------------------------------------------------------------------------------


def test_conflict_details_only_for_client_spec_2(api: Api, catalog: dict[str, str]) -> None:
    body = {"commitMeta": {"message": "x"}, "operations": [put("n1.t1", iceberg("again"))]}
    path = f"/trees/main@{catalog['first']}/history/commit"
    status, with_details = api.call("POST", path, body)
    assert (status, with_details["errorCode"]) == (400, "BAD_REQUEST")  # a Put without content id
    assert with_details["errorDetails"]["conflicts"][0]["conflictType"] == "KEY_EXISTS"
    status, plain = api.call("POST", path, body, headers={"Content-Type": "application/json"})
    assert status == 400
    assert "errorDetails" not in plain
    assert plain["message"] == with_details["message"]


def test_stale_expected_hash_conflict_is_409_with_the_key(api: Api, catalog: dict[str, str]) -> None:
    current = api.ok("GET", "/trees/main/contents/n1.t1")["content"]
    update = {**current, "metadataLocation": "m1b"}
    api.commit("main", put("n1.t1", update))
    body = {
        "commitMeta": {"message": "late"},
        "operations": [put("n1.t1", {**current, "metadataLocation": "x"})],
    }
    status, doc = api.call("POST", f"/trees/main@{catalog['second']}/history/commit", body)
    assert (status, doc["errorCode"]) == (409, "REFERENCE_CONFLICT")
    (conflict,) = doc["errorDetails"]["conflicts"]
    assert (conflict["conflictType"], conflict["key"]) == ("VALUE_DIFFERS", {"elements": ["n1", "t1"]})
    assert conflict["content"]["metadataLocation"] == "m1b"  # lochkit's addition: what the key holds now


@pytest.mark.parametrize(
    ("method", "path", "body", "params", "message"),
    [
        ("POST", "/trees/main/history/commit", {"operations": []}, {}, "Expected hash must be provided"),
        ("POST", "/trees", {"type": "BRANCH", "name": "main", "hash": EMPTY}, {"name": "x"}, "type missing"),
        (
            "POST",
            "/trees",
            {"type": "BRANCH", "name": "main", "hash": EMPTY},
            {"name": "a@b", "type": "BRANCH"},
            "'@'",
        ),
        ("DELETE", f"/trees/main@{EMPTY}", None, {}, "Default branch 'main' cannot be deleted."),
        ("GET", "/trees/main/entries", None, {"filter": "entry.name =="}, "Invalid CEL filter"),
        ("GET", "/trees/main/history", None, {"fetch": "SOME"}, "fetch must be MINIMAL or ALL"),
        ("GET", "/trees/main/entries", None, {"max-records": "ten"}, "max-records"),
        ("POST", f"/trees/main@{EMPTY}/history/merge", {"fromHash": EMPTY}, {}, "fromRefName"),
        ("POST", f"/trees/main@{EMPTY}/history/transplant", {"fromRefName": "main"}, {}, "No hashes"),
    ],
)
def test_bad_requests_say_what_is_wrong(
    api: Api, method: str, path: str, body: Any, params: dict[str, Any], message: str
) -> None:
    status, doc = api.call(method, path, body, **params)
    assert (status, doc["errorCode"]) == (400, "BAD_REQUEST"), doc
    assert message in doc["message"]


def test_client_set_commit_time_is_refused(api: Api) -> None:
    body = {"commitMeta": {"message": "m", "commitTime": "2020-01-01T00:00:00Z"}, "operations": []}
    status, doc = api.call("POST", f"/trees/main@{EMPTY}/history/commit", body)
    assert status == 400
    assert doc["message"] == "Cannot set the commit time on the client side. It is set by the server."


def test_unknown_references_and_endpoints_are_404(api: Api) -> None:
    status, doc = api.call("GET", "/trees/nope/entries")
    assert (status, doc["errorCode"], doc["message"]) == (
        404,
        "REFERENCE_NOT_FOUND",
        "Named reference 'nope' not found",
    )
    status, doc = api.call("GET", "/trees/main/nothing-here")
    assert (status, doc["errorCode"]) == (404, "UNKNOWN")
    assert "No such endpoint" in doc["message"]


def test_a_body_that_is_not_json_is_a_bad_request(api: Api) -> None:
    response = requests.post(
        f"{api.base}/trees/main@{EMPTY}/history/commit", data=b"{not json", headers=SPEC2, timeout=30
    )
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["message"]


def test_gzip_request_bodies_are_read(api: Api) -> None:
    body = {"commitMeta": {"message": "zipped"}, "operations": [put("z", iceberg("z"))]}
    response = requests.post(
        f"{api.base}/trees/main@{EMPTY}/history/commit",
        data=gzip.compress(json.dumps(body).encode()),
        headers={**SPEC2, "Content-Type": "application/json", "Content-Encoding": "gzip"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert api.ok("GET", "/trees/main/contents/z")["content"]["metadataLocation"] == "z"


# --- CEL filters and paging ----------------------------------------------------------------------


def test_cel_filters_on_entries_log_references_and_diff(api: Api, catalog: dict[str, str]) -> None:
    entries = api.ok(
        "GET", "/trees/main/entries", filter="entry.namespace == 'n1' && entry.contentType == 'ICEBERG_TABLE'"
    )
    assert [e["name"]["elements"] for e in entries["entries"]] == [["n1", "t1"], ["n1", "t2"]]
    deep = api.ok("GET", "/trees/main/entries", filter="size(entry.keyElements) == 1")
    assert [e["name"]["elements"] for e in deep["entries"]] == [["n1"], ["n2"]]
    log = api.ok("GET", "/trees/main/history", filter="commit.message == 'first'")
    assert [e["commitMeta"]["hash"] for e in log["logEntries"]] == [catalog["first"]]
    ops = api.ok(
        "GET", "/trees/main/history", fetch="ALL", filter="operations.exists(op, op.key.startsWith('n2.'))"
    )
    assert [e["commitMeta"]["message"] for e in ops["logEntries"]] == ["second"]
    recent = api.ok(
        "GET",
        "/trees/main/history",
        filter="timestamp(commit.commitTime) > timestamp('2000-01-01T00:00:00Z')",
    )
    assert len(recent["logEntries"]) == 2
    api.ok(
        "POST",
        "/trees",
        {"type": "BRANCH", "name": "main", "hash": catalog["first"]},
        name="dev",
        type="BRANCH",
    )
    refs = api.ok("GET", "/trees", filter="refType == 'BRANCH' && ref.name.startsWith('d')")
    assert [r["name"] for r in refs["references"]] == ["dev"]
    with_meta = api.ok("GET", "/trees", fetch="ALL", filter="commit.message == 'first'")
    assert [r["name"] for r in with_meta["references"]] == ["dev"]
    diff = api.ok("GET", "/trees/dev/diff/main", filter="key.namespace == 'n2'")
    assert [d["key"]["elements"] for d in diff["diffs"]] == [["n2", "t3"]]


def test_a_filter_that_fails_on_a_value_is_a_bad_request(api: Api, catalog: dict[str, str]) -> None:
    status, doc = api.call("GET", "/trees/main/entries", filter="entry.nosuchfield == 1")
    assert (status, doc["errorCode"]) == (400, "BAD_REQUEST")
    assert "nosuchfield" in doc["message"]


@pytest.mark.parametrize(
    ("path", "field", "ident"),
    [
        ("/trees/main/entries", "entries", lambda e: e["name"]["elements"]),
        ("/trees/main/history", "logEntries", lambda e: e["commitMeta"]["hash"]),
        (f"/trees/@{EMPTY}/diff/main", "diffs", lambda d: d["key"]["elements"]),
        ("/trees", "references", lambda r: r["name"]),
    ],
)
def test_page_size_paging_with_opaque_tokens(api: Api, path: str, field: str, ident: Any) -> None:
    """Pages of two; each token resumes where the page stopped; the last page has no token."""
    for i in range(5):
        api.commit("main", put(f"k{i}", iceberg(f"m{i}")), message=f"c{i}")
        api.ok(
            "POST",
            "/trees",
            {"type": "BRANCH", "name": "main", "hash": api.head()},
            name=f"b{i}",
            type="BRANCH",
        )
    everything = [ident(e) for e in api.ok("GET", path)[field]]
    assert len(everything) >= 5
    seen: list[Any] = []
    token = None
    while True:
        params = {"max-records": 2, **({"page-token": token} if token else {})}
        page = api.ok("GET", path, **params)
        assert len(page[field]) <= 2
        seen += [ident(e) for e in page[field]]
        if not page["hasMore"]:
            assert page["token"] is None
            break
        token = page["token"]
    assert seen == everything


def test_listings_page_and_narrow_in_nessies_key_order(api: Api) -> None:
    """Keys mixing characters above U+FFFF with U+E000..U+FFFF: entries and diffs come in Nessie's
    order (UTF-16 code units: the emoji's surrogate pair sorts before U+FF5E), paging resumes in
    it, and requested keys narrow the range without losing any."""
    names = ["t\uff5e", "t\U0001f600", "t\ue000", "t\U00010000x", "ta", "t\ufffd"]
    api.commit("main", *(put(n, iceberg(n)) for n in names))
    expected = sorted(names, key=lambda n: n.encode("utf-16-be"))
    assert expected != sorted(names)
    entries = api.ok("GET", "/trees/main/entries")["entries"]
    assert [e["name"]["elements"][0] for e in entries] == expected
    diffs = api.ok("GET", f"/trees/@{EMPTY}/diff/main")["diffs"]
    assert [d["key"]["elements"][0] for d in diffs] == expected
    seen: list[str] = []
    token = None
    while True:
        page = api.ok(
            "GET", "/trees/main/entries", **{"max-records": 1, **({"page-token": token} if token else {})}
        )
        seen += [e["name"]["elements"][0] for e in page["entries"]]
        if not page["hasMore"]:
            break
        token = page["token"]
    assert seen == expected
    wanted = ["t\uff5e", "t\U0001f600"]
    narrowed = api.ok("GET", "/trees/main/entries", key=wanted)["entries"]
    assert sorted(e["name"]["elements"][0] for e in narrowed) == sorted(wanted)


def test_the_log_is_capped_at_250_entries_a_page(api: Api) -> None:
    for i in range(3):
        api.commit("main", put(f"k{i}", iceberg("m")))
    doc = api.ok("GET", "/trees/main/history", **{"max-records": 100_000})
    assert (len(doc["logEntries"]), doc["hasMore"]) == (3, False)


# --- references ----------------------------------------------------------------------------------


def test_fetch_all_gives_reference_metadata(api: Api, catalog: dict[str, str]) -> None:
    api.ok(
        "POST",
        "/trees",
        {"type": "BRANCH", "name": "main", "hash": catalog["first"]},
        name="dev",
        type="BRANCH",
    )
    api.commit("dev", put("d", iceberg("d")), message="on dev", allProperties={"who": ["a", "b"]})
    dev = api.ok("GET", "/trees/dev", fetch="ALL")["reference"]
    metadata = dev["metadata"]
    assert (metadata["numCommitsAhead"], metadata["numCommitsBehind"]) == (1, 1)
    assert metadata["commonAncestorHash"] == catalog["first"]
    assert metadata["numTotalCommits"] == 2
    assert metadata["commitMetaOfHEAD"]["message"] == "on dev"
    assert metadata["commitMetaOfHEAD"]["allProperties"] == {"who": ["a", "b"]}
    main = api.ok("GET", "/trees/main", fetch="ALL")["reference"]["metadata"]
    assert (main["numCommitsAhead"], main["numCommitsBehind"], main["commonAncestorHash"]) == (
        None,
        None,
        None,
    )
    assert "metadata" not in api.ok("GET", "/trees/dev")["reference"]


def test_reference_lifecycle_and_recent_changes(api: Api, catalog: dict[str, str]) -> None:
    created = api.ok(
        "POST", "/trees", {"type": "BRANCH", "name": "main", "hash": catalog["second"]}, name="t", type="TAG"
    )
    assert created["reference"] == {"type": "TAG", "name": "t", "hash": catalog["second"]}
    status, doc = api.call("PUT", f"/trees/t@{catalog['second']}", {"hash": catalog["first"]}, type="BRANCH")
    assert status == 400
    assert "does not match" in doc["message"]
    moved = api.ok(
        "PUT",
        f"/trees/t@{catalog['second']}",
        {"type": "BRANCH", "name": "main", "hash": catalog["first"]},
        type="TAG",
    )
    assert moved["reference"]["hash"] == catalog["first"]
    history = api.ok("GET", "/trees/t/recent-changes")
    assert history["current"]["commitHash"] == catalog["first"]
    assert [p["commitHash"] for p in history["previous"]] == [catalog["second"]]
    assert history["current"]["commitConsistency"] == "COMMIT_CONSISTENT"
    assert history["commitLogConsistency"] == "NOT_CHECKED"
    checked = api.ok("GET", "/trees/t/recent-changes", **{"scan-commits": 5})
    assert checked["commitLogConsistency"] == "COMMIT_CONSISTENT"
    deleted = api.ok("DELETE", f"/trees/t@{catalog['first']}", type="TAG")
    assert deleted["reference"] == {"type": "TAG", "name": "t", "hash": catalog["first"]}
    assert api.call("GET", "/trees/t")[0] == 404


def test_transplant_message_override_and_merge_over_http(api: Api, catalog: dict[str, str]) -> None:
    api.ok(
        "POST",
        "/trees",
        {"type": "BRANCH", "name": "main", "hash": catalog["first"]},
        name="dev",
        type="BRANCH",
    )
    picked = api.commit("dev", put("d", iceberg("d")), message="pick me")
    body = {"fromRefName": "dev", "hashesToTransplant": [picked], "message": "picked onto main"}
    result = api.ok("POST", f"/trees/main@{api.head()}/history/transplant", body)
    assert (result["wasApplied"], result["wasSuccessful"]) == (True, True)
    assert (
        api.ok("GET", "/trees/main/history")["logEntries"][0]["commitMeta"]["message"] == "picked onto main"
    )
    api.commit("dev", put("e", iceberg("e")))
    merge = {"fromRefName": "dev", "fromHash": api.head("dev"), "isDryRun": True}
    dry = api.ok("POST", f"/trees/main@{api.head()}/history/merge", merge)
    assert (dry["wasApplied"], dry["wasSuccessful"]) == (False, True)
    assert [d for d in dry["details"] if "conflict" in d or "conflictType" in d] == []  # as Nessie 0.99


def test_a_branch_forked_from_an_empty_main_merges_as_its_metadata_says(api: Api) -> None:
    """main has no commits, dev forked from it has one: fetch=ALL says dev is 1 ahead, 0 behind,
    common ancestor the no-ancestor hash. Merging the empty main into dev has nothing to bring;
    merging dev into main brings dev's content, from that common ancestor."""
    api.ok("POST", "/trees", {"type": "BRANCH", "name": "main", "hash": EMPTY}, name="dev", type="BRANCH")
    head = api.commit("dev", put("t", iceberg("m")))
    metadata = api.ok("GET", "/trees/dev", fetch="ALL")["reference"]["metadata"]
    assert (metadata["numCommitsAhead"], metadata["numCommitsBehind"]) == (1, 0)
    assert metadata["commonAncestorHash"] == EMPTY

    from_main = api.ok("POST", f"/trees/dev@{head}/history/merge", {"fromRefName": "main", "fromHash": EMPTY})
    assert (from_main["wasApplied"], from_main["wasSuccessful"]) == (False, True)
    assert (from_main["commonAncestor"], from_main["resultantTargetHash"]) == (EMPTY, head)
    assert api.head("dev") == head
    assert api.ok("GET", "/trees/dev/contents/t")["content"]["metadataLocation"] == "m"

    into_main = api.ok("POST", f"/trees/main@{EMPTY}/history/merge", {"fromRefName": "dev", "fromHash": head})
    assert (into_main["wasApplied"], into_main["wasSuccessful"]) == (True, True)
    assert into_main["commonAncestor"] == metadata["commonAncestorHash"]
    assert api.ok("GET", "/trees/main/contents/t")["content"]["metadataLocation"] == "m"
    after = api.ok("GET", "/trees/dev", fetch="ALL")["reference"]["metadata"]
    assert (after["numCommitsAhead"], after["numCommitsBehind"], after["commonAncestorHash"]) == (0, 1, head)
