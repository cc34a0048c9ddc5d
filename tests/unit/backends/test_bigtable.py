"""Unit tests of the Bigtable adapter's own logic: URL parsing, row keys and cells, the merging of
ReadRows streams (values split over chunks, rows reset mid-stream), request batching and the error
mapping. Whether the backend works is shown by the conformance run against the emulator."""

from __future__ import annotations

from typing import Any, cast

import pytest

pytest.importorskip("google.cloud.bigtable_v2")

from google.api_core import exceptions
from google.cloud.bigtable_v2.types import ReadRowsResponse

from backends.bigtable import BigtableBackendFactory
from backends.bigtable.adapter import _BYTES_PER_MUTATE, _batches
from backends.bigtable.capabilities import CAPABILITIES
from backends.bigtable.config import parse_url
from backends.bigtable.errors import translate
from backends.bigtable.messages import delete_row, merge_rows, replace_row
from backends.bigtable.statements import (
    SCHEMA_ROW_KEY,
    identity,
    obj_cells,
    obj_row,
    prefix_end,
    ref_cells,
    ref_row,
    repo_of_key,
    repo_prefix,
    type_and_token,
)
from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    CorruptData,
    UnknownOperationResult,
)

REF = RefRow("main", b"\x01" * 32, False, 1_700_000_000_000_000, None, b"history")


# --- URL ---------------------------------------------------------------------------------------


def test_emulator_url_with_defaults() -> None:
    settings = parse_url("bigtable://127.0.0.1:8086")
    assert settings.emulator == "127.0.0.1:8086"
    assert (settings.project, settings.instance) == ("lochkit", "lochkit")
    assert (settings.refs_table, settings.objs_table) == ("lochkit_refs", "lochkit_objs")
    assert settings.table_path("t") == "projects/lochkit/instances/lochkit/tables/t"


def test_cloud_url_needs_project_and_instance() -> None:
    settings = parse_url("bigtable://google?project=my-project&instance=prod&table_prefix=nessie_")
    assert settings.emulator is None
    assert settings.table_path(settings.refs_table) == "projects/my-project/instances/prod/tables/nessie_refs"
    with pytest.raises(BackendConfigError, match="project and an instance"):
        parse_url("bigtable://google?project=my-project")


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (None, "no address"),
        ("bigtable://127.0.0.1", "needs a port"),
        ("postgres://127.0.0.1:1", "not of the form"),
        ("bigtable://127.0.0.1:1?colour=red", "unknown option"),
        ("bigtable://127.0.0.1:1?table_prefix=bad/prefix", "invalid table_prefix"),
        ("bigtable://127.0.0.1:1?project=Bad_Project", "invalid project"),
        ("bigtable://127.0.0.1:1?timeout=0", "not a positive number"),
        ("bigtable://127.0.0.1:1?layout=nessie2", "layout"),
    ],
)
def test_bad_urls_are_refused_with_the_problem_named(url: str | None, problem: str) -> None:
    with pytest.raises(BackendConfigError, match=problem):
        parse_url(url)


def test_credentials_in_the_url_are_refused_without_being_shown() -> None:
    secret = "s3cr/et?#x"
    with pytest.raises(BackendConfigError, match="carries credentials") as refused:
        parse_url(f"bigtable://user:{secret}@127.0.0.1:8086")
    assert "s3cr" not in str(refused.value)
    assert "user" not in str(refused.value)


def test_address_holds_what_locates_the_tables() -> None:
    address = parse_url("bigtable://localhost:9000?instance=i1&table_prefix=t_").address
    assert address == "bigtable://localhost:9000?project=lochkit&instance=i1&table_prefix=t_"


# --- keys and cells ----------------------------------------------------------------------------


def test_repository_prefixes_keep_ids_apart() -> None:
    assert repo_prefix("a") == b"1:a:"
    assert not (repo_prefix("a:b") + b"x").startswith(repo_prefix("a"))
    assert repo_of_key(repo_prefix("a:b") + b"\xff\x00") == "a:b"
    assert repo_of_key(repo_prefix("") + b"main") == ""
    assert repo_of_key(repo_prefix("é") + b"x") == "é"  # the length counts bytes
    assert repo_of_key(SCHEMA_ROW_KEY) is None
    assert repo_of_key(b"3:ab") is None


def test_prefix_end_bounds_exactly_the_repository_range() -> None:
    start = repo_prefix("r")
    end = prefix_end(start)
    assert start + b"\xff" * 40 < end
    assert not (repo_prefix("r") < repo_prefix("rr") < end)  # another id sorts outside


@pytest.mark.parametrize("extended", [None, b"", b"\x07" * 32])
def test_reference_cells_round_trip(extended: bytes | None) -> None:
    row = REF._replace(extended_info=extended, deleted=True)
    assert ref_row("main", ref_cells(row)) == row


def test_reference_identity_is_what_compare_and_swap_compares() -> None:
    other_history = REF._replace(previous_pointers=b"other")
    assert identity(other_history) == identity(REF)
    for changed in (
        REF._replace(pointer=b"\x02" * 32),
        REF._replace(deleted=True),
        REF._replace(created_at_micros=1),
        REF._replace(extended_info=b""),
    ):
        assert identity(changed) != identity(REF), changed


