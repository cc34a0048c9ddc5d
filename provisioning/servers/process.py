"""Shared machinery for local-process servers: cache directories, free ports, downloads through
Maven, starting a process with its log captured, waiting for readiness, and stopping reliably."""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from persist_spi import progress
from provisioning.base import ProvisioningFailed

_RUNNING: list[LocalServer] = []
#: Lines of an install command's stderr kept for its error message.
_TAIL_LINES = 200


def cache_path(*parts: str) -> Path:
    """Where downloaded servers live between runs: ``$LOCHKIT_CACHE`` or ``~/.cache/lochkit``."""
    root = Path(os.environ.get("LOCHKIT_CACHE") or Path.home() / ".cache" / "lochkit")
    return root.joinpath(*parts)


def cache_dir(*parts: str) -> Path:
    """:func:`cache_path`, created if missing."""
    path = cache_path(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def maven_fetched(dest: Path) -> bool:
    """Whether :func:`maven_fetch` completed into ``dest``."""
    return (dest / ".complete").exists()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_answers(port: int, host: str = "127.0.0.1") -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
        return True
    return False


def run_checked(
    cmd: Sequence[str],
    what: str,
    *,
    cwd: Path | None = None,
    timeout: float = 900,
    env: Mapping[str, str] | None = None,
) -> str:
    """Run an install step, reported as a progress step (its latest output line shows how far it
    got); on failure raise with the command's output tail and the step's name. Returns stdout."""
    with progress.step(what) as step:
        try:
            process = subprocess.Popen(
                list(cmd),
                cwd=cwd,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                env={**os.environ, **(env or {})},
            )
        except FileNotFoundError as e:
            raise ProvisioningFailed(f"{what}: '{cmd[0]}' is not installed ({e})") from e
        stdout: list[str] = []
        stderr: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        readers = [
            threading.Thread(target=_collect, args=(process.stdout, stdout.append, step), daemon=True),
            threading.Thread(target=_collect, args=(process.stderr, stderr.append, step), daemon=True),
        ]
        for reader in readers:
            reader.start()
        try:
            returncode = process.wait(timeout)
        except subprocess.TimeoutExpired as e:
            process.kill()
            process.wait()
            raise ProvisioningFailed(
                f"{what}: '{' '.join(cmd)}' did not finish within {timeout:.0f} s"
            ) from e
        finally:
            for reader in readers:
                reader.join(10)
        if returncode != 0:
            tail = ("".join(stdout) + "".join(stderr)).strip().splitlines()[-25:]
            raise ProvisioningFailed(
                f"{what} failed (exit {returncode}): {' '.join(cmd)}\n" + "\n".join(tail)
            )
        return "".join(stdout)


def _collect(stream: IO[str] | None, keep: Callable[[str], None], step: progress.Step) -> None:
    """Keeps every line of ``stream`` and shows the latest as the step's note."""
    if stream is None:
        return
    for line in stream:
        keep(line)
        if line.strip():
            step.note = line.strip()
    stream.close()


def maven_fetch(coordinates: Sequence[str], dest: Path, what: str, *, transitive: bool = True) -> Path:
    """Copy Maven Central artifacts (``group:artifact:version[:type[:classifier]]``) and, when
    ``transitive``, their runtime dependencies into ``dest``. Skipped when ``dest`` is complete."""
    marker = dest / ".complete"
    if maven_fetched(dest):
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    deps = []
    for coordinate in coordinates:
        group, artifact, version, *rest = coordinate.split(":")
        kind = f"<type>{rest[0]}</type>" if rest else ""
        classifier = f"<classifier>{rest[1]}</classifier>" if len(rest) > 1 else ""
        deps.append(
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version>{kind}{classifier}</dependency>"
        )
    pom = dest / "pom.xml"
    pom.write_text(
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>lochkit</groupId><artifactId>server-fetch</artifactId><version>1</version>"
        f"<packaging>pom</packaging><dependencies>{''.join(deps)}</dependencies></project>"
    )
    run_checked(
        [
            # Not quiet: each "Downloading ..." line becomes the progress note of this step.
            "mvn",
            "-B",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={dest / 'lib'}",
            "-DincludeScope=runtime",
            f"-DexcludeTransitive={'false' if transitive else 'true'}",
        ],
        what,
    )
    marker.write_text("ok\n")
    return dest


class LocalServer:
    """A server process we started: its log is kept, and it is stopped at exit if nobody else did."""

    def __init__(
        self,
        name: str,
        cmd: Sequence[str],
        *,
        log_path: Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        user: str | None = None,
    ) -> None:
        self.name = name
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        argv = list(cmd)
        if user is not None:
            argv = ["runuser", "-u", user, "--", *argv]
        self._launch = (argv, cwd, {**os.environ, **(env or {})})
        self._spawn()

    def _spawn(self) -> None:
        argv, cwd, env = self._launch
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (kept open for the process's lifetime)
        self.process = subprocess.Popen(
            argv, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        _RUNNING.append(self)

    def kill(self) -> None:
        """SIGKILL the whole process group at once (a crash: nothing is flushed or shut down)."""
        self.stop(grace=0, stop_signal=signal.SIGKILL)

    def respawn(self) -> None:
        """Start the same command again (same data directory and port) after :meth:`kill`."""
        if self.process.poll() is None:
            raise RuntimeError(f"{self.name} is still running")
        self._spawn()

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def wait_until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll ``ready`` until true, as a progress step; fail with the log tail if the process
        dies or time runs out."""
        with progress.step(f"{self.name}: waiting until {what}") as step:
            step.note = f"gives up after {timeout:.0f} s"
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise ProvisioningFailed(
                        f"{self.name} exited with code {self.process.returncode} before {what}; "
                        f"log {self.log_path}:\n{self.log_tail()}"
                    )
                with contextlib.suppress(Exception):
                    if ready():
                        return
                time.sleep(0.5)
            self.stop()
            raise ProvisioningFailed(
                f"{self.name} was not ready ({what}) within {timeout:.0f} s; log {self.log_path}:\n"
                f"{self.log_tail()}"
            )

    def stop(self, grace: float = 30, stop_signal: signal.Signals = signal.SIGTERM) -> None:
        """Signal the process group (``stop_signal``: e.g. SIGINT makes PostgreSQL disconnect its
        clients at once), wait ``grace`` seconds, then kill it."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, stop_signal)
            try:
                self.process.wait(max(grace, 10) if stop_signal is signal.SIGKILL else grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self._log.close()
        if self in _RUNNING:
            _RUNNING.remove(self)


@dataclass
class RestartableServer:
    """Kills a :class:`LocalServer` and starts it again, waiting with its readiness check."""

    server: LocalServer
    ready: Callable[[], bool]
    what: str
    start_timeout: float

    def kill(self) -> None:
        self.server.kill()

    def restart(self) -> float:
        started = time.monotonic()
        self.server.respawn()
        self.server.wait_until(self.ready, self.start_timeout, self.what)
        return time.monotonic() - started


@atexit.register
def _stop_leftovers() -> None:
    for server in list(_RUNNING):
        with contextlib.suppress(Exception):
            server.stop(grace=10)


# --- servers that refuse to run as root (PostgreSQL, MariaDB) ------------------------------------


def server_account(name: str, missing: str) -> pwd.struct_passwd | None:
    """The account to run a server as: ``name`` when we are root, else ourselves (None).
    ``missing`` is the error message when we are root and the account does not exist."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise ProvisioningFailed(missing) from None


def as_account(account: pwd.struct_passwd | None, cmd: list[str]) -> list[str]:
    return cmd if account is None else ["runuser", "-u", account.pw_name, "--", *cmd]


def private_dir(workdir: Path, account: pwd.struct_passwd | None, name: str) -> tuple[Path, Path]:
    """``workdir/name``, a directory the server account owns, and what to delete when the server
    stops. Its parents must be traversable by that account: the run's work directory is made so
    (it is ours, 0700 from mkdtemp); if an ancestor still blocks the way, a fresh directory in the
    temp dir is used."""
    base = _owned_subdir(workdir, account, name)
    if base is not None:
        return base, base
    fallback = Path(tempfile.mkdtemp(prefix=f"lochkit-{name}-"))
    base = _owned_subdir(fallback, account, name)
    if base is not None:
        return base, fallback
    shutil.rmtree(fallback, ignore_errors=True)
    who = account.pw_name if account is not None else "current"
    raise ProvisioningFailed(
        f"{name}: the '{who}' account cannot reach {workdir} or a new directory in "
        f"{tempfile.gettempdir()}; make the parent directories traversable (chmod o+x) or set TMPDIR"
    )


def _owned_subdir(parent: Path, account: pwd.struct_passwd | None, name: str) -> Path | None:
    """``parent/name``, owned by ``account`` and writable by it; None if it cannot be reached."""
    base = parent / name
    base.mkdir(parents=True, exist_ok=True)
    if account is None:
        return base
    parent.chmod(parent.stat().st_mode | 0o011)  # traversable, not listable
    os.chown(base, account.pw_uid, account.pw_gid)
    base.chmod(0o700)
    probe = subprocess.run(as_account(account, ["test", "-w", str(base)]), capture_output=True)
    if probe.returncode == 0:
        return base
    shutil.rmtree(base, ignore_errors=True)
    return None


def apt_install(package: str, no_apt: str) -> None:
    """``apt-get install PACKAGE`` (Debian's server packages); refreshes the package lists once if
    the first try fails. ``no_apt`` is the error message on a system without apt-get."""
    if shutil.which("apt-get") is None:
        raise ProvisioningFailed(no_apt)
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", package]
    what = f"installing Debian's {package} package"
    try:
        run_checked(install, what, env=env)
    except ProvisioningFailed:
        run_checked(["apt-get", "update", "-q"], "refreshing the apt package lists", env=env)
        run_checked(install, what, env=env)


def start_on_free_port(
    spawn: Callable[[int], LocalServer],
    version_at: Callable[[int], str],
    timeout: float,
    bind_error: str,
    attempts: int = 3,
) -> tuple[LocalServer, int, str]:
    """Start a server on a free port (``spawn(port)``) and wait until ``version_at(port)`` answers;
    returns the server, its port and that version. A free port can be taken by another process
    before the server binds it: when the log says ``bind_error``, it tries another port."""
    for attempt in range(1, attempts + 1):
        port = free_port()
        server = spawn(port)
        seen: dict[str, str] = {}

        def ready(port: int = port, seen: dict[str, str] = seen) -> bool:
            seen["version"] = version_at(port)
            return True

        try:
            server.wait_until(ready, timeout, f"accepting connections on 127.0.0.1:{port}")
        except ProvisioningFailed:
            server.stop()
            if attempt < attempts and bind_error in server.log_tail(20):
                continue
            raise
        return server, port, seen["version"]
    raise AssertionError("unreachable")
