"""What the Cassandra / ScyllaDB backend offers (the same on both)."""

from __future__ import annotations

from typing import Final

from persist_spi.adapter import Capabilities

#: Cassandra refuses a mutation above half of ``commitlog_segment_size`` (32 MiB by default, so
#: 16 MiB); 8 MiB leaves room for the other columns, the Paxos state row and smaller segments.
CAPABILITIES: Final = Capabilities(
    hard_object_size_limit=8 * 1024 * 1024, multi_process=True, durable=True, lists_repositories=True
)
