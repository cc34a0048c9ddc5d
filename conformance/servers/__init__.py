"""How to obtain each database server: testcontainers recipes and local-process launchers.

Each module here defines one provisioner; add it to ``_MODULES`` to make it built in.
"""

from __future__ import annotations

import importlib

from conformance.provisioning import ServerProvisioner

_MODULES = (
    "conformance.servers.postgres",
    "conformance.servers.mongodb",
    "conformance.servers.cassandra",
    "conformance.servers.dynamodb",
    "conformance.servers.nessie",
    "conformance.servers.toxiproxy",
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
