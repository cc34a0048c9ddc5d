"""Getting a running database for a backend, and reporting how it was obtained.

Order of preference, decided per backend and reported in every run:

1. an **external** address the user gave (``--backend-url NAME=URL`` or ``LOCHKIT_<NAME>_URL``);
2. an **embedded** backend needs nothing (in-memory, RocksDB);
3. **testcontainers**, when a Docker engine answers (official images, versions pinned in
   :mod:`provisioning.servers.versions`);
4. a **local process** installed from the package registries this project can reach.

``--provision`` forces one method instead of "auto".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path

from persist_spi import hints, progress
from persist_spi.registry import BackendFactory
from provisioning import base
from provisioning.base import (
    ENTRY_POINT_GROUP,
    METHODS,
    Provisioned,
    ProvisioningFailed,
    ServerProvisioner,
)
from provisioning.servers import BUILTIN_PROVISIONERS
from provisioning.servers.versions import IMAGES


def install_local(backend: str) -> str:
    """Install ``backend``'s local server if missing (``lochkit servers install``); returns what is
    installed. Progress is reported here, so every provisioner gets it."""
    provisioner = _provisioner_for(backend)
    with progress.step(f"{backend}: installing the local server"):
        return provisioner.install(backend)


def start_local(backend: str, workdir: Path) -> Provisioned:
    """Install (if needed) and start ``backend``'s local server, reporting progress."""
    provisioner = _provisioner_for(backend)
    with progress.step(f"{backend}: starting a local server"):
        return provisioner.local_process(backend, workdir)


def _provisioner_for(backend: str) -> ServerProvisioner:
    provisioner = provisioners().get(backend)
    if provisioner is None:
        raise ProvisioningFailed(
            f"{backend}: lochkit knows no local server for it; {hints.pass_url(backend, 'URL')}"
        )
    return provisioner


def _from_testcontainers(provisioner: ServerProvisioner, backend: str, workdir: Path) -> Provisioned:
    """Runs a recipe, turning whatever the Docker client raises into one clear message. Recipes
    stop their own container when a later step (a readiness wait) fails."""
    try:
        with progress.step(f"{backend}: starting {IMAGES.get(backend, 'a')} container"):
            return provisioner.testcontainers(backend, workdir)
    except ProvisioningFailed:
        raise
    except Exception as e:
        image = IMAGES.get(backend, "its image")
        raise ProvisioningFailed(
            f"{backend}: testcontainers could not start {image} ({type(e).__name__}: {e}). Check that "
            "a Docker engine answers (docker info, or DOCKER_HOST) and can pull the image; otherwise "
            f"{hints.use_method(backend, 'local')} or {hints.pass_url(backend, 'URL')}"
        ) from None  # the message carries the cause; its traceback is noise


def external_url(backend: str, given: Mapping[str, str]) -> str | None:
    return given.get(backend) or os.environ.get(hints.url_env_var(backend)) or None


def provisioners() -> dict[str, ServerProvisioner]:
    """Built-in provisioners plus third-party ones registered under ``lochkit.provisioners``."""
    found: dict[str, ServerProvisioner] = {}
    for provisioner in BUILTIN_PROVISIONERS:
        for name in provisioner.backends:
            found[name] = provisioner
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        loaded = ep.load()
        provisioner = loaded() if isinstance(loaded, type) else loaded
        for name in provisioner.backends:
            found[name] = provisioner
    return found


def provision(
    backend: str,
    factory: BackendFactory | None,
    *,
    urls: Mapping[str, str],
    method: str,
    workdir: Path,
) -> Provisioned:
    """Make ``backend`` available by the first method that applies (see the module docstring).
    ``factory`` is None for a server that is not a Persist backend (the Nessie server)."""
    if method not in METHODS:
        raise ProvisioningFailed(f"Unknown provisioning method '{method}'; use one of {', '.join(METHODS)}")
    url = external_url(backend, urls)
    if url is not None:
        return Provisioned(backend, url, "external")
    if method == "external":
        raise ProvisioningFailed(
            f"{backend}: provisioning 'external' needs the address of a running server: "
            f"{hints.pass_url(backend, 'URL')}"
        )
    provisioner = provisioners().get(backend)
    if provisioner is None:
        if factory is not None and (
            factory.default_url is not None or not factory.capabilities.multi_process
        ):
            # Embedded, or a server at a well-known default address.
            how = "embedded" if factory.default_url is None else "default-address"
            return Provisioned(backend, factory.default_url, how)
        raise ProvisioningFailed(
            f"{backend}: no address given and no provisioner knows how to start it; "
            f"{hints.pass_url(backend, 'URL')}"
        )
    workdir.mkdir(parents=True, exist_ok=True)
    if method == "testcontainers" or (method == "auto" and base.docker_engine_available()):
        return _from_testcontainers(provisioner, backend, workdir)
    return start_local(backend, workdir)
