"""Unit tests of the DynamoDB adapter's own logic: batching and re-requesting unprocessed work,
key encoding, URL parsing, error mapping and the conditional-write loop.

The fake clients here stand in for DynamoDB only to drive lochkit's code paths (partial batch
results, throttling, AccessDenied) that DynamoDB Local cannot produce on demand. Whether the
backend works is shown by the conformance run against DynamoDB Local, not by these tests.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("boto3")

from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError
from botocore.stub import Stubber

from backends.dynamodb import DynamoBackendFactory
from backends.dynamodb.adapter import _CAS_ATTEMPTS, DynamoDBAdapter
from backends.dynamodb.batch import MAX_IDLE_ROUNDS, backoff_delay, batch_get, batch_write
from backends.dynamodb.capabilities import CAPABILITIES, DYNAMODB_ITEM_LIMIT
from backends.dynamodb.config import parse_url
from backends.dynamodb.errors import is_item_too_large, translate
from backends.dynamodb.schema import SCHEMA_ITEM_KEY
from backends.dynamodb.statements import repo_of_key, repo_prefix
from persist_spi.adapter import InsertAndSwap, ObjRow, RefRow
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    ObjTooLarge,
    UnknownOperationResult,
)

ADDRESS = "dynamodb://127.0.0.1:1?region=us-west-2&table_prefix=lochkit_"


def _key(k: str) -> dict[str, Any]:
    return {"k": {"S": k}}


def _client_error(code: str, message: str = "boom", status: int = 400) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": code, "Message": message},
            "ResponseMetadata": {
                "RequestId": "",
                "HostId": "",
                "HTTPStatusCode": status,
                "HTTPHeaders": {},
                "RetryAttempts": 0,
            },
        },
        "PutItem",
    )


class FakeBatchClient:
    """Answers batch calls from a script: each answer says how many requests to leave unprocessed."""

    def __init__(self, leave: list[int]) -> None:
        self.leave = leave
        self.requests: list[dict[str, Any]] = []

    def _left(self) -> int:
        return self.leave.pop(0) if self.leave else 0

    def batch_get_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(RequestItems)
        (table, request), *_ = RequestItems.items()
        keys = request["Keys"]
        left = self._left()
        served, unserved = keys[: len(keys) - left], keys[len(keys) - left :]
        response: dict[str, Any] = {"Responses": {table: [dict(k, v={"B": b"x"}) for k in served]}}
        if unserved:
            response["UnprocessedKeys"] = {table: dict(request, Keys=unserved)}
        return response

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(RequestItems)
        (table, writes), *_ = RequestItems.items()
        left = self._left()
        return {"UnprocessedItems": {table: writes[len(writes) - left :]} if left else {}}


# --- batching and unprocessed work ---------------------------------------------------------------


def test_batch_get_chunks_by_100_and_reads_consistently() -> None:
    client = FakeBatchClient([])
    keys = [_key(f"k{i}") for i in range(250)]
    found = batch_get(client, "objs", keys, address=ADDRESS, sleep=lambda _: None)
    assert set(found) == {f"k{i}" for i in range(250)}
    assert [len(r["objs"]["Keys"]) for r in client.requests] == [100, 100, 50]
    assert all(r["objs"]["ConsistentRead"] is True for r in client.requests)


def test_batch_get_re_requests_unprocessed_keys_until_all_are_read() -> None:
    client = FakeBatchClient([60, 60, 10, 0])  # throttled twice without progress, then progress
    sleeps: list[float] = []
    found = batch_get(
        client, "objs", [_key(f"k{i}") for i in range(100)], address=ADDRESS, sleep=sleeps.append
    )
    assert len(found) == 100
    assert [len(r["objs"]["Keys"]) for r in client.requests] == [100, 60, 60, 10]
    assert len(sleeps) == 3
    assert all(0 < s <= 1.0 for s in sleeps)


def test_batch_get_gives_up_with_a_clear_error_when_nothing_progresses() -> None:
    client = FakeBatchClient([5] * 100)
    with pytest.raises(UnknownOperationResult, match=r"5 keys of objs still unprocessed after 10 retries"):
        batch_get(client, "objs", [_key(f"k{i}") for i in range(5)], address=ADDRESS, sleep=lambda _: None)
    assert len(client.requests) == MAX_IDLE_ROUNDS + 1


def test_batch_write_groups_by_25_and_retries_unprocessed_items() -> None:
    client = FakeBatchClient([0, 7, 3, 0])
    writes = [{"DeleteRequest": {"Key": _key(f"k{i}")}} for i in range(50)]
    batch_write(client, "objs", writes, address=ADDRESS, sleep=lambda _: None)
    assert [len(r["objs"]) for r in client.requests] == [25, 25, 7, 3]


def test_batch_write_gives_up_with_a_clear_error() -> None:
    client = FakeBatchClient([25] * 100)
    writes = [{"DeleteRequest": {"Key": _key(f"k{i}")}} for i in range(25)]
    with pytest.raises(
        UnknownOperationResult, match=r"25 writes to objs still unprocessed.*may have been applied"
    ):
        batch_write(client, "objs", writes, address=ADDRESS, sleep=lambda _: None)


def test_backoff_is_bounded_and_jittered() -> None:
    assert all(0.0125 <= backoff_delay(0) <= 0.025 for _ in range(50))
    assert all(0.5 <= backoff_delay(30) <= 1.0 for _ in range(50))


# --- keys ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("repo", ["", "a", "a:", "a:b", "ab", "ä", "a/b", "12:x", "1"])
def test_repository_part_of_a_key_is_unambiguous(repo: str) -> None:
    key = repo_prefix(repo) + "b:name"
    assert repo_of_key(key) == repo
    others = ["", "a", "a:", "a:b", "ab", "ä", "a/b", "12:x", "1"]
    assert [key.startswith(repo_prefix(o)) for o in others].count(True) == 1


def test_the_schema_item_belongs_to_no_repository() -> None:
    assert repo_of_key(SCHEMA_ITEM_KEY) is None
    assert repo_of_key("3:ab") is None


# --- URLs and settings ---------------------------------------------------------------------------


def test_endpoint_url_with_defaults() -> None:
    settings = parse_url("dynamodb://127.0.0.1:8000")
    assert settings.endpoint == "http://127.0.0.1:8000"
    assert settings.region == "us-west-2"
    assert (settings.refs_table, settings.objs_table) == ("lochkit_refs", "lochkit_objs")
    assert settings.static_credentials is not None


def test_url_options_and_explicit_credentials_stay_out_of_the_address() -> None:
    settings = parse_url(
        "dynamodb://AKIAEXAMPLE:s3cr%2Ft@db.local:443?region=eu-west-1&table_prefix=t_&tls=true"
    )
    assert settings.endpoint == "https://db.local:443"
    assert settings.static_credentials == ("AKIAEXAMPLE", "s3cr/t")
    assert settings.address == "dynamodb://db.local:443?region=eu-west-1&table_prefix=t_"
    assert "s3cr" not in settings.address


def test_transactions_are_on_unless_the_url_turns_them_off() -> None:
    assert parse_url("dynamodb://127.0.0.1:8000").transactions
    assert parse_url("dynamodb://127.0.0.1:8000?transactions=true").transactions
    assert not parse_url("dynamodb://127.0.0.1:8000?transactions=false").transactions
    assert not parse_url("dynamodb://127.0.0.1:8000", {"transactions": "false"}).transactions


def test_settings_repr_hides_the_credentials() -> None:
    assert "pwAA" not in repr(parse_url("dynamodb://key:pwAA@x:1"))


def test_missing_region_and_profile_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(BackendConfigError, match="no AWS region"):
        parse_url("dynamodb://aws").client(sdk_retries=True)
    with pytest.raises(BackendConfigError, match="profile 'nope' does not exist"):
        parse_url("dynamodb://aws?region=eu-west-1&profile=nope").client(sdk_retries=True)


def test_aws_url_uses_the_default_credential_chain() -> None:
    settings = parse_url("dynamodb://aws?region=eu-central-1", {"profile": "ops"})
    assert settings.endpoint is None
    assert settings.static_credentials is None
    assert (settings.region, settings.profile) == ("eu-central-1", "ops")


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (None, "no address"),
        ("postgres://x:1", "not of the form"),
        ("dynamodb://x:notaport", "cannot be parsed"),
        ("dynamodb://x:1?colour=red", "unknown option"),
        ("dynamodb://x:1?table_prefix=bad!", "invalid table_prefix"),
        ("dynamodb://x:1?tls=maybe", "not a boolean"),
        ("dynamodb://x:1?transactions=sometimes", "transactions=sometimes is not a boolean"),
        ("dynamodb://x:1?connect_timeout=-1", "not a positive number"),
        ("dynamodb://key:@x:1", "without a secret"),
    ],
)
def test_bad_urls_raise_config_errors(url: str | None, problem: str) -> None:
    with pytest.raises(BackendConfigError, match=problem):
        parse_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "dynamodb://key:pwAApwBB@x:1?colour=red",
        "dynamodb://key:pwAA/pwBB@x:1",
        "dynamodb://key:pwAA?pwBB@x:1",
        "dynamodb://key:pwAA#pwBB@x:1",
    ],
)
def test_config_error_messages_hide_the_secret(url: str) -> None:
    with pytest.raises(BackendConfigError) as e:
        parse_url(url)
    assert "pwAA" not in str(e.value)
    assert "pwBB" not in str(e.value)
    assert e.value.__cause__ is None
    assert e.value.__context__ is None


def test_factory_declares_a_limit_below_the_item_limit_without_importing_boto3() -> None:
    assert CAPABILITIES.hard_object_size_limit == DYNAMODB_ITEM_LIMIT - 4096
    assert DynamoBackendFactory().capabilities.multi_process is True
    code = (
        "import sys, backends.dynamodb as d; d.DynamoBackendFactory().capabilities; "
        "print('boto3' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# --- error mapping -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("AccessDeniedException", BackendPermissionDenied),
        ("UnrecognizedClientException", BackendAuthenticationFailed),
        ("InvalidSignatureException", BackendAuthenticationFailed),
        ("ExpiredTokenException", BackendAuthenticationFailed),
        ("ResourceNotFoundException", BackendSchemaMismatch),
        ("ProvisionedThroughputExceededException", UnknownOperationResult),
        ("ThrottlingException", UnknownOperationResult),
        ("InternalServerError", UnknownOperationResult),
    ],
)
def test_service_errors_map_to_lochkit_errors(code: str, expected: type[Exception]) -> None:
    mapped = translate(
        _client_error(code, "User: arn:aws:iam::1:user/x is not authorized"), ADDRESS, "write", write=True
    )
    assert isinstance(mapped, expected)
    assert ADDRESS in str(mapped)


def test_unmapped_errors_propagate_unchanged() -> None:
    error = _client_error("ValidationException", "One or more parameter values were invalid")
    assert translate(error, ADDRESS, "write", write=True) is error


def test_connection_and_timeout_errors() -> None:
    down = translate(EndpointConnectionError(endpoint_url="http://x:1"), ADDRESS, "read", write=False)
    assert isinstance(down, BackendUnavailable)
    assert "start the server" in str(down)
    lost = translate(ReadTimeoutError(endpoint_url="http://x:1"), ADDRESS, "update a reference", write=True)
    assert isinstance(lost, UnknownOperationResult)
    assert "unknown whether the write was applied" in str(lost)


def test_item_size_errors_are_recognised() -> None:
    assert is_item_too_large(
        _client_error("ValidationException", "Item size has exceeded the maximum allowed size")
    )
    assert not is_item_too_large(_client_error("ValidationException", "Invalid key"))


# --- the conditional-write loop (through botocore's Stubber) -------------------------------------


@pytest.fixture
def stubbed() -> Iterator[tuple[DynamoDBAdapter, Stubber]]:
    adapter = DynamoDBAdapter(parse_url("dynamodb://127.0.0.1:1"))
    stubber = Stubber(adapter._cas)
    with stubber:
        yield adapter, stubber
    stubber.assert_no_pending_responses()
    adapter.close()


def _row() -> ObjRow:
    return ObjRow(b"\x01\x02", "v", None, b"data", 42)


def test_throttled_conditional_write_is_repeated(
    stubbed: tuple[DynamoDBAdapter, Stubber], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("backends.dynamodb.adapter.time.sleep", lambda _: None)
    adapter, stubber = stubbed
    stubber.add_client_error("put_item", "ProvisionedThroughputExceededException")
    stubber.add_client_error("put_item", "ThrottlingException")
    stubber.add_response("put_item", {})
    assert adapter.insert_objs("r", [_row()]) == [True]


def test_existing_object_gets_its_referenced_time_refreshed(stubbed: tuple[DynamoDBAdapter, Stubber]) -> None:
    adapter, stubber = stubbed
    stubber.add_client_error("put_item", "ConditionalCheckFailedException")
    stubber.add_response(
        "update_item",
        {},
        {
            "TableName": "lochkit_objs",
            "Key": {"k": {"S": "1:r:0102"}},
            "UpdateExpression": "SET z = :z",
            "ConditionExpression": "attribute_exists(k)",
            "ExpressionAttributeValues": {":z": {"N": "42"}},
        },
    )
    assert adapter.insert_objs("r", [_row()]) == [False]


def test_object_deleted_between_put_and_refresh_is_inserted_again(
    stubbed: tuple[DynamoDBAdapter, Stubber],
) -> None:
    adapter, stubber = stubbed
    stubber.add_client_error("put_item", "ConditionalCheckFailedException")
    stubber.add_client_error("update_item", "ConditionalCheckFailedException")
    stubber.add_response("put_item", {})
    assert adapter.insert_objs("r", [_row()]) == [True]


def test_server_error_on_a_conditional_write_is_an_unknown_outcome(
    stubbed: tuple[DynamoDBAdapter, Stubber],
) -> None:
    adapter, stubber = stubbed
    stubber.add_client_error("put_item", "InternalServerError", http_status_code=500)
    with pytest.raises(UnknownOperationResult, match="unknown whether the write was applied"):
        adapter.insert_objs("r", [_row()])


def test_access_denied_on_a_write(stubbed: tuple[DynamoDBAdapter, Stubber]) -> None:
    adapter, stubber = stubbed
    stubber.add_client_error(
        "delete_item", "AccessDeniedException", "not authorized to perform: dynamodb:DeleteItem"
    )
    with pytest.raises(BackendPermissionDenied, match=r"dynamodb:DeleteItem.*grant the IAM permissions"):
        adapter.delete_obj_if_referenced("r", b"\x01", 1)


def test_item_size_rejection_becomes_obj_too_large(stubbed: tuple[DynamoDBAdapter, Stubber]) -> None:
    adapter, stubber = stubbed
    stubber.add_client_error(
        "put_item", "ValidationException", "Item size has exceeded the maximum allowed size"
    )
    with pytest.raises(ObjTooLarge) as e:
        adapter.insert_objs("r", [_row()])
    assert e.value.limit == DYNAMODB_ITEM_LIMIT


# --- the store-and-swap transaction (through botocore's Stubber) ---------------------------------


def _cancelled(stubber: Stubber, *reasons: str) -> None:
    stubber.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        "Transaction cancelled",
        modeled_fields={"CancellationReasons": [{"Code": r} for r in reasons]},
    )


def _store_and_swap(adapter: DynamoDBAdapter) -> InsertAndSwap:
    current = RefRow("refs/heads/main", b"\x09", False, 7, None, b"")
    return adapter.insert_objs_and_update_ref("r", [_row()], current, current._replace(pointer=_row().obj_id))


def test_a_conflicting_transaction_is_sent_again(
    stubbed: tuple[DynamoDBAdapter, Stubber], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("backends.dynamodb.adapter.time.sleep", lambda _: None)
    adapter, stubber = stubbed
    _cancelled(stubber, "TransactionConflict", "None")
    _cancelled(stubber, "None", "ThrottlingError")
    stubber.add_response("transact_write_items", {})
    assert _store_and_swap(adapter) == InsertAndSwap([True], True)


def test_conflicts_that_outlast_the_retries_leave_it_to_the_two_steps(
    stubbed: tuple[DynamoDBAdapter, Stubber], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("backends.dynamodb.adapter.time.sleep", lambda _: None)
    adapter, stubber = stubbed
    for _ in range(_CAS_ATTEMPTS):
        _cancelled(stubber, "None", "TransactionConflict")
    stubber.add_response("put_item", {})  # the object
    stubber.add_response("put_item", {})  # the reference
    assert _store_and_swap(adapter) == InsertAndSwap([True], True)


def test_with_transactions_off_a_commit_is_the_two_steps() -> None:
    """DynamoDB Local's restart test needs this: it loses transactions it acknowledged."""
    adapter = DynamoDBAdapter(parse_url("dynamodb://127.0.0.1:1?transactions=false"))
    with Stubber(adapter._cas) as stubber:
        stubber.add_response("put_item", {})  # the object
        stubber.add_response("put_item", {})  # the reference; no transact_write_items
        assert _store_and_swap(adapter) == InsertAndSwap([True], True)
        stubber.assert_no_pending_responses()
    adapter.close()


