"""How to obtain each database server: testcontainers recipes and local-process launchers."""

from __future__ import annotations

from conformance.provisioning import ServerProvisioner

#: Filled in as server backends are added (one provisioner per module in this package).
BUILTIN_PROVISIONERS: list[ServerProvisioner] = []
