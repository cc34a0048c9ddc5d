"""PostgreSQL for the conformance suites: a private cluster started from Debian's server binaries, or
the official images through testcontainers (PostgreSQL, and CockroachDB as a generic container).

The local cluster is throw-away: it lives in the run's work directory, listens on 127.0.0.1 only
(no Unix socket, so nothing depends on socket directories or path lengths), and runs with
``fsync``, ``synchronous_commit`` and ``full_page_writes`` off because a crash would only lose
test data (:meth:`PostgresProvisioner.configurable_process` leaves them to its caller).
PostgreSQL refuses to run as root, so as root it runs as the ``postgres`` account that Debian's
package creates.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from persist_spi import hints
from provisioning.base import LocalServerStatus, Provisioned, ProvisioningFailed, ServerProvisioner
from provisioning.servers import requirements
from provisioning.servers.process import (
    LocalServer,
    RestartableServer,
    apt_install,
    as_account,
    private_dir,
    run_checked,
    server_account,
    start_on_free_port,
)
from provisioning.servers.versions import IMAGES

POSTGRES_URL = "postgresql://USER:PASSWORD@HOST:5432/DATABASE"
SERVER_ACCOUNT = "postgres"
ROLE = "lochkit"
DATABASE = "lochkit"
START_TIMEOUT = 60.0
#: Test-speed settings; each trades crash safety, which a throw-away test cluster does not need.
SPEED_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
#: For a server that fault injection kills and restarts: a commit is acknowledged only once its WAL
#: is handed to the OS, so it survives a SIGKILL of every server process (not a machine crash,
#: which would need fsync too). With synchronous_commit=off it could still sit in shared memory.
CRASH_SAFE_SETTINGS = {**SPEED_SETTINGS, "synchronous_commit": "on"}
_START_ATTEMPTS = 3  # a free port can be taken by another process before the server binds it

COCKROACH_URL = "postgresql://root@HOST:26257/defaultdb?sslmode=disable"


def cockroach_local() -> str:
    """Why CockroachDB has no local process, and the ways to run it, for the running command."""
    containers = hints.use_method("cockroachdb", "testcontainers")
    return (
        "CockroachDB cannot be installed from the package registries this machine reaches, so it "
        f"has no local-process launcher. With a Docker engine, {containers} (image "
        f"{IMAGES['cockroachdb']}); otherwise start CockroachDB yourself (docker compose up -d "
        f"--wait cockroachdb) and {hints.pass_url('cockroachdb', COCKROACH_URL)}"
    )


@dataclass
class PostgresProvisioned(Provisioned):
    """A provisioned server plus a superuser URL, for tests that need roles other than lochkit's."""

    admin_url: str = field(default="", repr=False)


# --- finding and installing the server binaries -------------------------------------------------


