"""Content documents are checked where they enter the API (a commit's PUT operations, the
expected and resolved contents of merge and transplant key behaviours): a document with a required
field missing or null, a field of another JSON type, an unknown content type or a content id that
is no UUID is answered HTTP 400 BAD_REQUEST naming the field and the operation, and nothing is
stored. Valid documents of every type are stored and served back as sent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest

from .wire import CONVERTED_BY_NESSIE, INVALID, TABLE, VALID, Api, put, served_form


@pytest.fixture(scope="module")
def api(served_inmemory: Callable[[], AbstractContextManager[str]]) -> Iterator[Api]:
    with served_inmemory() as uri:
        yield Api(uri)


def _refused(api: Api, content: Any) -> str:
    """Commit ``content`` at key 'bad' on main: the answer's message, after checking it is a 400 and
    that main did not move."""
    before = api.head()
    status, doc = api.try_commit("main", put("bad", content))
    assert status == 400, doc
    assert (doc["errorCode"], doc["status"]) == ("BAD_REQUEST", 400), doc
    assert api.head() == before, "a refused commit moved the branch"
    assert api.call("GET", "/trees/main/contents/bad")[0] == 404
    return str(doc["message"])


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_content_is_refused_naming_the_field_and_the_operation(api: Api, name: str) -> None:
    case = INVALID[name]
    message = _refused(api, case.content)
    assert case.says in message
    assert "PUT operation on 'bad'" in message


@pytest.mark.parametrize("name", list(CONVERTED_BY_NESSIE))
def test_values_nessie_would_convert_are_refused(api: Api, name: str) -> None:
    content, converted = CONVERTED_BY_NESSIE[name]
    message = _refused(api, content)
    (field,) = converted
    assert field in message


@pytest.mark.parametrize("name", list(VALID))
def test_valid_content_of_every_type_is_stored_and_served_back_as_sent(api: Api, name: str) -> None:
    """Served back with what was sent and nothing else: no field the client left out appears
    (Nessie leaves absent optional fields out, and so do its clients)."""
    sent = VALID[name]
    key = f"ok-{name}"
    api.commit("main", put(key, sent))
    served = api.ok("GET", f"/trees/main/contents/{key}")["content"]
    assert isinstance(served["id"], str)
    assert served_form(served) == served_form(sent)


def test_a_whole_number_written_with_a_fraction_part_is_stored_as_a_whole_number(api: Api) -> None:
    api.commit("main", put("float-id", {**TABLE, "snapshotId": 1000.0}))
    assert api.ok("GET", "/trees/main/contents/float-id")["content"]["snapshotId"] == 1000


@pytest.mark.parametrize("operation", ["merge", "transplant"])
@pytest.mark.parametrize("field", ["expectedTargetContent", "resolvedContent"])
def test_invalid_content_in_merge_key_behaviours_is_refused(api: Api, operation: str, field: str) -> None:
    branch = f"{operation}-{field}"
    api.ok(
        "POST", "/trees", {"type": "BRANCH", "name": "main", "hash": api.head()}, name=branch, type="BRANCH"
    )
    picked = api.commit(branch, put(f"t-{branch}", TABLE))
    behaviour = {
        "key": {"elements": [f"t-{branch}"]},
        "mergeBehavior": "FORCE",
        field: {**TABLE, "snapshotId": "x"},
    }
    body: dict[str, Any] = {"fromRefName": branch, "keyMergeModes": [behaviour]}
    if operation == "merge":
        body["fromHash"] = picked
    else:
        body["hashesToTransplant"] = [picked]
    before = api.head()
    status, doc = api.call("POST", f"/trees/main@{before}/history/{operation}", body)
    assert (status, doc["errorCode"]) == (400, "BAD_REQUEST"), doc
    assert f"{field} of the key merge behaviour for 't-{branch}'" in doc["message"]
    assert "'snapshotId' must be a whole number" in doc["message"]
    assert api.head() == before
