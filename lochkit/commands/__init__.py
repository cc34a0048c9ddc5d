"""One module per ``lochkit`` subcommand.

Each module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args, passthrough) ->
int``; a module whose command parses its own arguments (``bench``) sets ``OWN_PARSER = True`` and
defines ``run_raw(argv) -> int`` instead. Heavy imports stay inside ``run`` so ``lochkit --help``
and a typo answer at once. Adding a command is one module plus one line in :data:`COMMANDS`.
"""

from __future__ import annotations

from typing import Final

#: Subcommand modules, in the order ``lochkit --help`` lists them.
COMMANDS: Final[tuple[str, ...]] = (
    "backends",
    "conformance",
    "bench",
    "servers",
    "generate",
    "content-generator",
    "serve",
    "serve-load",
    "experiment",
    "scenario",
    "compare-nessie",
    "api-check",
    "inventory",
    "report",
    "spark-cluster",
    "report-bench",
    "check",
    "torture",
    "shared-db",
)
