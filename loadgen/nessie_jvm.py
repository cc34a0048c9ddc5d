"""Nessie's side of the side-by-side benchmarks: build the Java program in ``loadgen/nessie_bench``
with Maven (against Nessie's published storage jars) and run it.

Two ways to run it (see the program's ``Main.java``):

- :class:`NessieServe`, a JVM that stays up and answers ``measure`` commands, so rounds can
  alternate between Nessie and lochkit while the JIT-compiled code stays warm;
- :func:`run_writers`, N writers on one branch for a duration (threads in one JVM; several JVMs
  join one run with ``start_at_millis``), returning per-writer figures. The asymmetric experiment
  (``lochkit experiment asymmetric``) can call it for its Nessie column.

The first build downloads Nessie's jars and their dependencies from Maven Central into the local
Maven repository (about 40 s here); later builds run offline and are skipped when nothing changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urlsplit

from persist_spi.errors import LochkitError

PROJECT: Final = Path(__file__).resolve().parent / "nessie_bench"
MAIN_CLASS: Final = "lochkit.nessiebench.Main"
#: Backends Nessie publishes a storage module for (or, for postgres, that the program's own
#: JdbcPersist stands in for). The others have no Nessie column.
NESSIE_BACKENDS: Final = ("inmemory", "rocksdb", "postgres", "mongodb")
#: Why a backend has no Nessie side, for the printed table.
NOT_PUBLISHED: Final = {
    "cassandra": "Nessie publishes no Cassandra storage module",
    "dynamodb": "Nessie publishes no DynamoDB storage module",
    "mariadb": "Nessie publishes no JDBC2 storage module, and the program's stand-in for it speaks "
    "PostgreSQL only",
    "bigtable": "Nessie publishes no Bigtable storage module: its Bigtable store ships only inside "
    "the Nessie server, and the program has no stand-in for it",
}
#: Seconds a command (a measured round, a set-up) may take before the JVM is given up on.
COMMAND_TIMEOUT_S: Final = 600.0


class NessieSideError(LochkitError):
    """The Java side could not be built or run; the message says why and what to do."""


@dataclass(frozen=True)
class Address:
    """What the Java program needs to reach one database: the value of NESSIE_BENCH_URL."""

    backend: str
    url: str | None


def nessie_address(backend: str, lochkit_url: str | None, scratch: Path) -> Address:
    """The Java program's address for the database a lochkit URL names. Embedded RocksDB gets its
    own directory under ``scratch`` (one process per RocksDB directory)."""
    if backend not in NESSIE_BACKENDS:
        raise NessieSideError(f"{backend}: {NOT_PUBLISHED.get(backend, 'no Nessie storage module')}")
    if backend == "inmemory":
        return Address(backend, None)
    if backend == "rocksdb":
        path = scratch / "nessie-rocksdb"
        path.mkdir(parents=True, exist_ok=True)
        return Address(backend, str(path))
    if not lochkit_url:
        raise NessieSideError(f"{backend}: the Nessie side needs the database's URL")
    if backend == "postgres":
        return Address(backend, jdbc_url(lochkit_url))
    return Address(backend, mongo_url(lochkit_url))


def jdbc_url(url: str) -> str:
    """``postgresql://user:password@host:port/db?...`` as a JDBC URL (lochkit's own options and
    unknown libpq options dropped; sslmode kept)."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise NessieSideError(f"the Nessie side needs a postgresql:// URL, not {parts.scheme}://")
    query = _credentials(parts)
    for key, value in parse_qsl(parts.query):
        if key == "sslmode":
            query[key] = value
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    database = parts.path.lstrip("/") or "postgres"
    return f"jdbc:postgresql://{host}{port}/{database}?{urlencode(query)}"


def mariadb_jdbc_url(url: str) -> str:
    """``mariadb://user:password@host:port/db?...`` as a JDBC URL for MariaDB's driver (lochkit's
    own options dropped). The user and password stay percent-encoded: the full scan decodes them
    itself, because MariaDB's driver takes URL options verbatim."""
    parts = urlsplit(url)
    if parts.scheme not in ("mariadb", "mysql"):
        raise NessieSideError(f"the Nessie side needs a mariadb:// URL, not {parts.scheme}://")
    query = _credentials(parts)
    host = parts.hostname or "localhost"
    database = parts.path.lstrip("/")
    if not database:
        raise NessieSideError("the Nessie side needs the MariaDB database in the URL's path")
    return f"jdbc:mariadb://{host}:{parts.port or 3306}/{database}?{urlencode(query)}"


