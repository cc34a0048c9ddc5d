"""What the in-memory backend offers, and why it lacks the rest."""

from __future__ import annotations

from typing import Final

from persist_spi.adapter import Capabilities

CAPABILITIES: Final = Capabilities(
    hard_object_size_limit=None,
    multi_process=False,
    durable=False,
    lists_repositories=True,
    capability_reasons={
        "hard_object_size_limit": "objects live in a Python dict, which imposes no size limit",
        "multi_process": "the data lives in one process's memory; no other process can reach it",
        "durable": "the data lives in memory and is gone when the adapter is closed",
    },
)
