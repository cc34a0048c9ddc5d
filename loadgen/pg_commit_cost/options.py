"""The command's name, the server configurations and operations it measures, and :class:`Options`:
what one run measures. The configurations and operations are described in the package's docstring."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

NAME: Final = "python -m loadgen.pg_commit_cost"
PROGRAM: Final = ("python", "-m", "loadgen.pg_commit_cost")

#: Server settings of each configuration.
CONFIGS: Final[dict[str, dict[str, str]]] = {
    "bench": {"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off"},
    "bench+sync": {"fsync": "off", "full_page_writes": "off", "synchronous_commit": "on"},
    "durable": {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "on"},
    "durable-async": {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "off"},
}
#: Set in every configuration: gives pg_stat_wal its write and sync times.
COMMON_SETTINGS: Final = {"track_wal_io_timing": "on"}
OPERATIONS: Final = ("commit 1 put", "commit 10 puts", "floor cas", "floor put")
#: Puts per commit of the commit operations; the others are floor calls.
COMMIT_PUTS: Final = {"commit 1 put": 1, "commit 10 puts": 10}

DEFAULT_COMMITS: Final = 2000
DEFAULT_FLOOR_OPS: Final = 2000
DEFAULT_WARMUP: Final = 200
DEFAULT_REPEATS: Final = 3


@dataclass(frozen=True)
class Options:
    """What to measure: calls per cell, warm-up calls, rounds, and the configurations in order."""

    commits: int = DEFAULT_COMMITS
    floor_ops: int = DEFAULT_FLOOR_OPS
    warmup: int = DEFAULT_WARMUP
    repeats: int = DEFAULT_REPEATS
    configs: tuple[str, ...] = tuple(CONFIGS)

    def calls(self, operation: str) -> int:
        return self.commits if operation in COMMIT_PUTS else self.floor_ops

    def describe(self) -> str:
        repeats = "1 repeat" if self.repeats == 1 else f"{self.repeats} repeats"
        return (
            f"{repeats} of {self.commits:,} commits and {self.floor_ops:,} floor calls per cell, "
            f"after {self.warmup:,} warm-up calls"
        )
