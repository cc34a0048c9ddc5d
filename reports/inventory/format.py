"""The inventory's tables and their Arrow schemas: the contract between ``lochkit inventory`` and the
report job. Change a schema only together with :data:`INVENTORY_SCHEMA_VERSION` and docs/reports.md."""

from __future__ import annotations

from typing import Final

import pyarrow as pa

INVENTORY_SCHEMA_VERSION: Final = 1
#: Marker file of an inventory directory; the report job recognises inventories by it.
INVENTORY_JSON: Final = "inventory.json"

# The fields are given as tuples: pyarrow's type stubs read a list of fields of different Arrow
# types as a list of plain objects.
OBJECTS: Final = pa.schema(
    (
        pa.field("obj_id", pa.string(), nullable=False),
        pa.field("obj_type", pa.string(), nullable=False),
        #: Bytes of the object as the store's layout encodes it (what a backend stores, without id).
        pa.field("encoded_size", pa.int64(), nullable=False),
        #: µs since the epoch of the object's last write (0 when the backend does not know).
        pa.field("referenced_us", pa.int64(), nullable=False),
    )
)

REFERENCES: Final = pa.schema(
    (
        pa.field("name", pa.string(), nullable=False),
        #: "branch", "tag", "internal" or "other".
        pa.field("kind", pa.string(), nullable=False),
        pa.field("pointer", pa.string(), nullable=False),
        pa.field("deleted", pa.bool_(), nullable=False),
        pa.field("created_at_us", pa.int64(), nullable=False),
        pa.field("previous_pointers", pa.int32(), nullable=False),
    )
)

COMMITS: Final = pa.schema(
    (
        pa.field("commit_id", pa.string(), nullable=False),
        #: The direct parent (the empty commit's id for the first commit of a reference).
        pa.field("parent", pa.string(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("created_us", pa.int64(), nullable=False),
        #: "normal" or "internal" (commits of int/refs and int/repo).
        pa.field("commit_type", pa.string(), nullable=False),
        pa.field("secondary_parents", pa.int32(), nullable=False),
        pa.field("ops_added", pa.int32(), nullable=False),
        pa.field("ops_removed", pa.int32(), nullable=False),
        pa.field("incremental_index_bytes", pa.int64(), nullable=False),
        #: Reference-index stripes embedded in the commit.
        pa.field("reference_index_stripes", pa.int32(), nullable=False),
        #: The IndexSegmentsObj (or legacy IndexObj) holding the reference index, when not embedded.
        pa.field("reference_index", pa.string(), nullable=True),
        #: One value per distinct reference index: equal between parent and child unless it spilled.
        pa.field("reference_index_key", pa.string(), nullable=True),
        pa.field("encoded_size", pa.int64(), nullable=False),
    )
)

#: Which object another one points to; lets the report attribute each object to the commit that
#: first needed it (values and index segments of a commit, segments of an IndexSegmentsObj, the
#: content-id claim of a value).
LINKS: Final = pa.schema(
    (
        pa.field("from_id", pa.string(), nullable=False),
        pa.field("to_id", pa.string(), nullable=False),
        #: "value", "stripe", "reference-index" (commit -> segments object), "segment" (segments
        #: object -> index segment), "content-id" (content value -> the unique-id object claiming
        #: its content id; added in lochkit's later format-1 inventories, older ones lack it).
        pa.field("role", pa.string(), nullable=False),
    )
)

#: File name (without ``.parquet``) -> schema.
TABLES: Final = {"objects": OBJECTS, "references": REFERENCES, "commits": COMMITS, "links": LINKS}
