"""The backend a conformance session currently drives, keyed by the factory that made it.

pytest caches session fixtures by their own parameters only. A suite run with an overridden
``lochkit_backend_factory`` (a third-party adapter) next to suites parametrised by ``--backend``
would otherwise reuse whatever backend happened to be cached. The pool makes the choice explicit:
one backend runs at a time; asking for another stops the current one first, so servers do not pile
up on a small machine. A backend that could not be provisioned, or whose server refused the
adapter (unreachable, wrong credentials, an old schema), is remembered with its reason, so the
following tests fail at once instead of each waiting for the same timeout.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.harness import BackendUnderTest
from conformance.setup_failure import SetupFailure
from persist_spi.logic.ownership import guard_database
from persist_spi.registry import BackendFactory
from provisioning.base import Provisioned, ProvisioningFailed
from provisioning.registry import provision
from provisioning.workdir import make_workdir, remove_workdir


@dataclass
class _Running:
    key: tuple[str, type]
    #: None for a server the suites reach only through its API (a Nessie server).
    backend: BackendUnderTest | None
    provisioned: Provisioned
    workdir: Path


@dataclass
class BackendPool:
    urls: Mapping[str, str]
    method: str
    #: The user opted in to running the suites in a database that holds someone's data (the
    #: suites still write only into scratch repositories there).
    allow_existing_data: bool = False
    #: The storage layout every backend is opened with (``layout=`` of its URL options).
    layout: str = "lochkit"
    current: _Running | None = None
    #: Backends and servers that could not be provisioned or set up, with why (never asked again).
    failed: dict[tuple[str, type], SetupFailure] = field(default_factory=dict)

    def get(self, factory: BackendFactory) -> tuple[BackendUnderTest, dict[str, Any]] | SetupFailure:
        """The running backend for ``factory`` (starting it, and stopping another, if needed), with
        its provisioning facts for the report; or why it cannot be used in this session."""
        key = (factory.name, type(factory))
        if key in self.failed:
            return self.failed[key]
        current = self.current
        if current is not None and current.key == key and current.backend is not None:
            return current.backend, _facts(current)
        started = self._start(key, factory.name, factory)
        if isinstance(started, SetupFailure):
            return started
        provisioned, workdir = started
        if self.layout != "lochkit":
            provisioned.options = {**provisioned.options, "layout": self.layout}
        try:
            adapter = factory.create(provisioned.url, provisioned.options)
            try:
                adapter.setup_schema()
                if not provisioned.started_here:
                    guard_database(
                        adapter,
                        allow_existing=self.allow_existing_data,
                        writes_into="only into scratch repositories of its own, and erases only those",
                    )
            except BaseException:
                adapter.close()
                raise
        except BaseException as e:
            provisioned.stop()
            remove_workdir(workdir)
            if not isinstance(e, Exception):
                raise
            self.failed[key] = SetupFailure.refused(factory.name, e)
            return self.failed[key]
        provisioned.server = provisioned.server or adapter.server_version() or ""
        backend = BackendUnderTest(factory.name, factory, adapter, provisioned, workdir)
        self.current = _Running(key, backend, provisioned, workdir)
        return backend, _facts(self.current)

    def get_server(self, name: str) -> Provisioned | SetupFailure:
        """A server used only through its API (``nessie``), started like the database servers
        and sharing their one-at-a-time slot."""
        key = (name, Provisioned)
        if key in self.failed:
            return self.failed[key]
        if self.current is not None and self.current.key == key:
            return self.current.provisioned
        started = self._start(key, name, None)
        if isinstance(started, SetupFailure):
            return started
        provisioned, workdir = started
        self.current = _Running(key, None, provisioned, workdir)
        return provisioned

    def _start(
        self, key: tuple[str, type], name: str, factory: BackendFactory | None
    ) -> tuple[Provisioned, Path] | SetupFailure:
        """Stops the current server and provisions ``name``'s in a fresh work directory."""
        self.close()
        workdir = make_workdir(name)
        try:
            return provision(name, factory, urls=self.urls, method=self.method, workdir=workdir), workdir
        except ProvisioningFailed as e:
            failure = SetupFailure.unavailable(name, e)
        except Exception as e:  # a bug in a provisioner: a failure even under --backend all
            failure = SetupFailure.refused(name, e)
        except BaseException:
            remove_workdir(workdir)
            raise
        remove_workdir(workdir)
        self.failed[key] = failure
        return failure

    def close(self) -> None:
        running, self.current = self.current, None
        if running is None:
            return
        try:
            if running.backend is not None:
                with contextlib.suppress(Exception):
                    running.backend.close()
        finally:
            running.provisioned.stop()
            remove_workdir(running.workdir)


def _facts(running: _Running) -> dict[str, Any]:
    provisioned = running.provisioned
    facts: dict[str, Any] = {
        "description": provisioned.describe(),
        "method": provisioned.method,
        "server": provisioned.server,
    }
    if running.backend is not None:
        facts["capabilities"] = running.backend.adapter.capabilities.describe()
        facts["layout"] = running.backend.adapter.layout.name
    return facts
