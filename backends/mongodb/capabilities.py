"""What the MongoDB backend offers: on MongoDB everything, on FerretDB one process at a time.

The declaration depends on the server, so the adapter asks :func:`for_server` once it has read the
server's build info; :data:`CAPABILITIES` is what the factory declares before any server is known.
"""

from __future__ import annotations

from typing import Final

from persist_spi.adapter import Capabilities

#: MongoDB's document limit (``maxBsonObjectSize``), also FerretDB's default.
MAX_BSON_SIZE: Final = 16 * 1024 * 1024
#: Room for the other fields of an object document: ids, type, token, field names (a 64 KiB
#: repository id or version token would still fit).
DOCUMENT_OVERHEAD: Final = 64 * 1024
_FERRETDB_CAS_REASON: Final = (
    "FerretDB evaluates a conditional update's filter and its write in separate steps, so "
    "compare-and-swap is not atomic across processes (lost updates seen in 3 of 4 runs); lochkit "
    "serialises writes within one process instead. Real MongoDB declares this capability"
)

CAPABILITIES: Final = Capabilities(
    hard_object_size_limit=MAX_BSON_SIZE - DOCUMENT_OVERHEAD,
    multi_process=True,
    durable=True,
    lists_repositories=True,
)


def for_server(*, max_bson_size: int, is_ferretdb: bool) -> Capabilities:
    """The capabilities on a server with this document limit (0: not reported), MongoDB or FerretDB."""
    limit = CAPABILITIES.hard_object_size_limit
    if 0 < max_bson_size < MAX_BSON_SIZE:  # a server configured below the usual 16 MiB
        limit = max_bson_size - DOCUMENT_OVERHEAD
    # Not a deviation (a strict expected failure): FerretDB's lost updates between processes
    # are a race, observed in most runs but not all, so the honest declaration is the capability.
    reasons = {"multi_process": _FERRETDB_CAS_REASON} if is_ferretdb else {}
    return Capabilities(
        hard_object_size_limit=limit,
        multi_process=not is_ferretdb,
        durable=True,
        lists_repositories=True,
        capability_reasons=reasons,
    )
