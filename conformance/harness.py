"""The backend a conformance run drives: its adapter, how it was provisioned, and Persist helpers."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from persist_spi.adapter import BackendAdapter, Capabilities
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.logic.ownership import new_scratch_id
from persist_spi.persist import Persist
from persist_spi.registry import BackendFactory
from provisioning.base import Provisioned


@dataclass
class BackendUnderTest:
    name: str
    factory: BackendFactory
    adapter: BackendAdapter
    provisioned: Provisioned
    workdir: Path
    #: Wraps every Persist the harness makes (the cache layer uses it to run suites cached).
    persist_wrapper: Callable[[Persist], Persist] | None = None
    _extra_adapters: list[BackendAdapter] = field(default_factory=list)

    @property
    def capabilities(self) -> Capabilities:
        return self.adapter.capabilities

    def new_persist(self, config: StoreConfig | None = None, **config_changes: Any) -> Persist:
        base = config if config is not None else StoreConfig()
        if config_changes:
            base = base.with_changes(**config_changes)
        persist: Persist = AdapterPersist(self.adapter, base)
        return self.persist_wrapper(persist) if self.persist_wrapper else persist

    def new_adapter(self) -> BackendAdapter:
        """A second, independent connection to the same database (not possible for embedded
        single-process stores, which raise)."""
        if not self.capabilities.multi_process:
            raise RuntimeError(f"{self.name} allows one handle per database; use .adapter")
        adapter = self.factory.create(self.provisioned.url, self.provisioned.options)
        self._extra_adapters.append(adapter)
        return adapter

    @contextmanager
    def reopenable_store(self) -> Iterator[Callable[[], BackendAdapter]]:
        """Opens a new adapter on one store of this backend each time it is called, its schema set
        up as every opener does (the caller closes it), so that a test can close one and open
        another on what it wrote. Embedded (the factory answers ``store_url_in``): a store of its
        own, in a directory made here and removed afterwards (the session's adapter keeps its
        store, which it may hold exclusively). Otherwise: a new connection to the server under
        test."""
        # A factory that can place a store in a directory is embedded; any other reaches its
        # server at the address under test (one connection after the other, so this holds also
        # for a server that declares no multi_process, as MongoDB on FerretDB).
        made = Path(tempfile.mkdtemp(prefix="reopened-", dir=self.workdir))
        directory: Path | None = made
        url = self.factory.store_url_in(made)
        if url is None:
            shutil.rmtree(made, ignore_errors=True)
            directory = None
            url = self.provisioned.url
        try:
            if url is None:
                raise RuntimeError(
                    f"{self.name}: no store of it can be closed and opened again, because its factory "
                    "names no place for one. Give the factory a store_url_in() that answers a URL in "
                    "the directory it is given, or, if its data does not outlive the adapter, declare "
                    "durable=False"
                )
            options = self.provisioned.options

            def open_store() -> BackendAdapter:
                adapter = self.factory.create(url, options)
                try:
                    adapter.setup_schema()
                except BaseException:
                    adapter.close()
                    raise
                return adapter

            yield open_store
        finally:
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)

    def close(self) -> None:
        for adapter in self._extra_adapters:
            adapter.close()
        self.adapter.close()


class PersistFactory:
    """Makes Persists on fresh scratch repositories and erases every repository it made afterwards.

    Every id it hands out starts with one scratch prefix of its own (see
    :mod:`persist_spi.logic.ownership`), so a suite run in a user's database never writes into, or erases,
    a repository it did not make. A test that names an id (``persist_factory("a")``) gets that
    name under the prefix; names that share a prefix keep sharing it, and an id this factory
    already issued (or one extended from it) is used as it is. ``""`` is the prefix itself, which
    every other id of the factory extends."""

    def __init__(self, backend: BackendUnderTest, default_config: StoreConfig) -> None:
        self._backend = backend
        self._default = default_config
        self._root = new_scratch_id("suite")
        self._repos: set[str] = set()

    def repository_id_for(self, name: str | None) -> str:
        """The scratch id this factory uses for ``name`` (None: a fresh random one)."""
        if name is None:
            return f"{self._root}-{uuid.uuid4().hex[:12]}"
        if name.startswith(self._root):
            return name
        return f"{self._root}-{name}" if name else self._root

    def __call__(self, repository_id: str | None = None, **config_changes: Any) -> Persist:
        repo = self.repository_id_for(repository_id)
        persist = self._backend.new_persist(self._default, repository_id=repo, **config_changes)
        if repo not in self._repos:
            self._repos.add(repo)
            persist.erase()
        return persist

    @property
    def repository_ids(self) -> set[str]:
        return set(self._repos)

    def erase_all(self) -> None:
        if self._repos:
            self._backend.adapter.erase_repositories(sorted(self._repos))
            self._repos.clear()
