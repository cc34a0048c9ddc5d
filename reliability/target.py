"""The backend a campaign runs against, and how the supervisor reaches it.

Single-process stores (RocksDB's directory lock; FerretDB, whose compare-and-swap is only atomic
within one process) are opened by the supervisor only while no writer process runs; server
databases keep one supervisor connection for the whole campaign.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field

from persist_spi.adapter import BackendAdapter, Capabilities
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.persist import Persist
from persist_spi.registry import backend_factory


@dataclass
class Target:
    backend: str
    url: str | None = field(repr=False)
    options: dict[str, str] = field(default_factory=dict)
    repository_id: str = "torture"
    #: Writers may be separate processes (else: threads in one process).
    multi_process: bool = True
    #: Where the data lives, for reports: never a password.
    address: str = ""
    #: As the adapter declares them (FerretDB's differ from MongoDB's, known only once connected).
    capabilities: Capabilities = field(default_factory=Capabilities)
    _adapter: BackendAdapter | None = field(default=None, repr=False)
    #: Every repository id handed out by :meth:`for_repository` (shared with those targets).
    made_repositories: set[str] = field(default_factory=set, repr=False)

    @classmethod
    def open(
        cls,
        backend: str,
        url: str | None,
        options: dict[str, str] | None = None,
        repository_id: str = "torture",
    ) -> Target:
        adapter = backend_factory(backend).create(url, options or {})
        adapter.setup_schema()
        caps = adapter.capabilities
        target = cls(
            backend, url, dict(options or {}), repository_id, caps.multi_process, adapter.address, caps
        )
        if target.multi_process:
            target._adapter = adapter
        else:
            adapter.close()
        return target

    @contextlib.contextmanager
    def persist(self, **config: int) -> Iterator[Persist]:
        store_config = StoreConfig(repository_id=self.repository_id).with_changes(**config)
        if self._adapter is not None:
            yield AdapterPersist(self._adapter, store_config)
            return
        adapter = backend_factory(self.backend).create(self.url, self.options)
        try:
            yield AdapterPersist(adapter, store_config)
        finally:
            adapter.close()

    def for_repository(self, repository_id: str) -> Target:
        """The same backend (and supervisor connection) on another repository."""
        self.made_repositories.add(repository_id)
        return Target(
            self.backend,
            self.url,
            self.options,
            repository_id,
            self.multi_process,
            self.address,
            self.capabilities,
            self._adapter,
            self.made_repositories,
        )

    def with_options(self, options: Mapping[str, str]) -> Target:
        """The same repository and supervisor connection; writers open the backend with these
        options added (the supervisor's connection keeps its own)."""
        return dataclasses.replace(self, options={**self.options, **options})

    def erase(self, repository_ids: Collection[str]) -> None:
        """Erase these repositories (the campaign's own) through the supervisor's connection."""
        if self._adapter is not None:
            self._adapter.erase_repositories(repository_ids)
            return
        adapter = backend_factory(self.backend).create(self.url, self.options)
        try:
            adapter.erase_repositories(repository_ids)
        finally:
            adapter.close()

    @property
    def single_process_reason(self) -> str:
        return self.capabilities.capability_reasons.get("multi_process", "one process per database")

    def close(self) -> None:
        if self._adapter is not None:
            self._adapter.close()
            self._adapter = None
