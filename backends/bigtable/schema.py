"""Creating and checking the two Bigtable tables and the schema-version row.

Each table has one column family (``r`` for references, ``o`` for objects) keeping one version
per cell. Creation is idempotent and tolerates concurrent creators (another process may win the
race). The schema version is a row of the refs table whose key no repository's rows can have.

In Nessie's layout the tables are the ones a Nessie server's Bigtable store creates (same names
and families); Nessie keeps no schema version, so none is written. Instead, tables holding
lochkit's schema-version row are refused there, and in lochkit's layout tables that hold rows but
no version row (a Nessie store's, whose prefix rule can give the same names) are refused.
"""

from __future__ import annotations

import contextlib
from typing import Any, Final, cast

from backends.bigtable import messages
from backends.bigtable.config import BigtableSettings
from backends.bigtable.statements import OBJS_FAMILY, REFS_FAMILY, SCHEMA_QUALIFIER, SCHEMA_ROW_KEY
from persist_spi.errors import BackendSchemaMismatch, BackendStoreMissing
from persist_spi.layouts import NESSIE_LAYOUT

#: Bump when the row layout changes incompatibly.
SCHEMA_VERSION: Final = 1


def tables(settings: BigtableSettings) -> dict[str, str]:
    """Table id -> its column family."""
    return {settings.refs_table: REFS_FAMILY, settings.objs_table: OBJS_FAMILY}


def setup_schema(data: Any, admin: Any, settings: BigtableSettings) -> str:
    """Create or check both tables, then record or check the schema version; returns a summary."""
    from google.api_core.exceptions import AlreadyExists
    from google.cloud.bigtable_admin_v2.types import ColumnFamily, Table

    for table, family in tables(settings).items():
        # Ours from an earlier run, or another process won the race to create it.
        with contextlib.suppress(AlreadyExists):
            admin.create_table(
                parent=settings.instance_path,
                table_id=table,
                table=Table(column_families={family: ColumnFamily(gc_rule=_one_version())}),
                retry=None,
                timeout=settings.timeout,
            )
        _check_family(admin, settings, table, family)
    if settings.layout is NESSIE_LAYOUT:
        _refuse_lochkit_tables(data, settings)
        return (
            f"bigtable at {settings.address}: tables {settings.refs_table} (family {REFS_FAMILY}), "
            f"{settings.objs_table} (family {OBJS_FAMILY}) in Nessie's Bigtable layout"
        )
    # A concurrent lochkit may write its version row and data between the two reads: read again.
    if (
        _stored_version(data, settings) is None
        and _holds_rows(data, settings)
        and _stored_version(data, settings) is None
    ):
        raise BackendSchemaMismatch(
            "bigtable",
            settings.address,
            f"the tables {settings.refs_table}/{settings.objs_table} hold rows but no lochkit schema "
            "version: they were not written by lochkit (a Nessie store with table prefix "
            f"'{settings.table_prefix.removesuffix('_')}' has these names)",
            "pick another table_prefix so that lochkit creates its own tables, or open Nessie's "
            "tables with layout=nessie",
        )
    version = str(SCHEMA_VERSION).encode()
    data.check_and_mutate_row(
        request=messages.check_and_mutate(
            settings.table_path(settings.refs_table),
            SCHEMA_ROW_KEY,
            messages.column(REFS_FAMILY, SCHEMA_QUALIFIER),
            settings.app_profile or "",
            otherwise=messages.set_cells(REFS_FAMILY, {SCHEMA_QUALIFIER: version}),
        ),
        retry=None,
        timeout=settings.timeout,
    )
    _check_version(data, settings, missing_is_error=False)
    return (
        f"bigtable at {settings.address}: tables {settings.refs_table} (family {REFS_FAMILY}), "
        f"{settings.objs_table} (family {OBJS_FAMILY}), schema version {SCHEMA_VERSION}"
    )


