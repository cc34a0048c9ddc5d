"""Random content of each type, as Nessie's generator makes it (Java int and long ranges)."""

from __future__ import annotations

import random

from persist_spi.errors import InputError
from persist_spi.versionstore.content import (
    UDF,
    Content,
    DeltaLakeTable,
    IcebergTable,
    IcebergView,
    content_type_named,
)

GENERATED_TYPES = ("ICEBERG_TABLE", "ICEBERG_VIEW", "DELTA_LAKE_TABLE", "UDF")


def _long(rng: random.Random) -> int:
    return rng.getrandbits(64) - (1 << 63)


def _int(rng: random.Random) -> int:
    return rng.getrandbits(32) - (1 << 31)


def check_type(name: str) -> str:
    """The canonical type name; ValueError naming the types the generator can make."""
    try:
        canonical = content_type_named(name).TYPE_NAME
    except InputError:
        canonical = ""
    if canonical not in GENERATED_TYPES:
        raise InputError(f"Content type '{name}' is not supported; use one of {', '.join(GENERATED_TYPES)}")
    return canonical


def new_content(type_name: str, rng: random.Random, content_id: str | None) -> Content:
    if type_name == "ICEBERG_TABLE":
        return IcebergTable(
            id=content_id,
            snapshot_id=_long(rng),
            schema_id=_int(rng),
            spec_id=_int(rng),
            sort_order_id=_int(rng),
            metadata_location=f"metadata {_long(rng)}",
        )
    if type_name == "DELTA_LAKE_TABLE":
        checkpoint = f"Last checkpoint foo bar {_long(rng)}"
        history = [f"metadata location history {_long(rng)}"]
        for _ in range(rng.randrange(4)):
            checkpoint = f"Another checkpoint {_long(rng)}"
            history.append(f"Another metadata location {_long(rng)}")
        return DeltaLakeTable(
            id=content_id, metadata_location_history=tuple(history), last_checkpoint=checkpoint
        )
    if type_name == "ICEBERG_VIEW":
        return IcebergView(
            id=content_id,
            metadata_location=f"metadata {_long(rng)}",
            version_id=_int(rng),
            schema_id=_int(rng),
            dialect=f"Spark-{_int(rng)}",
            sql_text="SELECT blah FROM meh;",
        )
    return UDF(id=content_id, metadata_location=f"metadata {_long(rng)}")
