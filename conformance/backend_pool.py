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
from typing import Any

from conformance.harness import BackendUnderTest
from conformance.provisioning import Provisioned, ProvisioningFailed, provision
from conformance.setup_failure import SetupFailure
from conformance.workdir import make_workdir, remove_workdir
from persist_spi.registry import BackendFactory


@dataclass
class _Running:
    key: tuple[str, type]
    backend: BackendUnderTest
    provisioned: Provisioned


@dataclass
class BackendPool:
    urls: Mapping[str, str]
    method: str
    current: _Running | None = None
    #: Backends that could not be provisioned or set up, with why (never asked again).
    failed: dict[tuple[str, type], SetupFailure] = field(default_factory=dict)

    def get(self, factory: BackendFactory) -> tuple[BackendUnderTest, dict[str, Any]] | SetupFailure:
        """The running backend for ``factory`` (starting it, and stopping another, if needed), with
        its provisioning facts for the report; or why it cannot be used in this session."""
        key = (factory.name, type(factory))
        if key in self.failed:
            return self.failed[key]
        if self.current is not None and self.current.key == key:
            return self.current.backend, _facts(self.current)
        self.close()
        workdir = make_workdir(factory.name)
        try:
            provisioned = provision(
                factory.name, factory, urls=self.urls, method=self.method, workdir=workdir
            )
        except ProvisioningFailed as e:
            remove_workdir(workdir)
            self.failed[key] = SetupFailure.unavailable(factory.name, e)
            return self.failed[key]
        except Exception as e:  # a bug in a provisioner: a failure even under --backend all
            remove_workdir(workdir)
            self.failed[key] = SetupFailure.refused(factory.name, e)
            return self.failed[key]
        except BaseException:
            remove_workdir(workdir)
            raise
        try:
            adapter = factory.create(provisioned.url, provisioned.options)
            try:
                adapter.setup_schema()
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
        self.current = _Running(key, backend, provisioned)
        return backend, _facts(self.current)

    def close(self) -> None:
        running, self.current = self.current, None
        if running is None:
            return
        try:
            with contextlib.suppress(Exception):
                running.backend.close()
        finally:
            running.provisioned.stop()
            remove_workdir(running.backend.workdir)


def _facts(running: _Running) -> dict[str, Any]:
    provisioned = running.provisioned
    return {
        "description": provisioned.describe(),
        "method": provisioned.method,
        "server": provisioned.server,
        "capabilities": running.backend.adapter.capabilities.describe(),
    }
