"""The ``lochkit`` target: lochkit's version store in-process, over a backend adapter."""

from __future__ import annotations

from loadgen.targets.target import Target
from persist_spi.adapter import BackendAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.versionstore.sources import DEFAULT_SOURCES, StoreSources
from persist_spi.versionstore.store import VersionStore


def in_process_target(
    adapter: BackendAdapter,
    *,
    backend: str,
    provisioning: str,
    url: str | None,
    server_version: str = "",
    default_branch: str = "main",
    sources: StoreSources = DEFAULT_SOURCES,
    config: StoreConfig | None = None,
) -> Target:
    """A target over ``adapter``: its tables are created if missing and the repository is
    initialised with ``default_branch`` on first use (an existing repository is kept as it is).
    Closing the target closes the adapter."""
    try:
        adapter.setup_schema()
        persist = AdapterPersist(adapter, config or StoreConfig())
        repository = RepositoryLogic(persist)
        if not repository.repository_exists():
            repository.initialize(default_branch)
        store = VersionStore(persist, sources=sources)
    except BaseException:
        adapter.close()
        raise
    target = Target(
        store,
        kind="lochkit",
        backend=backend,
        server_version=server_version or adapter.server_version() or "",
        provisioning=provisioning,
        url=url,
        reproducible=True,
    )
    target.on_close(adapter.close)
    return target