def _credentials(parts: SplitResult) -> dict[str, str]:
    """A URL's user and password as JDBC options (decoded here, encoded again in the JDBC URL)."""
    query: dict[str, str] = {}
    if parts.username:
        query["user"] = unquote(parts.username)
    if parts.password:
        query["password"] = unquote(parts.password)
    return query


def mongo_url(url: str) -> str:
    """A lochkit MongoDB URL without lochkit's own query options (the driver rejects them)."""
    base, _, query = url.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query) if k not in ("database", "collection_prefix", "layout")]
    return f"{base}?{urlencode(kept)}" if kept else base


# --- building ------------------------------------------------------------------------------------


def build(project: Path = PROJECT) -> str:
    """Compile the Java program (unless nothing changed since the last build) and return its
    classpath."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise NessieSideError(
            "Maven (mvn) is not on PATH; it builds Nessie's side of the comparison. Install it "
            "(e.g. apt-get install maven) or leave out --compare-nessie"
        )
    if shutil.which("java") is None:
        raise NessieSideError("java is not on PATH; Nessie's side needs Java 17 or newer")
    target = project / "target"
    classpath_file = target / "classpath.txt"
    if not _up_to_date(project, classpath_file):
        result = subprocess.run(
            [mvn, "-B", "-q", "-f", str(project / "pom.xml"), "compile", "dependency:build-classpath"],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            # Maven 3.8 prints stray colour-reset codes even in batch mode.
            output = (result.stdout + result.stderr).replace("\x1b[0m", "").strip()
            raise NessieSideError(
                f"building {project} with Maven failed (exit code {result.returncode}); the first "
                f"build needs Maven Central. Maven said:\n{output[-3000:]}"
            )
    return f"{target / 'classes'}{os.pathsep}{classpath_file.read_text().strip()}"


def _up_to_date(project: Path, classpath_file: Path) -> bool:
    if not classpath_file.exists():
        return False
    built = classpath_file.stat().st_mtime
    sources = [project / "pom.xml", *(project / "src").rglob("*.java")]
    return all(s.stat().st_mtime <= built for s in sources)


#: JVM options: a bounded heap, as a server would have (the in-memory store holds every commit).
#: ``LOCHKIT_NESSIE_JAVA_OPTS`` replaces them.
DEFAULT_JAVA_OPTS: Final = ("-Xmx3g",)


def _command(classpath: str, mode: str, address: Address, options: Sequence[str]) -> list[str]:
    java = shutil.which("java") or "java"
    given = os.environ.get("LOCHKIT_NESSIE_JAVA_OPTS")
    jvm = given.split() if given is not None else list(DEFAULT_JAVA_OPTS)
    return [java, *jvm, "-cp", classpath, MAIN_CLASS, mode, "--backend", address.backend, *options]


def _environment(address: Address) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NESSIE_BENCH_URL", None)
    if address.url is not None:
        env["NESSIE_BENCH_URL"] = address.url
    return env


# --- serve mode ----------------------------------------------------------------------------------


class NessieServe:
    """A running ``serve`` JVM; ask it with :meth:`ask`, stop it with :meth:`close`."""

    def __init__(self, classpath: str, address: Address, repository: str) -> None:
        self._process = subprocess.Popen(
            _command(classpath, "serve", address, ["--repository", repository]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_environment(address),
        )
        self._stderr: list[str] = []
        threading.Thread(target=self._drain, args=(self._process.stderr,), daemon=True).start()
        self._read("starting")

    def _drain(self, stream: IO[str] | None) -> None:
        if stream is not None:
            for line in stream:
                self._stderr.append(line.rstrip())
                del self._stderr[:-200]

    def _read(self, during: str) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = _readline(self._process.stdout, COMMAND_TIMEOUT_S)
        if not line:
            self._process.wait(timeout=10)
            raise NessieSideError(
                f"Nessie's side stopped while {during} (exit code {self._process.returncode}): "
                f"{java_failure(self._stderr)}"
            )
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise NessieSideError(f"Nessie's side failed while {during}: {answer['error']}")
        return answer

    def ask(self, command: str) -> dict[str, Any]:
        assert self._process.stdin is not None
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()
        return self._read(command)

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                assert self._process.stdin is not None
                self._process.stdin.write("quit\n")
                self._process.stdin.close()
                self._process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()


def java_failure(stderr: Sequence[str]) -> str:
    """What went wrong, from a JVM's stderr: its exception lines (not the stack frames)."""
    lines = [line.strip() for line in stderr if line.strip() and not line.strip().startswith("at ")]
    causes = [line for line in lines if "Exception" in line or "Error" in line]
    return (causes[0] if causes else lines[-1] if lines else "no output")[:600]


