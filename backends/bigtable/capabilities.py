"""What the Bigtable backend offers, and the limits its object size limit follows from."""

from __future__ import annotations

from typing import Final

from persist_spi.adapter import Capabilities

#: Bigtable's advice for the largest value of one cell (its hard limit is 100 MiB, a row's 256 MiB).
#: An object is one cell; 10 MiB keeps every write and read of one object far from the limits.
CELL_SIZE_ADVICE: Final = 10 * 1024 * 1024
#: Bigtable's limit of mutations in one MutateRows request (all rows together).
MUTATIONS_PER_REQUEST: Final = 100_000

CAPABILITIES: Final = Capabilities(
    hard_object_size_limit=CELL_SIZE_ADVICE,
    multi_process=True,
    # Cloud Bigtable is durable. The emulator keeps data in memory: it survives closing and
    # re-opening an adapter (what this capability promises), not a restart of the emulator, which
    # is why its provisioner declares it cannot be restarted on its data (lochkit torture shows
    # server restarts as not applicable, with that reason; crashes of writers still run).
    durable=True,
    lists_repositories=True,
)
