"""The ``lochkit`` target: lochkit's version store in-process, over a backend adapter."""

from __future__ import annotations

from collections.abc import Mapping

from loadgen.targets.target import Target
from persist_spi.adapter import BackendAdapter
from persist_spi.config import StoreConfig
from persist_spi.errors import LochkitError
from persist_spi.logic.repository_logic import RepositoryDescription, RepositoryLogic
from persist_spi.opening import open_persist
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
    object_cache: bool = True,
    repository_must_exist: bool = False,
    new_repository_properties: Mapping[str, str] | None = None,
) -> Target:
    """A target over ``adapter``: its tables are created if missing and the repository
    (``config.repository_id``) is initialised with ``default_branch`` on first use, its description
    carrying ``new_repository_properties``; an existing repository is kept as it is, and with
    ``repository_must_exist`` a missing one is an error instead. The store reads through the
    process-wide object cache, as Nessie's server does, unless ``object_cache`` is False. Closing
    the target closes the adapter."""
    try:
        adapter.setup_schema()
        persist = open_persist(adapter, config, object_cache=object_cache)
        repository = RepositoryLogic(persist)
        if not repository.repository_exists():
            if repository_must_exist:
                raise MissingRepository(
                    f"no repository '{persist.repository_id}' at {adapter.address}: check the address "
                    "and --repository"
                )
            description = RepositoryDescription(properties=dict(new_repository_properties or {}))
            repository.initialize(default_branch, description=description)
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
        repository=persist.repository_id,
        reproducible=True,
    )
    target.on_close(adapter.close)
    return target


class MissingRepository(LochkitError):
    """A command that only reads or maintains a repository found none to work on."""
