"""Opening a target another process provisioned, from its :class:`TargetConnection`: what worker
processes of a load command do. Nothing is provisioned here and nothing is stopped on close but the
connection itself."""

from __future__ import annotations

from loadgen.targets.target import Target, TargetConnection
from persist_spi.config import StoreConfig


def connect(connection: TargetConnection, config: StoreConfig | None = None) -> Target:
    """A target over the same database or Nessie server; ``config`` applies to in-process stores."""
    if connection.kind == "nessie":
        from loadgen.targets.nessie_rest import nessie_target

        return nessie_target(connection.url or "", provisioning="external", options=connection.options)
    from loadgen.targets.in_process import in_process_target
    from persist_spi.registry import backend_factory

    adapter = backend_factory(connection.backend).create(connection.url, connection.options)
    config = (config or StoreConfig()).with_changes(repository_id=connection.repository)
    # The process that made the connection created (or checked) the repository already.
    return in_process_target(
        adapter,
        backend=connection.backend,
        provisioning="external",
        url=None,
        config=config,
        repository_must_exist=True,
    )
