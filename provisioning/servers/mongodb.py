"""MongoDB servers: real ``mongod`` through testcontainers, FerretDB as a local process.

No ``mongod`` can be installed from the registries this project reaches, but FerretDB 1.x (which
speaks MongoDB's wire protocol and stores documents in SQLite) can be built from the Go module proxy.

It is built by :mod:`provisioning.servers.gobuild`, which writes the generated
``build/version/version.txt`` a FerretDB binary needs at start (a plain ``go install`` build
panics without it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from persist_spi import hints
from provisioning.base import LocalServerStatus, Provisioned, ProvisioningFailed, ServerProvisioner
from provisioning.servers import requirements
from provisioning.servers.gobuild import binary_reports, build_go_binary
from provisioning.servers.process import LocalServer, RestartableServer, cache_path, free_port
from provisioning.servers.versions import IMAGES, LOCAL

_PACKAGE: Final = LOCAL["mongodb"]  # github.com/FerretDB/FerretDB/cmd/ferretdb@vX.Y.Z
_MODULE: Final = _PACKAGE.split("/cmd/", 1)[0]
FERRETDB_VERSION: Final = _PACKAGE.rsplit("@", 1)[1]
_START_TIMEOUT: Final = 60.0


@dataclass
class FerretDB:
    """A FerretDB process we started, with its address."""

    server: LocalServer
    port: int
    url: str
    seconds_to_ready: float

    def stop(self) -> None:
        self.server.stop()


def ferretdb_binary() -> Path:
    return cache_path("ferretdb", FERRETDB_VERSION) / "bin" / "ferretdb"


def install_ferretdb() -> Path:
    """Build FerretDB into the cache unless a working binary is there; returns its path."""
    binary = ferretdb_binary()
    if _reports_version(binary):
        return binary

    def write_version_files(tree: Path) -> None:
        (tree / "build" / "version" / "version.txt").write_text(FERRETDB_VERSION + "\n")
        (tree / "build" / "version" / "package.txt").write_text("lochkit\n")

    build_go_binary(
        backend="mongodb",
        what="FerretDB",
        module=_MODULE,
        version=FERRETDB_VERSION,
        package="./cmd/ferretdb",
        binary=binary,
        prepare=write_version_files,
        instead=hints.pass_url("mongodb", "mongodb://HOST:27017/lochkit"),
    )
    if not _reports_version(binary):
        raise ProvisioningFailed(
            f"mongodb: the FerretDB built at {binary} does not start; delete it and retry"
        )
    return binary


def _reports_version(binary: Path) -> bool:
    return binary_reports(binary, "--version", f"version: {FERRETDB_VERSION}")


def start_ferretdb(workdir: Path, *, user: str | None = None, password: str | None = None) -> FerretDB:
    """Start FerretDB (SQLite handler) on a free loopback port, data under ``workdir``. With a user,
    authentication is on (FerretDB's SCRAM implementation) and that user is created at start."""
    binary = install_ferretdb()
    data, state = workdir / "ferretdb-data", workdir / "ferretdb-state"
    data.mkdir(parents=True, exist_ok=True)
    state.mkdir(parents=True, exist_ok=True)
    port = free_port()
    cmd = [
        str(binary),
        "--handler=sqlite",
        # WAL with synchronous=normal: survives a crash of FerretDB, not a power cut; a throwaway
        # test server does not need more, and writes get ~30% faster (measured: 5.7 -> 4.1 ms).
        f"--sqlite-url=file:{data}/?_pragma=synchronous(normal)",
        f"--state-dir={state}",
        f"--listen-addr=127.0.0.1:{port}",
        f"--debug-addr=127.0.0.1:{free_port()}",
        "--telemetry=disable",
        "--log-level=warn",
    ]
    env: dict[str, str] = {}
    if user is not None:
        # Through the environment, so the password does not show in the process list.
        cmd += ["--test-enable-new-auth", "--setup-database=admin", f"--setup-username={user}"]
        env["FERRETDB_SETUP_PASSWORD"] = password or ""
    started = time.monotonic()
    server = LocalServer("ferretdb", cmd, log_path=workdir / "ferretdb.log", cwd=state, env=env)
    server.wait_until(lambda: _answers(port), _START_TIMEOUT, "answering ping")
    url = f"mongodb://127.0.0.1:{port}/"
    return FerretDB(server, port, url, time.monotonic() - started)


def _answers(port: int) -> bool:
    return _answers_url(f"mongodb://127.0.0.1:{port}/")


def _answers_url(url: str) -> bool:
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    client: MongoClient[dict[str, object]] = MongoClient(
        url, serverSelectionTimeoutMS=1000, connectTimeoutMS=1000
    )
    try:
        client.admin.command("ping")  # needs no authentication, also with auth on
        return True
    except PyMongoError:
        return False
    finally:
        client.close()


def _provisioned(backend: str, ferret: FerretDB) -> Provisioned:
    return Provisioned(
        backend,
        ferret.url,
        "local-process",
        server=f"FerretDB {FERRETDB_VERSION.lstrip('v')} (sqlite handler)",
        stop=ferret.stop,
    )


class MongoProvisioner(ServerProvisioner):
    backends = ("mongodb",)

    def install(self, backend: str) -> str:
        started = time.monotonic()
        binary = install_ferretdb()
        return f"FerretDB {FERRETDB_VERSION} at {binary} (ready in {time.monotonic() - started:.1f} s)"

    def local_status(self, backend: str) -> LocalServerStatus:
        binary = ferretdb_binary()
        if _reports_version(binary):
            return LocalServerStatus(backend, f"FerretDB {FERRETDB_VERSION} at {binary}")
        return LocalServerStatus(backend, None, (requirements.go((1, 24), "FerretDB"),))

    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        return _provisioned(backend, start_ferretdb(workdir))

    def restartable_process(self, backend: str, workdir: Path) -> Provisioned:
        """SQLite in WAL mode writes each commit to the WAL before FerretDB answers, so a killed
        FerretDB loses nothing it acknowledged (synchronous=normal only skips the fsync)."""
        ferret = start_ferretdb(workdir)
        provisioned = _provisioned(backend, ferret)
        provisioned.control = RestartableServer(
            ferret.server, lambda: _answers(ferret.port), "answering ping again", _START_TIMEOUT
        )
        return provisioned

    def testcontainers(self, backend: str, workdir: Path) -> Provisioned:
        """Real mongod (official image). Standalone is enough: lochkit uses neither transactions
        nor change streams, and a standalone accepts majority read and write concerns."""
        try:
            from testcontainers.community.mongodb import MongoDbContainer
        except ImportError:
            try:  # testcontainers before 4.13 kept it here
                from testcontainers.mongodb import MongoDbContainer
            except ImportError as e:
                raise ProvisioningFailed(f"mongodb: testcontainers is not installed ({e})") from e
        container = MongoDbContainer(IMAGES["mongodb"])
        container.start()
        url = container.get_connection_url()
        try:
            # The image logs "waiting for connections" also for its private init-time server.
            deadline = time.monotonic() + _START_TIMEOUT
            while not _answers_url(url):
                if time.monotonic() > deadline:
                    raise ProvisioningFailed(f"mongodb: the {IMAGES['mongodb']} container did not answer")
                time.sleep(0.5)
        except BaseException:
            container.stop()
            raise
        # The image's root user lives in "admin" (the default authSource of a URL without a
        # database); lochkit's data goes to its own database.
        return Provisioned(
            backend,
            url,
            "testcontainers",
            server=f"MongoDB {IMAGES['mongodb'].split(':', 1)[1]} (container)",
            options={"database": "lochkit"},
            stop=container.stop,
        )


PROVISIONER = MongoProvisioner()
