"""Toxiproxy (Shopify's fault-injecting TCP proxy), built from the Go module proxy like FerretDB.

Not a database: the reliability campaign puts it between lochkit and a database server and adds
"toxics" (latency, bandwidth limits, resets, stalled connections) through its HTTP API.
``lochkit servers install toxiproxy`` builds it into the cache; ``lochkit servers start toxiproxy``
runs it and prints its API address. The API listens on loopback only.
"""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from provisioning.base import LocalServerStatus, Provisioned, ServerProvisioner
from provisioning.servers import requirements
from provisioning.servers.gobuild import binary_reports, build_go_binary
from provisioning.servers.process import LocalServer, cache_path, free_port
from provisioning.servers.versions import LOCAL

_PACKAGE: Final = LOCAL["toxiproxy"]  # github.com/Shopify/toxiproxy/v2/cmd/server@vX.Y.Z
_MODULE: Final = _PACKAGE.split("/cmd/", 1)[0]
VERSION: Final = _PACKAGE.rsplit("@", 1)[1]
_START_TIMEOUT: Final = 30.0
#: The ``go`` line of the pinned release's go.mod: the oldest Go that builds it.
_GO_MINIMUM: Final = (1, 23)


def toxiproxy_binary() -> Path:
    # cache_path, not cache_dir: `servers list` asks for it and must not create directories.
    return cache_path("toxiproxy", VERSION) / "bin" / "toxiproxy-server"


def _reports_version(binary: Path) -> bool:
    return binary_reports(binary, "-version", VERSION.lstrip("v"))


def install_toxiproxy() -> Path:
    binary = toxiproxy_binary()
    if not _reports_version(binary):
        build_go_binary(
            backend="toxiproxy",
            what="Toxiproxy",
            module=_MODULE,
            version=VERSION,
            package="./cmd/server",
            binary=binary,
            # What -version prints (a plain build says "git"), so a cached binary can be recognised.
            ldflags=f"-X {_MODULE}.Version={VERSION.lstrip('v')}",
        )
    return binary


@dataclass
class Toxiproxy:
    """A running Toxiproxy: its API address and process."""

    server: LocalServer
    api: str

    def stop(self) -> None:
        self.server.stop(grace=5)


def start_toxiproxy(workdir: Path) -> Toxiproxy:
    binary = install_toxiproxy()
    port = free_port()
    server = LocalServer(
        f"Toxiproxy {VERSION}",
        [str(binary), "-host", "127.0.0.1", "-port", str(port)],
        log_path=workdir / "toxiproxy.log",
        cwd=workdir,
    )
    api = f"http://127.0.0.1:{port}"
    server.wait_until(lambda: _answers(api), _START_TIMEOUT, "its API answering")
    return Toxiproxy(server, api)


def _answers(api: str) -> bool:
    with urllib.request.urlopen(f"{api}/version", timeout=2) as response:
        return bool(response.status == 200)


class ToxiproxyProvisioner(ServerProvisioner):
    backends = ("toxiproxy",)

    def install(self, backend: str) -> str:
        return f"Toxiproxy {VERSION} at {install_toxiproxy()}"

    def local_status(self, backend: str) -> LocalServerStatus:
        binary = toxiproxy_binary()
        if _reports_version(binary):
            return LocalServerStatus(backend, f"Toxiproxy {VERSION} at {binary}")
        return LocalServerStatus(backend, None, (requirements.go(_GO_MINIMUM, "Toxiproxy"),))

    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        proxy = start_toxiproxy(workdir)
        return Provisioned(
            "toxiproxy", proxy.api, "local-process", server=f"Toxiproxy {VERSION}", stop=proxy.stop
        )


PROVISIONER = ToxiproxyProvisioner()
