"""Bounded requests: each limit refuses what is over it in Nessie's error shape, naming the limit
and the ``lochkit serve`` option that raises it, and lets what is within it through. The server
here runs in-process with small limits; ``test_serve_limits.py`` runs ``lochkit serve`` itself."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from backends.inmemory import InMemoryBackendFactory
from loadgen.targets.in_process import in_process_target
from persist_spi.versionstore.api import VersionStoreApi
from rest_server import BackgroundServer, create_app
from rest_server.limits import RequestLimits

from .wire import read_raw_answer

#: Small limits, so that each is easy to cross.
LIMITS = RequestLimits(
    max_body_size=2000,
    max_decompressed_size=4000,
    max_keys=3,
    max_page_size=2,
    body_timeout=1.0,
    read_timeout=None,
    max_concurrent_requests=None,
)


@pytest.fixture(scope="module")
def store() -> Iterator[VersionStoreApi]:
    with in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    ) as target:
        yield target.api


@pytest.fixture(scope="module")
def uri(store: VersionStoreApi) -> Iterator[str]:
    with BackgroundServer(create_app(lambda: store, limits=LIMITS)) as server:
        _commit_tables(server.uri, 5)
        yield server.uri


def _commit_tables(uri: str, count: int) -> None:
    """``count`` tables on main, three a commit (the key limit)."""
    for start in range(0, count, 3):
        head = requests.get(f"{uri}/trees/main", timeout=60).json()["reference"]["hash"]
        operations = [
            {"type": "PUT", "key": {"elements": [f"t{i}"]}, "content": _table(i)}
            for i in range(start, min(start + 3, count))
        ]
        answer = requests.post(
            f"{uri}/trees/main@{head}/history/commit",
            json={"commitMeta": {"message": f"tables from {start}"}, "operations": operations},
            timeout=60,
        )
        assert answer.status_code == 200, answer.text


def _table(i: int) -> dict[str, Any]:
    return {
        "type": "ICEBERG_TABLE",
        "metadataLocation": f"s3://b/t{i}",
        "snapshotId": 1,
        "schemaId": 0,
        "specId": 0,
        "sortOrderId": 0,
    }


def _refused(answer: requests.Response, status: int, *words: str) -> None:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["status"] == status
    assert body["errorCode"] == "BAD_REQUEST"
    assert body["reason"]  # HTTP's phrase, as Nessie's server sends it
    for word in words:
        assert word in body["message"], body["message"]


def _contents_body(keys: int) -> bytes:
    return json.dumps({"requestedKeys": [{"elements": [f"t{i}"]} for i in range(keys)]}).encode()


# -- body size on the wire --------------------------------------------------------------------------


def test_a_body_over_the_limit_is_refused_by_its_content_length(uri: str) -> None:
    padding = json.dumps({"requestedKeys": [{"elements": ["t0"]}], "pad": "x" * 3000})
    answer = requests.post(
        f"{uri}/trees/main/contents", data=padding, timeout=60, headers={"Content-Type": "application/json"}
    )
    _refused(answer, 413, "body of 3", "limit of 2000 bytes", "--max-body-size raises it")


def test_a_chunked_body_over_the_limit_is_refused_while_it_arrives(uri: str) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: requests sends it chunked
        yield b'{"requestedKeys": [{"elements": ["t0"]}], "pad": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}'

    answer = requests.post(f"{uri}/trees/main/contents", data=chunks(), timeout=60)
    _refused(answer, 413, "over the server's limit of 2000 bytes", "--max-body-size")


def test_a_body_within_the_limits_is_answered(uri: str) -> None:
    for data, headers in [
        (_contents_body(2), {}),
        (gzip.compress(_contents_body(2)), {"Content-Encoding": "gzip"}),
        (zlib.compress(_contents_body(2)), {"Content-Encoding": "deflate"}),
    ]:
        answer = requests.post(f"{uri}/trees/main/contents", data=data, headers=headers, timeout=60)
        assert answer.status_code == 200, answer.text
        assert len(answer.json()["contents"]) == 2


# -- decompressed size ------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_compressed_body_inflating_over_the_limit_is_refused(uri: str, encoding: str) -> None:
    text = json.dumps({"requestedKeys": [{"elements": ["t0"]}], "pad": " " * 100_000}).encode()
    data = gzip.compress(text) if encoding == "gzip" else zlib.compress(text)
    assert len(data) < 2000  # within the wire limit: only the inflated size is over
    answer = requests.post(
        f"{uri}/trees/main/contents", data=data, headers={"Content-Encoding": encoding}, timeout=60
    )
    _refused(
        answer,
        413,
        f"{encoding} request body inflates to more than the server's limit of 4000 bytes",
        "--max-decompressed-size",
    )


def test_a_truncated_or_broken_compressed_body_is_a_400(uri: str) -> None:
    whole = gzip.compress(_contents_body(1))
    for data, reason in [(whole[:-12], "incomplete or truncated"), (b"\x1f\x8bnot gzip", "not valid gzip")]:
        answer = requests.post(
            f"{uri}/trees/main/contents", data=data, headers={"Content-Encoding": "gzip"}, timeout=60
        )
        _refused(answer, 400, reason)


# -- keys per request -------------------------------------------------------------------------------


def test_more_keys_than_the_limit_are_refused_in_every_place_a_request_names_them(uri: str) -> None:
    head = requests.get(f"{uri}/trees/main", timeout=60).json()["reference"]["hash"]
    four_keys = [("key", f"t{i}") for i in range(4)]
    put = {"type": "PUT", "key": {"elements": ["x"]}, "content": _table(9)}
    refused = [
        requests.post(f"{uri}/trees/main/contents", data=_contents_body(4), timeout=60),
        requests.get(f"{uri}/trees/main/contents", params=four_keys, timeout=60),
        requests.get(f"{uri}/trees/main/entries", params=four_keys, timeout=60),
        requests.get(f"{uri}/trees/main/diff/main", params=four_keys, timeout=60),
        requests.post(
            f"{uri}/trees/main@{head}/history/commit",
            json={"commitMeta": {"message": "four"}, "operations": [put] * 4},
            timeout=60,
        ),
        requests.post(
            f"{uri}/trees/main@{head}/history/transplant",
            json={"fromRefName": "main", "hashesToTransplant": [head] * 4},
            timeout=60,
        ),
    ]
    for answer in refused:
        _refused(answer, 400, "has 4", "limit of 3", "--max-keys raises it")
    # Three are within the limit.
    answer = requests.get(f"{uri}/trees/main/contents", params=four_keys[:3], timeout=60)
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["contents"]) == 3


# -- page size --------------------------------------------------------------------------------------


@pytest.mark.parametrize("asked", [None, "0", "5", "-1"])
def test_pages_are_capped_at_the_limit_and_the_rest_follows_by_token(uri: str, asked: str | None) -> None:
    params = {} if asked is None else {"max-records": asked}
    keys: list[str] = []
    token = None
    while True:
        answer = requests.get(
            f"{uri}/trees/main/entries",
            params={**params, **({"page-token": token} if token else {})},
            timeout=60,
        ).json()
        assert len(answer["entries"]) <= 2
        keys += [e["name"]["elements"][0] for e in answer["entries"]]
        if not answer["hasMore"]:
            break
        token = answer["token"]
    assert keys == [f"t{i}" for i in range(5)]


def test_a_smaller_page_is_kept_and_a_page_size_that_is_no_number_stays_a_400(uri: str) -> None:
    one = requests.get(f"{uri}/trees/main/entries", params={"max-records": "1"}, timeout=60).json()
    assert len(one["entries"]) == 1
    assert one["hasMore"]
    answer = requests.get(f"{uri}/trees/main/entries", params={"max-records": "many"}, timeout=60)
    _refused(answer, 400, "max-records")


# -- time -------------------------------------------------------------------------------------------


def test_a_body_trickling_past_the_body_timeout_is_a_408(uri: str) -> None:
    host, port = uri.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as client:
        client.sendall(
            b"POST /api/v2/trees/main/contents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"requested'
        )
        answer = read_raw_answer(client)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert "did not arrive within the server's limit of 1 s" in body["message"]
    assert "--body-timeout" in body["message"]


class _SlowStore:
    """A store source that takes ``seconds`` each time a handler asks for the store: a slow read."""

    def __init__(self, store: VersionStoreApi, seconds: float) -> None:
        self.store = store
        self.seconds = seconds
        self.finished = threading.Event()

    def __call__(self) -> VersionStoreApi:
        time.sleep(self.seconds)
        self.finished.set()
        return self.store


def test_a_read_over_the_read_timeout_is_answered_503_and_its_work_finishes(store: VersionStoreApi) -> None:
    slow = _SlowStore(store, 1.5)
    with BackgroundServer(create_app(slow, limits=RequestLimits(read_timeout=0.2))) as server:
        answer = requests.get(f"{server.uri}/trees", timeout=60)
        assert not slow.finished.is_set()  # answered before the work ended
        assert answer.status_code == 503, answer.text
        assert "took longer than the server's limit of 0.2 s" in answer.json()["message"]
        assert "--read-timeout" in answer.json()["message"]
        assert answer.json()["errorCode"] == "UNKNOWN"
        assert slow.finished.wait(30)
        slow.seconds = 0
        assert requests.get(f"{server.uri}/trees", timeout=60).status_code == 200


def test_a_write_is_never_cut_short_by_the_read_timeout(store: VersionStoreApi, uri: str) -> None:
    head = requests.get(f"{uri}/trees/main", timeout=60).json()["reference"]["hash"]
    slow = _SlowStore(store, 0.6)
    with BackgroundServer(create_app(slow, limits=RequestLimits(read_timeout=0.1))) as server:
        answer = requests.post(
            f"{server.uri}/trees",
            params={"name": "slow-write", "type": "BRANCH"},
            json={"type": "BRANCH", "name": "main", "hash": head},
            timeout=60,
        )
        assert answer.status_code == 200, answer.text


def test_requests_over_the_concurrency_limit_are_answered_503_at_once(store: VersionStoreApi) -> None:
    slow = _SlowStore(store, 1.5)
    limits = RequestLimits(max_concurrent_requests=1, read_timeout=None)
    with BackgroundServer(create_app(slow, limits=limits)) as server:
        first: list[requests.Response] = []
        busy = threading.Thread(target=lambda: first.append(requests.get(f"{server.uri}/trees", timeout=60)))
        busy.start()
        time.sleep(0.5)  # the first request is inside the slow store
        second = requests.get(f"{server.uri}/trees", timeout=60)
        busy.join()
        assert second.status_code == 503, second.text
        assert second.headers["Retry-After"] == "1"
        assert "--max-concurrent-requests" in second.json()["message"]
        assert second.json()["errorCode"] == "UNKNOWN"
        assert first[0].status_code == 200
