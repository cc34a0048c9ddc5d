"""MariaDB for the conformance suites: a private server started from Debian's ``mariadb-server``
binaries, or the official image through testcontainers.

The local server is throw-away: its data directory lives in the run's work directory, it listens
on 127.0.0.1 and a free port, its Unix socket sits in the same private directory, and it skips
name resolution. Like PostgreSQL it runs as the account Debian's package creates (``mysql``) when
we are root. Users and the database are created by an init file the server runs at every start
(idempotent statements), so a restart after a kill needs no client step; the file holds the
passwords, so it is readable by the server account only and deleted with the data directory.
"""

from __future__ import annotations

import contextlib
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

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

MARIADB_URL = "mariadb://USER:PASSWORD@HOST:3306/DATABASE"
SERVER_ACCOUNT = "mysql"
USER = "lochkit"
ADMIN = "lochkit_admin"
DATABASE = "lochkit"
START_TIMEOUT = 60.0
#: Test speed: the redo log is flushed about once a second, not at each commit (a crash of the
#: throw-away server may lose the last second, which tests never read back).
SPEED_SETTINGS = {"innodb_flush_log_at_trx_commit": "0"}
#: For a server that fault injection kills and restarts: each commit's redo log is handed to the
#: OS before it is acknowledged, so it survives a SIGKILL of the server (not a machine crash).
CRASH_SAFE_SETTINGS = {"innodb_flush_log_at_trx_commit": "2"}
_START_ATTEMPTS = 3  # a free port can be taken by another process before the server binds it


@dataclass
class MariadbProvisioned(Provisioned):
    """A provisioned server plus an administrator URL, for tests that need other users."""

    admin_url: str = field(default="", repr=False)


# --- finding and installing the server binaries -------------------------------------------------


def _binary(name: str) -> Path | None:
    for candidate in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def server_binaries() -> tuple[Path, Path] | None:
    """``mariadbd`` and ``mariadb-install-db``, if installed."""
    server, installer = _binary("mariadbd"), _binary("mariadb-install-db")
    return (server, installer) if server and installer else None


def _binaries_version(server: Path) -> str:
    out = subprocess.run([str(server), "--version"], capture_output=True, text=True, timeout=30)
    match = re.search(r"Ver (\S+)", out.stdout)
    return f"MariaDB {match.group(1).replace('-MariaDB', '')}" if match else f"mariadbd at {server}"


# --- the local server ---------------------------------------------------------------------------


def _init_sql(password: str, admin_password: str) -> str:
    """Users and database, in statements that are harmless when run again (at each restart)."""

    def literal(text: str) -> str:  # token_urlsafe passwords hold no quote or backslash
        return "'" + text + "'"

    return "\n".join(
        [
            f"CREATE USER IF NOT EXISTS '{USER}'@'127.0.0.1' IDENTIFIED BY {literal(password)};",
            f"CREATE DATABASE IF NOT EXISTS {DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;",
            f"GRANT ALL PRIVILEGES ON {DATABASE}.* TO '{USER}'@'127.0.0.1';",
            f"CREATE USER IF NOT EXISTS '{ADMIN}'@'127.0.0.1' IDENTIFIED BY {literal(admin_password)};",
            f"GRANT ALL PRIVILEGES ON *.* TO '{ADMIN}'@'127.0.0.1' WITH GRANT OPTION;",
            "",
        ]
    )


def _install_db(installer: Path, data: Path, account: pwd.struct_passwd | None, tmp: Path) -> None:
    cmd = [
        str(installer),
        "--no-defaults",
        f"--datadir={data}",
        "--auth-root-authentication-method=socket",
        "--skip-test-db",
        "--skip-name-resolve",
    ]
    if account is not None:
        cmd.append(f"--user={account.pw_name}")
    run_checked(
        as_account(account, cmd),
        "mariadb-install-db of the test server",
        timeout=180,
        env={"TMPDIR": str(tmp)},
    )


def _server_command(
    server: Path, base: Path, socket_dir: Path, port: int, durability: dict[str, str]
) -> list[str]:
    settings = {
        "datadir": str(base / "data"),
        "port": str(port),
        "bind-address": "127.0.0.1",
        "socket": str(socket_dir / "mariadb.sock"),
        "pid-file": str(base / "mariadb.pid"),
        # Its own temporary files: the caller's TMPDIR may be one the server account cannot write.
        "tmpdir": str(base / "tmp"),
        "init-file": str(base / "init.sql"),
        "skip-name-resolve": "1",
        "max-connections": "200",
        "innodb-buffer-pool-size": "128M",
        **{k.replace("_", "-"): v for k, v in durability.items()},
    }
    return [str(server), "--no-defaults", *(f"--{key}={value}" for key, value in settings.items())]


def server_version(url: str) -> str:
    """Connects (raising until the server accepts) and returns e.g. '10.11.19-MariaDB-0+deb12u1'."""
    from urllib.parse import unquote, urlsplit

    import pymysql

    parts = urlsplit(url)
    conn = pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        connect_timeout=3,
    )
    try:
        cursor = conn.cursor()
        cursor.execute("SELECT VERSION()")
        row = cursor.fetchone()
        return str(row[0]) if row else "unknown"
    finally:
        conn.close()


def _url(user: str, password: str, host: str, port: int, database: str) -> str:
    return f"mariadb://{user}:{quote(password, safe='')}@{host}:{port}/{database}"


