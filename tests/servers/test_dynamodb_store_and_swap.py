"""DynamoDB's store-and-swap in one TransactWriteItems request, against a real server (DynamoDB
Local unless ``LOCHKIT_DYNAMODB_URL`` names another), in both storage layouts.

The conformance suite checks what the call answers; this checks what it sends: the requests are
counted with a botocore hook on the adapter's clients. A commit's objects and its swap are one
request; every case the transaction cannot settle (an object that existed, a failed reference
condition, a batch over DynamoDB's limits, a row another client inserts meanwhile) answers and
stores exactly what the two-step default does on a second repository set up the same way.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("boto3")

from backends.dynamodb import DynamoBackendFactory
from backends.dynamodb.adapter import DynamoDBAdapter
from backends.dynamodb.transaction import TRANSACTION_ACTIONS, TRANSACTION_BYTES, action_size
from persist_spi.adapter import BackendAdapter, InsertAndSwap, ObjRow, RefRow
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.opening import open_persist
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from provisioning.base import Provisioned
from tests.servers.provisioned import provisioned_server

FACTORY = DynamoBackendFactory()
TRANSACTION = "TransactWriteItems"


@pytest.fixture(scope="module")
def server() -> Iterator[Provisioned]:
    with provisioned_server("dynamodb", FACTORY, "dynamodb-store-and-swap") as provisioned:
        yield provisioned


@pytest.fixture(scope="module", params=["lochkit", "nessie"])
def adapter(server: Provisioned, request: pytest.FixtureRequest) -> Iterator[DynamoDBAdapter]:
    """An adapter on tables of its own (dropped afterwards), in each storage layout."""
    assert server.url is not None
    prefix = f"ss{uuid.uuid4().hex[:8]}"
    adapter = FACTORY.create(f"{server.url}&layout={request.param}&table_prefix={prefix}")
    adapter.setup_schema()
    try:
        yield adapter
    finally:
        for table in (adapter._refs, adapter._objs):
            adapter._client.delete_table(TableName=table)
        adapter.close()


@contextmanager
def requests_of(adapter: DynamoDBAdapter) -> Iterator[list[str]]:
    """The operation name of every request the adapter sends meanwhile (each attempt counted)."""
    sent: list[str] = []

    def seen(request: Any, **_: Any) -> None:
        target = request.headers["X-Amz-Target"]
        sent.append((target.decode() if isinstance(target, bytes) else target).rsplit(".", 1)[1])

    clients = (adapter._client, adapter._cas)
    for client in clients:
        client.meta.events.register("before-send.dynamodb", seen)
    try:
        yield sent
    finally:
        for client in clients:
            client.meta.events.unregister("before-send.dynamodb", seen)


def _repo() -> str:
    return f"r{uuid.uuid4().hex[:12]}"


def _rows(n: int, size: int = 8) -> list[ObjRow]:
    return [ObjRow(os.urandom(32), "c", None, os.urandom(size), 1_000 + i) for i in range(n)]


def _ref() -> RefRow:
    return RefRow("refs/heads/main", os.urandom(32), False, 7, None, b"")


Arrange = Callable[[str], None]


def _as_the_two_steps(
    adapter: DynamoDBAdapter, rows: list[ObjRow], expected: RefRow, new: RefRow, arrange: Arrange
) -> tuple[InsertAndSwap, list[str]]:
    """The call's answer and requests on a repository set up by ``arrange``, after checking that the
    two-step default answers the same and leaves the same rows on another repository set up alike."""
    mine, theirs = _repo(), _repo()
    arrange(mine)
    arrange(theirs)
    with requests_of(adapter) as sent:
        outcome = adapter.insert_objs_and_update_ref(mine, rows, expected, new)
    assert outcome == BackendAdapter.insert_objs_and_update_ref(adapter, theirs, rows, expected, new)
    ids = [r.obj_id for r in rows]
    assert adapter.fetch_objs(mine, ids) == adapter.fetch_objs(theirs, ids)
    assert adapter.fetch_refs(mine, [expected.name]) == adapter.fetch_refs(theirs, [expected.name])
    return outcome, sent


def _arranged(adapter: DynamoDBAdapter, ref: RefRow | None, earlier: list[ObjRow]) -> Arrange:
    """Arrange a repository with ``earlier`` rows stored and ``ref`` created (when given)."""

    def arrange(repo: str) -> None:
        assert adapter.insert_objs(repo, earlier) == [True] * len(earlier)
        if ref is not None:
            assert adapter.insert_ref(repo, ref)

    return arrange


# --- one request ---------------------------------------------------------------------------------


def test_n_objects_and_the_swap_are_one_request(adapter: DynamoDBAdapter) -> None:
    repo, current, rows = _repo(), _ref(), _rows(10)
    assert adapter.insert_ref(repo, current)
    new = current._replace(pointer=rows[-1].obj_id)
    with requests_of(adapter) as sent:
        assert adapter.insert_objs_and_update_ref(repo, rows, current, new) == InsertAndSwap(
            [True] * 10, True
        )
    assert sent == [TRANSACTION]
    assert adapter.fetch_objs(repo, [r.obj_id for r in rows]) == rows
    assert adapter.fetch_refs(repo, [current.name]) == [new]


@pytest.mark.parametrize("object_cache", [True, False], ids=["object-cache", "no-cache"])
def test_a_one_put_version_store_commit_is_one_request_and_reads_the_head_without_the_cache(
    adapter: DynamoDBAdapter, object_cache: bool
) -> None:
    """A commit that updates a table (its content id known) writes its commit, the new value and
    the branch in one transaction; without the object cache it first reads its parent commit. A
    commit that creates a table claims the new content id before."""
    persist = open_persist(adapter, StoreConfig(repository_id=_repo()), object_cache=object_cache)
    RepositoryLogic(persist).initialize("main")
    store = VersionStore(persist)
    main, table = branch("main"), ContentKey.of("ns", "t")
    store.commit(main, None, CommitMeta("ns"), [Put(ContentKey.of("ns"), Namespace(elements=("ns",)))])
    reads = [] if object_cache else ["BatchGetItem"]
    first = IcebergTable(id=None, metadata_location="s3://b/0.json", snapshot_id=0)
    with requests_of(adapter) as sent:
        content_id = store.commit(main, None, CommitMeta("add"), [Put(table, first)]).added_content_ids[table]
    assert sent == [*reads, "PutItem", TRANSACTION]
    for n in range(1, 4):
        update = IcebergTable(id=content_id, metadata_location=f"s3://b/{n}.json", snapshot_id=n)
        with requests_of(adapter) as sent:
            store.commit(main, None, CommitMeta(f"update {n}"), [Put(table, update)])
        assert sent == [*reads, TRANSACTION], f"commit {n}"


# --- what the transaction leaves to the two steps -------------------------------------------------


@dataclass(frozen=True)
class Unsettled:
    """A call the transaction cannot settle alone: rows stored before (by position, with other
    bytes), the reference as the repository holds it for the caller, and what must come out."""

    existing: tuple[int, ...]
    #: "as expected", "moved" (the caller's row is stale) or "missing".
    reference: str
    target: int
    answer: InsertAndSwap
    #: The requests exactly, where they are known; None: the cancelled transaction, then the two steps.
    requests: tuple[str, ...] | None = None


UNSETTLED = {
    "an-object-existed": Unsettled((0,), "as expected", 2, InsertAndSwap([False, True, True], True)),
    "the-target-existed": Unsettled((1,), "as expected", 1, InsertAndSwap([True, False, True], None)),
    "the-reference-moved": Unsettled(
        (), "moved", 0, InsertAndSwap([True] * 3, False), (TRANSACTION, *["PutItem"] * 3)
    ),
    "the-reference-is-missing": Unsettled(
        (), "missing", 0, InsertAndSwap([True] * 3, False), (TRANSACTION, *["PutItem"] * 3)
    ),
    "an-object-existed-and-the-reference-moved": Unsettled(
        (0,), "moved", 1, InsertAndSwap([False, True, True], False)
    ),
}


@pytest.mark.parametrize("case", UNSETTLED.values(), ids=list(UNSETTLED))
def test_what_the_transaction_cannot_settle_answers_as_the_two_steps(
    adapter: DynamoDBAdapter, case: Unsettled
) -> None:
    """When only the reference's condition failed, the rows are stored and the swap is not tried
    again (exactly one write per row follows the transaction)."""
    current, rows = _ref(), _rows(3)
    expected = current._replace(pointer=os.urandom(32)) if case.reference == "moved" else current
    earlier = [rows[i]._replace(data=b"stored before", referenced=1) for i in case.existing]
    arrange = _arranged(adapter, None if case.reference == "missing" else current, earlier)
    new = expected._replace(pointer=rows[case.target].obj_id)
    outcome, sent = _as_the_two_steps(adapter, rows, expected, new, arrange)
    assert outcome == case.answer
    if case.requests is None:
        assert sent[0] == TRANSACTION
        assert sent.count(TRANSACTION) == 1
    else:
        assert tuple(sent) == case.requests


def test_the_most_actions_one_transaction_takes_are_one_request_and_one_more_row_the_two_steps(
    adapter: DynamoDBAdapter,
) -> None:
    current = _ref()
    fitting = _rows(TRANSACTION_ACTIONS - 1)  # and the reference: the limit
    repo = _repo()
    assert adapter.insert_ref(repo, current)
    new = current._replace(pointer=fitting[0].obj_id)
    with requests_of(adapter) as sent:
        assert adapter.insert_objs_and_update_ref(repo, fitting, current, new).swapped
    assert sent == [TRANSACTION]

    over = _rows(TRANSACTION_ACTIONS)
    new = current._replace(pointer=over[0].obj_id)
    outcome, sent = _as_the_two_steps(adapter, over, current, new, _arranged(adapter, current, []))
    assert outcome == InsertAndSwap([True] * TRANSACTION_ACTIONS, True)
    assert TRANSACTION not in sent


def test_the_most_bytes_one_transaction_takes_are_one_request_and_one_more_byte_the_two_steps(
    adapter: DynamoDBAdapter,
) -> None:
    """Also that the server accepts a transaction of the full byte budget (DynamoDB Local counts
    its payload differently from lochkit; lochkit's budget must stay below it)."""
    current, count, repo = _ref(), 10, _repo()
    empty = _rows(count, size=0)
    new = current._replace(pointer=empty[0].obj_id)
    overhead = sum(map(action_size, adapter.store_and_swap_actions(repo, empty, current, new)))
    share, extra = divmod(TRANSACTION_BYTES - overhead, count)
    fitting = [r._replace(data=os.urandom(share + (i < extra))) for i, r in enumerate(empty)]
    assert (
        sum(map(action_size, adapter.store_and_swap_actions(repo, fitting, current, new)))
        == TRANSACTION_BYTES
    )
    assert adapter.insert_ref(repo, current)
    with requests_of(adapter) as sent:
        assert adapter.insert_objs_and_update_ref(repo, fitting, current, new).swapped
    assert sent == [TRANSACTION]

    over = [fitting[0]._replace(data=fitting[0].data + b"+"), *fitting[1:]]
    outcome, sent = _as_the_two_steps(adapter, over, current, new, _arranged(adapter, current, []))
    assert outcome == InsertAndSwap([True] * count, True)
    assert TRANSACTION not in sent


# --- another client meanwhile ---------------------------------------------------------------------


@contextmanager
def after_the_transaction(adapter: DynamoDBAdapter, action: Callable[[], None]) -> Iterator[None]:
    """Run ``action`` once, right after the adapter's first transaction is answered."""
    done: list[bool] = []

    def after(**_: Any) -> None:
        if not done:
            done.append(True)
            action()

    adapter._cas.meta.events.register("after-call.dynamodb.TransactWriteItems", after)
    try:
        yield
    finally:
        adapter._cas.meta.events.unregister("after-call.dynamodb.TransactWriteItems", after)
    assert done, "no transaction was sent"


def _stored_by_another_client(adapter: DynamoDBAdapter, repo: str, row: ObjRow) -> Callable[[], None]:
    def store() -> None:
        other = DynamoDBAdapter(adapter._settings)
        try:
            assert other.insert_objs(repo, [row]) == [True]
        finally:
            other.close()

    return store


def test_a_target_another_client_inserts_after_a_failed_swap_is_answered_existing(
    adapter: DynamoDBAdapter,
) -> None:
    """The transaction failed on the reference alone; before the rows are stored, another client
    stores the target's id: the call must not claim the swap failed on a row it wrote."""
    repo, current, rows = _repo(), _ref(), _rows(2)
    stale = current._replace(pointer=os.urandom(32))
    assert adapter.insert_ref(repo, current)
    theirs = rows[1]._replace(data=b"theirs", referenced=1)
    with after_the_transaction(adapter, _stored_by_another_client(adapter, repo, theirs)):
        outcome = adapter.insert_objs_and_update_ref(repo, rows, stale, stale._replace(pointer=theirs.obj_id))
    assert outcome == InsertAndSwap([True, False], None)
    fetched = adapter.fetch_objs(repo, [r.obj_id for r in rows])
    assert fetched == [rows[0], theirs._replace(referenced=rows[1].referenced)]
    assert adapter.fetch_refs(repo, [current.name]) == [current]


def test_a_row_another_client_inserts_after_a_failed_swap_is_answered_existing(
    adapter: DynamoDBAdapter,
) -> None:
    repo, current, rows = _repo(), _ref(), _rows(2)
    stale = current._replace(pointer=os.urandom(32))
    assert adapter.insert_ref(repo, current)
    theirs = rows[0]._replace(data=b"theirs", referenced=1)
    with after_the_transaction(adapter, _stored_by_another_client(adapter, repo, theirs)):
        outcome = adapter.insert_objs_and_update_ref(
            repo, rows, stale, stale._replace(pointer=rows[1].obj_id)
        )
    assert outcome == InsertAndSwap([False, True], False)
    fetched = adapter.fetch_objs(repo, [r.obj_id for r in rows])
    assert fetched == [theirs._replace(referenced=rows[0].referenced), rows[1]]