def test_a_damaged_reference_is_reported_as_corrupt() -> None:
    with pytest.raises(CorruptData, match="main"):
        ref_row("main", {b"k": b"\x00\x01"})
    with pytest.raises(CorruptData, match="no cell 'k'"):
        ref_row("main", {})


@pytest.mark.parametrize("token", [None, "v1"])
def test_object_cells_round_trip(token: str | None) -> None:
    row = ObjRow(b"\x09" * 32, "c", token, b"\x00data\xff", -5)
    cells = obj_cells(row)
    assert obj_row(row.obj_id, cells) == row
    assert (b"y" in cells) == (token is not None)


def test_type_and_token_cannot_be_confused_across_the_boundary() -> None:
    assert type_and_token("ab", "c") != type_and_token("a", "bc")


# --- read streams ------------------------------------------------------------------------------


def _chunk(**fields: object) -> ReadRowsResponse.CellChunk:
    return ReadRowsResponse.CellChunk(**fields)


def test_merge_joins_split_values_and_drops_reset_rows() -> None:
    responses = [
        ReadRowsResponse(
            chunks=[
                _chunk(row_key=b"r1", family_name="o", qualifier=b"d", value=b"he", value_size=5),
                _chunk(value=b"llo"),
                _chunk(qualifier=b"t", value=b"c", commit_row=True),
                _chunk(row_key=b"r2", family_name="o", qualifier=b"x", value=b"lost"),
            ]
        ),
        ReadRowsResponse(
            chunks=[
                _chunk(reset_row=True),
                _chunk(row_key=b"r2", family_name="o", qualifier=b"d", value=b"kept"),
                _chunk(qualifier=b"h", value=b"", commit_row=True),
            ]
        ),
    ]
    assert list(merge_rows(responses)) == [
        (b"r1", {b"d": b"hello", b"t": b"c"}),
        (b"r2", {b"d": b"kept", b"h": b""}),
    ]


# --- requests ----------------------------------------------------------------------------------


def test_replacing_a_row_deletes_it_first() -> None:
    mutations = replace_row("o", {b"d": b"x"})
    assert mutations[0] == delete_row()
    assert [m.set_cell.column_qualifier for m in mutations[1:]] == [b"d"]


def test_batches_respect_the_byte_budget_and_keep_order() -> None:
    big = replace_row("o", {b"d": bytes(_BYTES_PER_MUTATE // 2)})
    entries = [(b"%d" % i, big) for i in range(5)]
    batches = list(_batches(entries))
    assert [len(b) for b in batches] == [1, 1, 1, 1, 1]  # two halves plus keys exceed the budget
    assert [key for b in batches for key, _ in b] == [key for key, _ in entries]
    small = [(b"%d" % i, [delete_row()]) for i in range(1000)]
    assert [len(b) for b in _batches(small)] == [1000]


# --- errors ------------------------------------------------------------------------------------


def _google(kind: type[Exception], *args: object) -> Exception:
    """One of Google's API errors (their constructors carry no annotations)."""
    error: Exception = cast(Any, kind)(*args)
    return error


ADDRESS = "bigtable://127.0.0.1:1?project=p&instance=i&table_prefix=t_"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (_google(exceptions.ServiceUnavailable, "failed to connect to all addresses"), BackendUnavailable),
        (_google(exceptions.Unauthenticated, "bad token"), BackendAuthenticationFailed),
        (_google(exceptions.PermissionDenied, "no"), BackendPermissionDenied),
        (_google(exceptions.NotFound, "table t_refs not found"), BackendSchemaMismatch),
        (_google(exceptions.DeadlineExceeded, "slow"), UnknownOperationResult),
        (_google(exceptions.ServiceUnavailable, "connection reset"), UnknownOperationResult),
        # A client's own retries that gave up are judged by their last error.
        (
            _google(
                exceptions.RetryError,
                "Timeout of 60.0s exceeded",
                _google(exceptions.ServiceUnavailable, "failed to connect"),
            ),
            BackendUnavailable,
        ),
    ],
)
def test_google_errors_map_to_lochkit_errors(error: Exception, expected: type[Exception]) -> None:
    mapped = translate(error, ADDRESS, "read references", write=True)
    assert isinstance(mapped, expected)
    assert ADDRESS in str(mapped)


def test_a_lost_answer_to_a_read_is_no_unknown_write() -> None:
    mapped = translate(_google(exceptions.DeadlineExceeded, "slow"), ADDRESS, "read objects", write=False)
    assert "the read failed" in str(mapped)


def test_other_errors_pass_through() -> None:
    error = _google(exceptions.InvalidArgument, "bad filter")
    assert translate(error, ADDRESS, "scan", write=False) is error


def test_factory_declares_what_the_adapter_declares() -> None:
    factory = BigtableBackendFactory()
    assert factory.capabilities is CAPABILITIES
    assert CAPABILITIES.hard_object_size_limit == 10 * 1024 * 1024
    assert CAPABILITIES.multi_process
    assert CAPABILITIES.lists_repositories