def _start(
    server: Path,
    base: Path,
    socket_dir: Path,
    log: Path,
    account: pwd.struct_passwd | None,
    admin_password: str,
    durability: dict[str, str],
) -> tuple[LocalServer, int, str]:
    """Starts the server on a free port; returns it with its port and version."""
    return start_on_free_port(
        lambda port: LocalServer(
            "mariadb",
            _server_command(server, base, socket_dir, port, durability),
            log_path=log,
            user=None if account is None else account.pw_name,
        ),
        lambda port: server_version(_url(ADMIN, admin_password, "127.0.0.1", port, "")),
        START_TIMEOUT,
        "Address already in use",
        _START_ATTEMPTS,
    )


def _settings_text(durability: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in durability.items())


# --- testcontainers -----------------------------------------------------------------------------


def _container(backend: str) -> MariadbProvisioned:
    from testcontainers.core.container import DockerContainer

    image = IMAGES["mariadb"]
    password, admin_password = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    container = (
        DockerContainer(image)
        .with_env("MARIADB_USER", USER)
        .with_env("MARIADB_PASSWORD", password)
        .with_env("MARIADB_DATABASE", DATABASE)
        .with_env("MARIADB_ROOT_PASSWORD", admin_password)
        .with_command("--innodb-flush-log-at-trx-commit=0 --character-set-server=utf8mb4")
        .with_exposed_ports(3306)
    )
    container.start()
    host, port = container.get_container_host_ip(), int(container.get_exposed_port(3306))
    url = _url(USER, password, host, port, DATABASE)
    admin_url = _url("root", admin_password, host, port, "")
    deadline = time.monotonic() + 120
    while True:
        try:
            server_version(url)
            break
        except Exception as e:
            if time.monotonic() > deadline:
                container.stop()
                raise ProvisioningFailed(
                    f"{backend}: {image} did not accept connections within 120 s: {e}"
                ) from e
            time.sleep(1)
    return MariadbProvisioned(
        backend, url, "testcontainers", server=f"{image}", stop=container.stop, admin_url=admin_url
    )


# --- the provisioner ----------------------------------------------------------------------------


class MariadbProvisioner(ServerProvisioner):
    backends = ("mariadb",)

    def install(self, backend: str) -> str:
        found = server_binaries()
        if found is None:
            apt_install(
                "mariadb-server",
                "mariadb: the MariaDB server binaries (mariadbd, mariadb-install-db) are missing and "
                "this system has no apt-get; install MariaDB with your package manager, or "
                f"{hints.pass_url('mariadb', MARIADB_URL)}",
            )
            found = server_binaries()
            if found is None:
                raise ProvisioningFailed(
                    "mariadb: apt-get installed mariadb-server but mariadbd or mariadb-install-db is "
                    "still not on the PATH or in /usr/sbin"
                )
        return f"{_binaries_version(found[0])} at {found[0]}"

    def local_process(self, backend: str, workdir: Path) -> MariadbProvisioned:
        return self._local(backend, workdir, SPEED_SETTINGS)

    def restartable_process(self, backend: str, workdir: Path) -> MariadbProvisioned:
        return self._local(backend, workdir, CRASH_SAFE_SETTINGS)

    def _local(self, backend: str, workdir: Path, durability: dict[str, str]) -> MariadbProvisioned:
        self.install(backend)
        found = server_binaries()
        assert found is not None  # install() raised otherwise
        server, installer = found
        account = server_account(
            SERVER_ACCOUNT,
            f"mariadb: MariaDB refuses to run as root and there is no '{SERVER_ACCOUNT}' account to "
            "run it as; installing Debian's mariadb-server package creates it, or run as an ordinary user",
        )
        base, removable = private_dir(workdir, account, "mariadb")
        # A Unix socket path must stay under ~100 bytes: a short private directory of its own.
        socket_dir, _ = private_dir(Path(tempfile.mkdtemp(prefix="lochkit-")), account, "m")
        password, admin_password = secrets.token_urlsafe(18), secrets.token_urlsafe(18)

        def remove() -> None:
            for path in (removable, socket_dir.parent):
                with contextlib.suppress(OSError):
                    shutil.rmtree(path)

        try:
            init = base / "init.sql"
            init.write_text(_init_sql(password, admin_password))
            init.chmod(0o600)
            if account is not None:
                import os

                os.chown(init, account.pw_uid, account.pw_gid)
            # InnoDB's temporary files go where TMPDIR says; the caller's (0700 and root's in CI)
            # is no place for the server account, so the server gets a directory of its own.
            tmp, _ = private_dir(base, account, "tmp")
            _install_db(installer, base / "data", account, tmp)
            process, port, version = _start(
                server, base, socket_dir, workdir / "mariadb.log", account, admin_password, durability
            )
        except BaseException:
            remove()
            raise
        admin_url = _url(ADMIN, admin_password, "127.0.0.1", port, "")

        def stop() -> None:
            process.stop()
            remove()

        return MariadbProvisioned(
            backend,
            _url(USER, password, "127.0.0.1", port, DATABASE),
            "local-process",
            server=f"MariaDB {version.replace('-MariaDB', '')}, local process from {server}, "
            f"{_settings_text(durability)}",
            stop=stop,
            admin_url=admin_url,
            control=RestartableServer(
                process, lambda: bool(server_version(admin_url)), "accepting connections again", START_TIMEOUT
            ),
        )

    def local_status(self, backend: str) -> LocalServerStatus:
        found = server_binaries()
        if found is None:
            need = requirements.apt_as_root(
                "mariadb-server", "install MariaDB yourself (mariadbd on the PATH)"
            )
            return LocalServerStatus(backend, None, (need,))
        return LocalServerStatus(backend, f"{_binaries_version(found[0])} at {found[0]}")

    def testcontainers(self, backend: str, workdir: Path) -> MariadbProvisioned:
        return _container(backend)


PROVISIONER = MariadbProvisioner()

__all__ = ["PROVISIONER", "MariadbProvisioned", "MariadbProvisioner", "server_binaries", "server_version"]