def _readline(stream: IO[str], timeout_s: float) -> str:
    """One line, or "" when the stream ends or nothing arrives within ``timeout_s``."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return box[0] if box else ""


# --- writers mode --------------------------------------------------------------------------------


def run_writers(
    classpath: str,
    address: Address,
    *,
    branch: str,
    puts: Sequence[int],
    seconds: float,
    names: Sequence[str] | None = None,
    warmup_seconds: float = 0.0,
    shape: str = "new-tables",
    cache: bool = True,
    repository: str,
    start_at_millis: int | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Writers (threads, one per entry of ``puts``) commit to ``branch`` through Nessie's own
    version store for ``seconds`` after ``warmup_seconds``; the per-writer figures as the program
    prints them (writer, puts_per_commit, commits, commits_per_s, share, attempts_mean/p99/max,
    timeouts, conflicts, errors, p50/p99/max_ms, first_attempt_p50/p99_ms, retry_attempts,
    retry_p50/p99_ms)."""
    options = [
        "--repository",
        repository,
        "--branch",
        branch,
        "--writers",
        ",".join(str(p) for p in puts),
        "--seconds",
        str(seconds),
        "--warmup",
        str(warmup_seconds),
        "--shape",
        shape,
        "--cache",
        "on" if cache else "off",
    ]
    if names is not None:
        options += ["--names", ",".join(names)]
    if start_at_millis is not None:
        options += ["--start-at-millis", str(start_at_millis)]
    env = _environment(address)
    env.update(extra_env or {})
    return _json_result(
        _command(classpath, "writers", address, options),
        env,
        seconds + warmup_seconds + COMMAND_TIMEOUT_S,
        "Nessie's writers",
    )


def _json_result(
    command: Sequence[str], env: Mapping[str, str], timeout_s: float, what: str
) -> dict[str, Any]:
    """Run a JVM to its end and return the last JSON line it printed; a clear error otherwise."""
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=timeout_s)
    if result.returncode != 0:
        raise NessieSideError(
            f"{what} failed (exit code {result.returncode}): {java_failure(result.stderr.splitlines())}"
        )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise NessieSideError(f"{what} printed no result:\n{result.stdout[-2000:]}")
    parsed: dict[str, Any] = json.loads(lines[-1])
    return parsed


# --- full scan -----------------------------------------------------------------------------------

FULL_SCAN_CLASS: Final = "lochkit.nessiebench.FullScan"


def full_scan(classpath: str, address: Address, repository: str = "") -> dict[str, Any]:
    """Read every object and reference of ``repository`` with Nessie's own deserialisation (the
    program's ``FullScan``, read only; the database must not be open in another process for
    RocksDB). Returns its figures: ``objects`` per type, ``objects_total``, ``references``,
    ``references_deleted``, ``history_entries``. Raises when Nessie cannot read something."""
    java = shutil.which("java") or "java"
    command = [
        java,
        "-cp",
        classpath,
        FULL_SCAN_CLASS,
        "--backend",
        address.backend,
        "--repository",
        repository,
    ]
    what = f"Nessie's full scan of {address.backend}"
    return _json_result(command, _environment(address), COMMAND_TIMEOUT_S, what)
