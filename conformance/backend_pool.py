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
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.harness import BackendUnderTest
from conformance.provisioning import Provisioned, ProvisioningFailed, provision
from persist_spi.registry import BackendFactory


@dataclass
class _Running:
    key: tuple[str, type]
    #: None for a server the suites reach only through its API (a Nessie server).
    backend: BackendUnderTest | None
    provisioned: Provisioned
    workdir: Path


class BackendSetupFailed(RuntimeError):
    """The adapter could not be created or its schema set up; raised for every test after the first."""


@dataclass
class BackendPool:
    urls: Mapping[str, str]
    method: str
    current: _Running | None = None
    unavailable: dict[tuple[str, type], ProvisioningFailed] = field(default_factory=dict)
    broken: dict[tuple[str, type], str] = field(default_factory=dict)

    def get(self, factory: BackendFactory) -> tuple[BackendUnderTest, dict[str, Any]] | ProvisioningFailed:
        """The running backend for ``factory`` (starting it, and stopping another, if needed), with
        its provisioning facts for the report; or why it cannot run here."""
        key = (factory.name, type(factory))
        if key in self.unavailable:
            return self.unavailable[key]
        if key in self.broken:
            raise BackendSetupFailed(
                f"{factory.name} could not be set up earlier in this session; the first error was: "
                f"{self.broken[key]}"
            )
        current = self.current
        if current is not None and current.key == key and current.backend is not None:
            return current.backend, _facts(current)
        self.close()
        workdir = Path(tempfile.mkdtemp(prefix=f"lochkit-{factory.name}-"))
        try:
            provisioned = provision(
                factory.name, factory, urls=self.urls, method=self.method, workdir=workdir
            )
        except ProvisioningFailed as e:
            shutil.rmtree(workdir, ignore_errors=True)
            self.unavailable[key] = e
            return e
        try:
            adapter = factory.create(provisioned.url, provisioned.options)
            try:
                adapter.setup_schema()
            except BaseException:
                adapter.close()
                raise
        except BaseException as e:
            provisioned.stop()
            shutil.rmtree(workdir, ignore_errors=True)
            if isinstance(e, Exception):
                self.broken[key] = f"{type(e).__name__}: {e}"
            raise
        provisioned.server = provisioned.server or adapter.server_version() or ""
        backend = BackendUnderTest(factory.name, factory, adapter, provisioned, workdir)
        self.current = _Running(key, backend, provisioned, workdir)
        return backend, _facts(self.current)

    def get_server(self, name: str) -> Provisioned | ProvisioningFailed:
        """A server used only through its API (``nessie``), started like the database servers
        and sharing their one-at-a-time slot."""
        key = (name, Provisioned)
        if key in self.unavailable:
            return self.unavailable[key]
        if self.current is not None and self.current.key == key:
            return self.current.provisioned
        self.close()
        workdir = Path(tempfile.mkdtemp(prefix=f"lochkit-{name}-"))
        try:
            provisioned = provision(name, None, urls=self.urls, method=self.method, workdir=workdir)
        except ProvisioningFailed as e:
            shutil.rmtree(workdir, ignore_errors=True)
            self.unavailable[key] = e
            return e
        self.current = _Running(key, None, provisioned, workdir)
        return provisioned

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
            if not os.environ.get("LOCHKIT_KEEP_WORKDIR"):
                shutil.rmtree(running.workdir, ignore_errors=True)


def _facts(running: _Running) -> dict[str, Any]:
    provisioned = running.provisioned
    facts: dict[str, Any] = {
        "description": provisioned.describe(),
        "method": provisioned.method,
        "server": provisioned.server,
    }
    if running.backend is not None:
        facts["capabilities"] = running.backend.adapter.capabilities.describe()
    return facts
