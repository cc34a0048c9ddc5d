"""Bigtable: Google's emulator (``cbtemulator``), built from the Go module proxy like FerretDB, run
as a local process.

The emulator is the ``cmd/emulator`` program of the ``cloud.google.com/go/bigtable`` module, over
its in-memory ``bttest`` server. It keeps everything in memory: data lives as long as the process,
so there is no restartable server for the reliability campaign's server restarts (declared in
:attr:`BigtableProvisioner.not_restartable`). It prints no version, so the built binary is cached
under its module version and recognised by its usage text.

With a Docker engine, the testcontainers recipe runs the same emulator from Google's published
Cloud SDK image (its ``emulators`` variant; ``gcloud beta emulators bigtable start``), as
``docker-compose.yml`` does.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import MappingProxyType
from typing import Final

from persist_spi import hints
from provisioning.base import LocalServerStatus, Provisioned, ProvisioningFailed, ServerProvisioner
from provisioning.servers import requirements
from provisioning.servers.gobuild import binary_reports, build_go_binary
from provisioning.servers.process import LocalServer, cache_path, free_port, port_answers
from provisioning.servers.versions import IMAGES, LOCAL

_PACKAGE: Final = LOCAL["bigtable"]  # cloud.google.com/go/bigtable/cmd/emulator@vX.Y.Z
_MODULE: Final = _PACKAGE.split("/cmd/", 1)[0]
VERSION: Final = _PACKAGE.rsplit("@", 1)[1]
_START_TIMEOUT: Final = 30.0
#: The ``go`` line of the pinned release's go.mod: the oldest Go that builds it.
_GO_MINIMUM: Final = (1, 26)
#: Part of the emulator's usage text (``-h``): a cached binary that prints it starts.
_USAGE_TEXT: Final = "the port number to bind to"
#: The emulator's port inside Google's image, and the command that starts it there (the image's
#: entry point runs it as given); docker-compose.yml starts the same (a unit test compares them).
CONTAINER_PORT: Final = 8086
CONTAINER_COMMAND: Final = (
    "gcloud",
    "beta",
    "emulators",
    "bigtable",
    "start",
    f"--host-port=0.0.0.0:{CONTAINER_PORT}",
)
#: What the emulator logs once it listens ("Cloud Bigtable emulator running on [::]:8086").
_CONTAINER_READY: Final = "emulator running on"
#: Why the reliability campaign cannot restart this server on its data.
NOT_RESTARTABLE: Final = (
    "the Bigtable emulator keeps its data in memory only: a restarted emulator starts empty, so no "
    "acknowledged write could survive a restart"
)


def emulator_url(host: str, port: int | str) -> str:
    """The lochkit URL of an emulator (it accepts any project and instance)."""
    return f"bigtable://{host}:{port}?project=lochkit&instance=lochkit"


def emulator_binary() -> Path:
    # cache_path, not cache_dir: `servers list` asks for it and must not create directories.
    return cache_path("bigtable", VERSION) / "bin" / "cbtemulator"


def _runs(binary: Path) -> bool:
    return binary_reports(binary, "-h", _USAGE_TEXT)


def install_emulator() -> Path:
    """Build the emulator into the cache unless a working binary is there; returns its path."""
    binary = emulator_binary()
    if _runs(binary):
        return binary
    build_go_binary(
        backend="bigtable",
        what="the Bigtable emulator",
        module=_MODULE,
        version=VERSION,
        package="./cmd/emulator",
        binary=binary,
        instead=hints.pass_url("bigtable", "bigtable://HOST:PORT?project=P&instance=I"),
    )
    if not _runs(binary):
        raise ProvisioningFailed(
            f"bigtable: the emulator built at {binary} does not start; delete it and retry"
        )
    return binary


class BigtableProvisioner(ServerProvisioner):
    backends = ("bigtable",)
    not_restartable = MappingProxyType({"bigtable": NOT_RESTARTABLE})

    def install(self, backend: str) -> str:
        return f"Bigtable emulator ({_MODULE} {VERSION}) at {install_emulator()}"

    def local_status(self, backend: str) -> LocalServerStatus:
        binary = emulator_binary()
        if _runs(binary):
            return LocalServerStatus(backend, f"Bigtable emulator ({_MODULE} {VERSION}) at {binary}")
        return LocalServerStatus(backend, None, (requirements.go(_GO_MINIMUM, "the Bigtable emulator"),))

    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        binary = install_emulator()
        workdir.mkdir(parents=True, exist_ok=True)
        port = free_port()
        started = time.monotonic()
        server = LocalServer(
            "cbtemulator",
            [str(binary), "-host", "127.0.0.1", "-port", str(port)],
            log_path=workdir / "cbtemulator.log",
            cwd=workdir,
        )
        server.wait_until(lambda: port_answers(port), _START_TIMEOUT, "accepting connections")
        return Provisioned(
            backend,
            emulator_url("127.0.0.1", port),
            "local-process",
            server=f"Bigtable emulator {VERSION} (in memory; ready in {time.monotonic() - started:.1f} s)",
            stop=server.stop,
        )

    def testcontainers(self, backend: str, workdir: Path) -> Provisioned:
        """Not exercised on the machine this was written on (no Docker engine there)."""
        from testcontainers.core.container import DockerContainer
        from testcontainers.core.waiting_utils import wait_for_logs

        image = IMAGES["bigtable"]
        container = DockerContainer(image).with_exposed_ports(CONTAINER_PORT)
        container = container.with_command(list(CONTAINER_COMMAND))
        container.start()
        try:
            wait_for_logs(container, _CONTAINER_READY, timeout=_START_TIMEOUT)
            url = emulator_url(container.get_container_host_ip(), container.get_exposed_port(CONTAINER_PORT))
        except BaseException:
            container.stop()
            raise
        return Provisioned(
            backend,
            url,
            "testcontainers",
            server=f"Bigtable emulator ({image}, in memory)",
            stop=container.stop,
        )


PROVISIONER = BigtableProvisioner()