def server_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``postgres``: ``$LOCHKIT_POSTGRES_BINDIR``, Debian's
    newest ``/usr/lib/postgresql/N/bin``, or wherever ``initdb`` is on the PATH."""
    candidates: list[Path] = []
    override = os.environ.get("LOCHKIT_POSTGRES_BINDIR")
    if override:
        candidates.append(Path(override))
    debian = [p for p in Path("/usr/lib/postgresql").glob("*/bin") if p.parent.name.isdigit()]
    candidates.extend(sorted(debian, key=lambda p: int(p.parent.name), reverse=True))
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for candidate in candidates:
        if (candidate / "initdb").is_file() and (candidate / "postgres").is_file():
            return candidate
    return None


def _binaries_version(bindir: Path) -> str:
    out = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or f"postgres in {bindir}"


def _install_with_apt() -> None:
    apt_install(
        "postgresql",
        "postgres: the PostgreSQL server binaries are missing and this system has no apt-get; "
        "install PostgreSQL with your package manager and set LOCHKIT_POSTGRES_BINDIR to the "
        f"directory holding initdb, or {hints.pass_url('postgres', POSTGRES_URL)}",
    )


# --- the local cluster --------------------------------------------------------------------------


def _server_account() -> pwd.struct_passwd | None:
    """The account to run the server as: ``postgres`` when we are root, else ourselves (None)."""
    return server_account(
        SERVER_ACCOUNT,
        f"postgres: PostgreSQL refuses to run as root and there is no '{SERVER_ACCOUNT}' account "
        "to run it as; installing Debian's postgresql package creates it (apt-get install -y "
        "postgresql), or run the tests as an ordinary user",
    )


def _initdb(bindir: Path, data: Path, superuser_password: str, account: pwd.struct_passwd | None) -> None:
    pwfile = data.parent / "superuser-password"
    pwfile.write_text(superuser_password + "\n")
    pwfile.chmod(0o600)
    if account is not None:
        os.chown(pwfile, account.pw_uid, account.pw_gid)
    try:
        cmd = [
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            f"--pwfile={pwfile}",
            "--auth-host=scram-sha-256",
            "--auth-local=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",  # the cluster is thrown away after the run
            "--no-instructions",
        ]
        run_checked(as_account(account, cmd), "initdb of the test cluster", timeout=120)
    finally:
        pwfile.unlink(missing_ok=True)


def _server_command(
    bindir: Path, data: Path, port: int, durability: dict[str, str] = SPEED_SETTINGS
) -> list[str]:
    settings = {
        "listen_addresses": "127.0.0.1",
        "port": str(port),
        "unix_socket_directories": "",  # TCP only: no socket directory to own or to share
        "max_connections": "200",
        "shared_buffers": "128MB",
        **durability,
    }
    cmd = [str(bindir / "postgres"), "-D", str(data)]
    for key, value in settings.items():
        cmd += ["-c", f"{key}={value}"]
    return cmd


def _server_version(url: str) -> str:
    """Connects (raising until the server accepts) and returns e.g. '15.18 (Debian 15.18-0+deb12u1)'."""
    import psycopg

    with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "unknown"


def _create_role_and_database(admin_url: str, password: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(ROLE), sql.Literal(password))
        )
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(DATABASE), sql.Identifier(ROLE))
        )


def _start(
    bindir: Path,
    data: Path,
    log: Path,
    account: pwd.struct_passwd | None,
    superuser_password: str,
    durability: dict[str, str] = SPEED_SETTINGS,
) -> tuple[LocalServer, int, str]:
    """Starts the server on a free port; returns it with its port and version."""
    return start_on_free_port(
        lambda port: LocalServer(
            "postgres",
            _server_command(bindir, data, port, durability),
            log_path=log,
            user=None if account is None else account.pw_name,
        ),
        lambda port: _server_version(_url("postgres", superuser_password, port, "postgres")),
        START_TIMEOUT,
        "could not bind",
        _START_ATTEMPTS,
    )


def _fast_shutdown(server: LocalServer, data: Path) -> None:
    """SIGINT to the postmaster is PostgreSQL's "fast" shutdown: it ends open sessions at once,
    where the SIGTERM that LocalServer sends waits for clients ("smart" shutdown)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        pid = int((data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.process.wait(15)
    server.stop()


def _launch(
    bindir: Path,
    base: Path,
    log: Path,
    account: pwd.struct_passwd | None,
    durability: dict[str, str] = SPEED_SETTINGS,
) -> tuple[LocalServer, Path, str, str, str]:
    """initdb, start, and create lochkit's role and database. Returns the server, its data
    directory, the superuser URL, lochkit's URL and the server version."""
    data = base / "data"
    data.mkdir(mode=0o700)
    if account is not None:
        os.chown(data, account.pw_uid, account.pw_gid)
    superuser_password, password = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    _initdb(bindir, data, superuser_password, account)
    server, port, version = _start(bindir, data, log, account, superuser_password, durability)
    admin_url = _url("postgres", superuser_password, port, "postgres")
    try:
        _create_role_and_database(admin_url, password)
    except BaseException:
        _fast_shutdown(server, data)
        raise
    return server, data, admin_url, _url(ROLE, password, port, DATABASE), version


def _url(user: str, password: str, port: int, database: str) -> str:
    return f"postgresql://{user}:{password}@127.0.0.1:{port}/{database}"


def _passfile_url(url: str, passfile: Path) -> str:
    """``url`` without its password, naming a libpq password file (0600, as libpq requires) that
    holds it instead: an address that can be printed and pasted."""
    from urllib.parse import quote, unquote, urlsplit

    parts = urlsplit(url)
    user, password, database = unquote(parts.username or ""), unquote(parts.password or ""), parts.path[1:]
    # .pgpass fields: host:port:database:user:password, with ':' and backslashes escaped.
    fields = ["127.0.0.1", str(parts.port), database, user, password]
    passfile.write_text(":".join(f.replace("\\", "\\\\").replace(":", "\\:") for f in fields) + "\n")
    passfile.chmod(0o600)
    return f"postgresql://{parts.username}@127.0.0.1:{parts.port}{parts.path}?passfile={quote(str(passfile))}"


# --- testcontainers -----------------------------------------------------------------------------


def _postgres_container(backend: str) -> PostgresProvisioned:
    try:
        from testcontainers.community.postgres import PostgresContainer
    except ImportError:  # testcontainers before 4.10 had it at the top level
        from testcontainers.postgres import PostgresContainer

    image = IMAGES["postgres"]
    password = secrets.token_urlsafe(18)
    container = PostgresContainer(image, username=ROLE, password=password, dbname=DATABASE, driver=None)
    # The image's entrypoint passes these on to postgres: the same speed settings as the local cluster.
    container.with_command(" ".join(f"-c {k}={v}" for k, v in SPEED_SETTINGS.items()))
    container.start()
    url = container.get_connection_url()  # driver=None above: a plain postgresql:// URL
    # POSTGRES_USER is a superuser in the official image, so the same URL serves as the admin URL.
    return PostgresProvisioned(
        backend,
        url,
        "testcontainers",
        server=f"{image} ({_settings_text()})",
        stop=container.stop,
        admin_url=url,
    )


def _cockroach_container(backend: str) -> PostgresProvisioned:
    from testcontainers.core.container import DockerContainer

    image = IMAGES["cockroachdb"]
    container = (
        DockerContainer(image)
        .with_command("start-single-node --insecure --store=type=mem,size=1GiB")
        .with_exposed_ports(26257)
    )
    container.start()
    url = (
        f"postgresql://root@{container.get_container_host_ip()}:{container.get_exposed_port(26257)}"
        "/defaultdb?sslmode=disable"
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            _server_version(url)
            break
        except Exception as e:
            if time.monotonic() > deadline:
                container.stop()
                raise ProvisioningFailed(
                    f"{backend}: {image} did not accept connections within 120 s: {e}"
                ) from e
            time.sleep(1)
    return PostgresProvisioned(
        backend,
        url,
        "testcontainers",
        server=f"{image} (insecure, in-memory store)",
        stop=container.stop,
        admin_url=url,
    )


def _settings_text(durability: dict[str, str] = SPEED_SETTINGS) -> str:
    return ", ".join(f"{k}={v}" for k, v in durability.items())


# --- the provisioner ----------------------------------------------------------------------------


class PostgresProvisioner(ServerProvisioner):
    backends = ("postgres", "cockroachdb")

    def install(self, backend: str) -> str:
        if backend == "cockroachdb":
            raise ProvisioningFailed(f"cockroachdb: {cockroach_local()}")
        bindir = server_bindir()
        if bindir is None:
            if os.geteuid() != 0:
                raise ProvisioningFailed(
                    "postgres: the PostgreSQL server binaries are not installed (looked for "
                    "/usr/lib/postgresql/*/bin/initdb and initdb on the PATH). Install them as root "
                    "with 'apt-get install -y postgresql', or set LOCHKIT_POSTGRES_BINDIR to the "
                    f"directory holding initdb, or {hints.pass_url('postgres', POSTGRES_URL)}"
                )
            _install_with_apt()
            bindir = server_bindir()
            if bindir is None:
                raise ProvisioningFailed(
                    "postgres: apt-get installed postgresql but no /usr/lib/postgresql/*/bin/initdb "
                    "appeared; set LOCHKIT_POSTGRES_BINDIR to the directory holding initdb"
                )
        return f"{_binaries_version(bindir)} in {bindir}"

    def local_process(self, backend: str, workdir: Path) -> PostgresProvisioned:
        return self._local(backend, workdir, SPEED_SETTINGS)

    def restartable_process(self, backend: str, workdir: Path) -> PostgresProvisioned:
        return self._local(backend, workdir, CRASH_SAFE_SETTINGS)

    def configurable_process(self, backend: str, workdir: Path) -> PostgresProvisioned:
        """Like :meth:`local_process`, but with no durability settings on the server's command
        line, so it starts with PostgreSQL's defaults (``fsync``, ``synchronous_commit`` and
        ``full_page_writes`` on). Settings given on the command line outrank ``ALTER SYSTEM``;
        without them a superuser connection (``admin_url``) can switch any of these with
        ``ALTER SYSTEM SET`` and ``SELECT pg_reload_conf()``, for measurements that compare server
        configurations on one instance. Stopping it deletes its data, as with :meth:`local_process`."""
        return self._local(backend, workdir, {})

    def _local(self, backend: str, workdir: Path, durability: dict[str, str]) -> PostgresProvisioned:
        if backend != "postgres":
            raise ProvisioningFailed(f"{backend}: {cockroach_local()}")
        self.install(backend)
        bindir = server_bindir()
        assert bindir is not None  # install() raised otherwise
        account = _server_account()
        base, removable = private_dir(workdir, account, "postgres")
        try:
            server, data, admin_url, url, version = _launch(
                bindir, base, workdir / "postgres.log", account, durability
            )
        except BaseException:
            shutil.rmtree(removable, ignore_errors=True)
            raise

        def stop() -> None:
            _fast_shutdown(server, data)
            with contextlib.suppress(OSError):
                shutil.rmtree(removable)

        settings = _settings_text(durability) or "default settings"  # none: configurable_process
        return PostgresProvisioned(
            backend,
            url,
            "local-process",
            server=f"PostgreSQL {version}, local process from {bindir}, {settings}",
            stop=stop,
            printable_url=_passfile_url(url, workdir / "lochkit.pgpass"),
            admin_url=admin_url,
            control=RestartableServer(
                server, lambda: bool(_server_version(admin_url)), "accepting connections again", START_TIMEOUT
            ),
        )

    def local_status(self, backend: str) -> LocalServerStatus:
        if backend == "cockroachdb":
            return LocalServerStatus(backend, None, impossible=cockroach_local())
        bindir = server_bindir()
        if bindir is None:
            return LocalServerStatus(backend, None, (requirements.apt_as_root(),))
        return LocalServerStatus(backend, f"{_binaries_version(bindir)} in {bindir}")

    def testcontainers(self, backend: str, workdir: Path) -> PostgresProvisioned:
        if backend == "cockroachdb":
            return _cockroach_container(backend)
        return _postgres_container(backend)


PROVISIONER = PostgresProvisioner()

__all__ = ["PROVISIONER", "PostgresProvisioned", "PostgresProvisioner", "cockroach_local", "server_bindir"]
