"""What the PostgreSQL / CockroachDB backend offers (the same for both dialects)."""

from __future__ import annotations

from typing import Final

from persist_spi.adapter import Capabilities

CAPABILITIES: Final = Capabilities(
    hard_object_size_limit=None,
    multi_process=True,
    durable=True,
    lists_repositories=True,
    capability_reasons={
        # A bytea value may hold up to 1 GiB, far beyond anything the core writes.
        "hard_object_size_limit": "PostgreSQL imposes no value size limit the core could reach",
    },
)