def test_a_cancellation_without_reasons_is_not_taken_for_success(
    stubbed: tuple[DynamoDBAdapter, Stubber],
) -> None:
    adapter, stubber = stubbed
    stubber.add_client_error("transact_write_items", "TransactionCanceledException", "Transaction cancelled")
    stubber.add_response("put_item", {})
    stubber.add_client_error("put_item", "ConditionalCheckFailedException")
    assert _store_and_swap(adapter) == InsertAndSwap([True], False)


def test_an_item_over_the_size_limit_in_the_transaction_becomes_obj_too_large(
    stubbed: tuple[DynamoDBAdapter, Stubber],
) -> None:
    adapter, stubber = stubbed
    stubber.add_client_error(
        "transact_write_items", "ValidationException", "Item size has exceeded the maximum allowed size"
    )
    with pytest.raises(ObjTooLarge) as e:
        _store_and_swap(adapter)
    assert e.value.limit == DYNAMODB_ITEM_LIMIT


def test_a_lost_transaction_answer_is_an_unknown_outcome(stubbed: tuple[DynamoDBAdapter, Stubber]) -> None:
    adapter, stubber = stubbed
    stubber.add_client_error("transact_write_items", "InternalServerError", http_status_code=500)
    lost = r"store objects and update a reference.*unknown whether"
    with pytest.raises(UnknownOperationResult, match=lost):
        _store_and_swap(adapter)
