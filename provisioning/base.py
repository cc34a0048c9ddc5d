"""What provisioning is made of: a provisioned server (:class:`Provisioned`), a provisioner's
interface (:class:`ServerProvisioner`), the error when none can be had, and small helpers (a URL
with its password redacted, whether a Docker engine answers). :mod:`provisioning.registry` chooses
and runs the provisioners; :mod:`provisioning.servers` holds the built-in ones."""

from __future__ import annotations

import shutil
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Final, Protocol

from persist_spi.errors import LochkitError

ENTRY_POINT_GROUP: Final = "lochkit.provisioners"
METHODS: Final = ("auto", "external", "testcontainers", "local")


class ProvisioningFailed(LochkitError):
    """No server could be made available; the message says what was tried and how to fix it."""


class ServerControl(Protocol):
    """A local server that can be killed and started again on the same data and port (for fault
    injection: clients keep their address)."""

    def kill(self) -> None:
        """SIGKILL every process of the server, as a crash would."""

    def restart(self) -> float:
        """Start it again and wait until it answers; returns the seconds that took."""


@dataclass
class Provisioned:
    """A server (or embedded store) ready for tests."""

    backend: str
    #: Not in the repr: it may hold a password (use ``describe()`` for logs).
    url: str | None = field(repr=False)
    #: "embedded", "external", "testcontainers" or "local-process".
    method: str
    #: Which server answered, e.g. "PostgreSQL 15.8"; filled in after connecting when possible.
    server: str = ""
    options: dict[str, str] = field(default_factory=dict)
    stop: Callable[[], None] = lambda: None
    #: The same address with no secret in it (e.g. naming a password file), safe to print and to
    #: paste; None when the provisioner offers no such form.
    printable_url: str | None = field(default=None, repr=False)
    #: Set by :meth:`ServerProvisioner.restartable_process`.
    control: ServerControl | None = None

    @property
    def started_here(self) -> bool:
        """Whether lochkit made this database for the run (a fresh server or temporary store), so
        it holds nobody's data; False for an address the user gave or a well-known default one."""
        return self.method not in ("external", "default-address")

    def describe(self) -> str:
        where = f" at {self.printable_url or redact(self.url)}" if self.url else ""
        server = f" ({self.server})" if self.server else ""
        return f"{self.backend}: {self.method}{where}{server}"


@dataclass(frozen=True)
class Requirement:
    """A tool a local server needs on this machine, and whether it is here."""

    #: e.g. "Java 17 or newer".
    what: str
    #: What was found (e.g. "openjdk 17.0.12"), or None when missing or too old.
    found: str | None
    #: How to get it, said when it is missing.
    how: str


@dataclass(frozen=True)
class LocalServerStatus:
    """What ``lochkit servers list`` says about one backend's local server."""

    backend: str
    #: What is installed (server and version, where), or None if nothing is yet.
    installed: str | None
    #: What installing and running it needs.
    needs: tuple[Requirement, ...] = ()
    #: Why no local server can exist here at all (then nothing else applies).
    impossible: str | None = None


@dataclass(frozen=True)
class RestartOptions:
    """Options a server's restart test commits with, and why they differ from the defaults."""

    options: Mapping[str, str]
    reason: str

    def describe(self) -> str:
        shown = ", ".join(f"{key}={value}" for key, value in sorted(self.options.items()))
        return f"writers commit with {shown}: {self.reason}"


class ServerProvisioner(ABC):
    """Knows how to obtain one kind of server. Subclasses live in :mod:`provisioning.servers`."""

    #: The backend name(s) it serves.
    backends: tuple[str, ...] = ()
    #: Backends whose local server cannot be restarted on its data, each with the reason (e.g. an
    #: emulator that keeps everything in memory): their :meth:`restartable_process` is refused, and
    #: the reliability campaign reports its server-restart part as not applicable with this reason.
    not_restartable: Mapping[str, str] = MappingProxyType({})
    #: Backend options the reliability campaign's writers use against the restartable server,
    #: each set with the reason (a server that acknowledges some kind of request before it is
    #: durable); the campaign's report shows both.
    restart_options: Mapping[str, RestartOptions] = MappingProxyType({})

    def install(self, backend: str) -> str:
        """Install the local server into the user's cache if missing (idempotent); returns what
        is installed. Used by ``lochkit servers install`` and by :meth:`local_process`."""
        return "nothing to install"

    def testcontainers(self, backend: str, workdir: Path) -> Provisioned:
        raise ProvisioningFailed(f"{backend}: no testcontainers recipe")

    def local_status(self, backend: str) -> LocalServerStatus:
        """Whether the local server is installed, its version, and what it needs; cheap (no
        download, no start). Provisioners that know more override it."""
        return LocalServerStatus(backend, None)

    @abstractmethod
    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        """Install (if needed, into the user's cache) and start the server on loopback."""

    def restartable_process(self, backend: str, workdir: Path) -> Provisioned:
        """Like :meth:`local_process`, but configured so that acknowledged writes survive a
        SIGKILL of the server, with a :attr:`Provisioned.control` to kill and restart it."""
        reason = self.not_restartable.get(backend)
        if reason is not None:
            raise ProvisioningFailed(f"{backend}: its local server cannot be restarted on its data: {reason}")
        raise ProvisioningFailed(f"{backend}: no restartable local server is known")


def redact(url: str) -> str:
    """The URL without a password, for logs, reports and error messages."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def docker_engine_available() -> bool:
    """True when a Docker engine answers (a client alone is not enough). Asks the way
    testcontainers will (docker-py, honouring ``DOCKER_HOST``), else through the ``docker`` CLI."""
    try:
        import docker
    except ImportError:
        pass
    else:
        try:
            client = docker.from_env(timeout=10)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except Exception:  # docker-py raises several unrelated types when nothing answers
            return False
    cli = shutil.which("docker")
    if cli is None:
        return False
    try:
        return subprocess.run([cli, "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