def _one_version() -> Any:
    """The garbage-collection rule of both families: keep one version of each cell."""
    from google.cloud.bigtable_admin_v2.types import GcRule

    return cast(Any, GcRule)(max_num_versions=1)  # its constructor is untyped


def verify_schema(data: Any, admin: Any, settings: BigtableSettings) -> str:
    """Check, creating nothing, that lochkit's tables of this version are there."""
    from google.api_core.exceptions import NotFound

    for table, family in tables(settings).items():
        try:
            _check_family(admin, settings, table, family)
        except NotFound:
            raise BackendStoreMissing(
                "bigtable",
                settings.address,
                f"there is no table {table}",
                "check the project, instance and table_prefix, or let lochkit create its tables",
            ) from None
    if settings.layout is NESSIE_LAYOUT:
        _refuse_lochkit_tables(data, settings)
        return f"bigtable at {settings.address}: tables in Nessie's Bigtable layout"
    _check_version(data, settings, missing_is_error=True)
    return f"bigtable at {settings.address}: lochkit tables of schema version {SCHEMA_VERSION}"


def _check_family(admin: Any, settings: BigtableSettings, table: str, family: str) -> None:
    from google.cloud.bigtable_admin_v2.types import GetTableRequest, Table

    found = admin.get_table(
        request=GetTableRequest(name=settings.table_path(table), view=Table.View.SCHEMA_VIEW),
        retry=None,
        timeout=settings.timeout,
    )
    if family not in found.column_families:
        raise BackendSchemaMismatch(
            "bigtable",
            settings.address,
            f"table {table} has no column family '{family}' (it has: "
            f"{', '.join(sorted(found.column_families)) or 'none'}); it is not a lochkit table",
            "use another table_prefix",
        )


def _check_version(data: Any, settings: BigtableSettings, *, missing_is_error: bool) -> None:
    found = _stored_version(data, settings)
    if found == str(SCHEMA_VERSION).encode():
        return
    if found is None and not missing_is_error:
        return
    raise BackendSchemaMismatch(
        "bigtable",
        settings.address,
        f"the tables hold schema version {found.decode(errors='replace') if found else 'none'}, "
        f"this lochkit writes version {SCHEMA_VERSION}",
        "use the lochkit version that created them, or another table_prefix",
    )


def _refuse_lochkit_tables(data: Any, settings: BigtableSettings) -> None:
    found = _stored_version(data, settings)
    if found is not None:
        raise BackendSchemaMismatch(
            "bigtable",
            settings.address,
            f"the tables {settings.refs_table}/{settings.objs_table} were written in lochkit's own "
            f"layout (schema version {found.decode(errors='replace')}), not in Nessie's",
            "open them without layout=nessie, or give Nessie's tables with table_prefix= (Nessie's "
            "nessie.version.store.persist.bigtable.table-prefix)",
        )


def _holds_rows(data: Any, settings: BigtableSettings) -> bool:
    """True when a table has a row other than the schema-version row (reads at most two keys each)."""
    from google.cloud.bigtable_v2.types import RowSet

    for table in (settings.refs_table, settings.objs_table):
        request = messages.read(
            settings.table_path(table), RowSet(), messages.keys_only(), settings.app_profile or ""
        )
        request.rows_limit = 2
        rows = messages.merge_rows(data.read_rows(request=request, retry=None, timeout=settings.timeout))
        if any(key != SCHEMA_ROW_KEY for key, _ in rows):
            return True
    return False


def _stored_version(data: Any, settings: BigtableSettings) -> bytes | None:
    responses = data.read_rows(
        request=messages.read(
            settings.table_path(settings.refs_table),
            messages.row_set([SCHEMA_ROW_KEY]),
            messages.column(REFS_FAMILY, SCHEMA_QUALIFIER),
            settings.app_profile or "",
        ),
        retry=None,
        timeout=settings.timeout,
    )
    rows = dict(messages.merge_rows(responses))
    return rows.get(SCHEMA_ROW_KEY, {}).get(SCHEMA_QUALIFIER)
