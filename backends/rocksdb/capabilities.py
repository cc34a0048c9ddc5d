"""What the RocksDB backend offers, and why it lacks the rest."""

from __future__ import annotations

from typing import Final

from persist_spi.adapter import Capabilities

CAPABILITIES: Final = Capabilities(
    hard_object_size_limit=None,
    multi_process=False,
    durable=True,
    lists_repositories=True,
    capability_reasons={
        # RocksDB values may be up to 3 GiB, far beyond anything the core writes.
        "hard_object_size_limit": "RocksDB imposes no value size limit the core could reach",
        "multi_process": "RocksDB holds an exclusive LOCK file per database directory, so only "
        "one process can open it",
    },
)
