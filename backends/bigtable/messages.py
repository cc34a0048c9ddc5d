"""The Bigtable Data API requests the adapter sends (filters, mutations) and the merging of a
ReadRows stream back into rows.

Requests are built from the generated ``google.cloud.bigtable_v2`` types; nothing here talks to a
server, so it is unit-tested without one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from google.cloud.bigtable_v2.types import (
    CheckAndMutateRowRequest,
    MutateRowsRequest,
    Mutation,
    ReadRowsRequest,
    ReadRowsResponse,
    RowFilter,
    RowRange,
    RowSet,
    ValueRange,
)

from backends.bigtable.statements import CELL_TIMESTAMP_MICROS


def family(name: str) -> RowFilter:
    return RowFilter(family_name_regex_filter=name)


def column(family_name: str, qualifier: bytes) -> RowFilter:
    """Cells of one column. Qualifiers here are single letters, so the regex is the name itself."""
    return chain(family(family_name), RowFilter(column_qualifier_regex_filter=qualifier))


def column_equals(family_name: str, qualifier: bytes, value: bytes) -> RowFilter:
    """The column's cell, if its value is exactly ``value``. A value range from the value to the
    value compares bytes; a value regex would need escaping that emulators handle differently."""
    exact = RowFilter(value_range_filter=ValueRange(start_value_closed=value, end_value_closed=value))
    return chain(column(family_name, qualifier), exact)


def both(first: RowFilter, second: RowFilter) -> RowFilter:
    """A predicate that matches when both predicates match the row (a condition filter: a
    chain would apply the second to the cells the first let through, and those are of one column)."""
    return RowFilter(
        condition=RowFilter.Condition(
            predicate_filter=first, true_filter=second, false_filter=RowFilter(block_all_filter=True)
        )
    )


def chain(*filters: RowFilter) -> RowFilter:
    return RowFilter(chain=RowFilter.Chain(filters=list(filters)))


def keys_only() -> RowFilter:
    """One cell per row without its value: enough to learn which rows exist."""
    return chain(RowFilter(cells_per_row_limit_filter=1), RowFilter(strip_value_transformer=True))


def set_cells(
    family_name: str, cells: Mapping[bytes, bytes], timestamp_micros: int = CELL_TIMESTAMP_MICROS
) -> list[Mutation]:
    """Cells written at the layout's one fixed timestamp, so each write replaces the cell's value."""
    return [
        Mutation(
            set_cell=Mutation.SetCell(
                family_name=family_name,
                column_qualifier=qualifier,
                timestamp_micros=timestamp_micros,
                value=value,
            )
        )
        for qualifier, value in cells.items()
    ]


def delete_row() -> Mutation:
    return Mutation(delete_from_row=Mutation.DeleteFromRow())


def replace_row(
    family_name: str, cells: Mapping[bytes, bytes], timestamp_micros: int = CELL_TIMESTAMP_MICROS
) -> list[Mutation]:
    """Delete, then write: cells the new row lacks (a version token) must not survive. The
    mutations of one row apply atomically and in order."""
    return [delete_row(), *set_cells(family_name, cells, timestamp_micros)]


def row_set(keys: Sequence[bytes]) -> RowSet:
    return RowSet(row_keys=list(keys))


def prefix_range(start: bytes, end: bytes) -> RowSet:
    return RowSet(row_ranges=[RowRange(start_key_closed=start, end_key_open=end)])


def read(table_path: str, rows: RowSet, row_filter: RowFilter | None, app_profile: str) -> ReadRowsRequest:
    request = ReadRowsRequest(table_name=table_path, rows=rows, app_profile_id=app_profile)
    if row_filter is not None:
        request.filter = row_filter
    return request


def check_and_mutate(
    table_path: str,
    key: bytes,
    predicate: RowFilter,
    app_profile: str,
    *,
    matched: Sequence[Mutation] = (),
    otherwise: Sequence[Mutation] = (),
) -> CheckAndMutateRowRequest:
    """Apply ``matched`` if ``predicate`` yields a cell of row ``key``, else ``otherwise``; both
    atomically with the check."""
    return CheckAndMutateRowRequest(
        table_name=table_path,
        row_key=key,
        predicate_filter=predicate,
        true_mutations=list(matched),
        false_mutations=list(otherwise),
        app_profile_id=app_profile,
    )


def mutate_rows(
    table_path: str, entries: Sequence[tuple[bytes, Sequence[Mutation]]], app_profile: str
) -> MutateRowsRequest:
    return MutateRowsRequest(
        table_name=table_path,
        entries=[MutateRowsRequest.Entry(row_key=key, mutations=list(m)) for key, m in entries],
        app_profile_id=app_profile,
    )


def merge_rows(responses: Iterable[Any]) -> Iterator[tuple[bytes, dict[bytes, bytes]]]:
    """Rows (key, qualifier -> value) from a ReadRows stream. A stream sends a row as chunks:
    the key, family and qualifier only when they change, a large value split over several chunks
    (``value_size`` set on all but the last), ``reset_row`` to drop a row in progress and
    ``commit_row`` to end it. Each table has one column family, so qualifiers identify cells."""
    key, qualifier = b"", b""
    cells: dict[bytes, bytes] = {}
    parts: list[bytes] = []
    for response in responses:
        for chunk in ReadRowsResponse.pb(response).chunks:
            if chunk.reset_row:
                cells, parts = {}, []
                continue
            if chunk.row_key:
                key = chunk.row_key
            if chunk.HasField("qualifier"):
                qualifier = chunk.qualifier.value
            parts.append(chunk.value)
            if chunk.value_size == 0:  # the cell's last chunk
                cells[qualifier] = parts[0] if len(parts) == 1 else b"".join(parts)
                parts = []
            if chunk.commit_row:
                yield key, cells
                cells = {}
