"""How to obtain each database server: testcontainers recipes and local-process launchers.

Each module here defines one provisioner; add it to ``_MODULES`` to make it built in.
"""

from __future__ import annotations

import importlib

from provisioning.base import ServerProvisioner

_MODULES = (
    "provisioning.servers.postgres",
    "provisioning.servers.mariadb",
    "provisioning.servers.mongodb",
    "provisioning.servers.cassandra",
    "provisioning.servers.dynamodb",
    "provisioning.servers.bigtable",
    "provisioning.servers.nessie",
    "provisioning.servers.toxiproxy",
)


def _load() -> list[ServerProvisioner]:
    found: list[ServerProvisioner] = []
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:  # not written yet
                continue
            raise
        found.append(module.PROVISIONER)
    return found


BUILTIN_PROVISIONERS: list[ServerProvisioner] = _load()
