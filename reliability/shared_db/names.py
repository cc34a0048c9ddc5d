"""The scenario's names and defaults, importable without its dependencies (the command line's
``--help`` reads them)."""

from __future__ import annotations

from typing import Final

DIRECTIONS: Final = ("nessie -> lochkit", "lochkit -> nessie", "reverse order", "concurrent")
#: Backends the runner provisions. MongoDB gets Nessie's settings already
#: (provisioning.servers.nessie_stores) and joins here with its adapter's ``layout=nessie``.
BACKENDS: Final = ("postgres", "mariadb", "rocksdb", "cassandra", "dynamodb", "bigtable")
#: Commits each side makes in the concurrent direction.
CONCURRENT_COMMITS: Final = 20
