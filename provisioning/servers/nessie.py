"""Nessie: a real Nessie server, from Maven Central as a local process or as the official image.

The server is Nessie's Quarkus runner jar (``nessie-quarkus:VERSION:jar:runner``, about 245 MB,
cached under ``~/.cache/lochkit/nessie/VERSION``). It needs Java 21 or newer, found at run time:
``LOCHKIT_NESSIE_JAVA`` (a java binary or a JDK home), then ``JAVA_HOME``, then ``java`` on PATH,
then the JDKs installed beside the default one (e.g. ``/usr/lib/jvm/*``). It listens on loopback
with free ports and the IN_MEMORY version store (``LOCHKIT_NESSIE_STORE=ROCKSDB``, or a load
command's ``--nessie-store ROCKSDB``, for RocksDB in the run's working directory). It is ready when
``GET /api/v2/config`` answers. On Java 25+ it starts from an AOT cache that ``install`` writes
(:mod:`provisioning.servers.jvm_startup`); ``LOCHKIT_NESSIE_SERVER_JVM_OPTIONS`` adds JVM options.

:meth:`NessieProvisioner.shared` starts it instead on a database lochkit provisioned (JDBC2 on
PostgreSQL, ROCKSDB on a directory, CASSANDRA2, DYNAMODB2, MONGODB2; the properties are in
:mod:`provisioning.servers.nessie_stores`), for the shared-database test.

The provisioned URL is the REST API v2 base, e.g. ``http://127.0.0.1:PORT/api/v2``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from provisioning.base import (
    LocalServerStatus,
    Provisioned,
    ProvisioningFailed,
    Requirement,
    ServerProvisioner,
)
from provisioning.servers import jvm_startup, requirements, versions
from provisioning.servers.nessie_stores import shared_store
from provisioning.servers.process import LocalServer, cache_dir, cache_path, free_port, run_checked

COORDINATES: Final = versions.LOCAL["nessie"]
VERSION: Final = COORDINATES.split(":")[2]
JAR_NAME: Final = f"nessie-quarkus-{VERSION}-runner.jar"
MIN_JAVA: Final = 21
STORE_TYPES: Final = ("IN_MEMORY", "ROCKSDB")
#: The store type to start Nessie with (``--nessie-store`` of the load commands sets it for one start).
STORE_ENV: Final = "LOCHKIT_NESSIE_STORE"
CONTAINER_PORT: Final = 19120
_READY_TIMEOUT = 180.0


class NessieProvisioner(ServerProvisioner):
    backends = ("nessie",)

    def install(self, backend: str) -> str:
        jar = self._jar()
        return f"Nessie {VERSION} server in {jar}{_startup_cache(jar)}"

    def local_status(self, backend: str) -> LocalServerStatus:
        jar = cache_path("nessie", VERSION) / JAR_NAME
        installed = f"Nessie {VERSION} server in {jar}" if jar.exists() else None
        try:
            java = find_java(MIN_JAVA)
            found: str | None = f"Java {java_version(java)} at {java}"
        except ProvisioningFailed:
            found = None
        needs = [
            Requirement(f"Java {MIN_JAVA} or newer", found, "install a JDK 21+ or set LOCHKIT_NESSIE_JAVA")
        ]
        if installed is None:
            needs.append(requirements.maven())
        return LocalServerStatus(backend, installed, tuple(needs))

    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        store = store_type()
        props = {"nessie.version.store.type": store}
        if store == "ROCKSDB":
            props["nessie.version.store.persist.rocks.database-path"] = str(workdir / "nessie-rocksdb")
        return start_server(workdir, props)

    def shared(self, backend: str, lochkit_url: str, workdir: Path) -> Provisioned:
        """Nessie on the database a lochkit ``backend`` URL names (see nessie_stores): the same
        tables, keyspace or directory, with Nessie's caches off."""
        shared = shared_store(backend, lochkit_url)
        return start_server(workdir, shared.properties, shared.environment())

    def testcontainers(self, backend: str, workdir: Path) -> Provisioned:
        """Not exercised on the machine this was written on (no Docker engine there)."""
        from testcontainers.core.container import DockerContainer

        if store_type() != "IN_MEMORY":
            raise ProvisioningFailed(
                f"nessie: the container recipe runs the IN_MEMORY store only, not {store_type()}; "
                "use --provision local for it"
            )

        image = versions.IMAGES["nessie"]
        container = (
            DockerContainer(image)
            .with_exposed_ports(CONTAINER_PORT)
            .with_env("NESSIE_VERSION_STORE_TYPE", "IN_MEMORY")
            .with_env("QUARKUS_OTEL_SDK_DISABLED", "true")
        )
        container.start()
        try:
            host = container.get_container_host_ip()
            url = f"http://{host}:{container.get_exposed_port(CONTAINER_PORT)}/api/v2"
            deadline = time.monotonic() + _READY_TIMEOUT
            while not _answers_quietly(url):
                if time.monotonic() > deadline:
                    raise ProvisioningFailed(f"nessie: {image} did not answer {url}/config in time")
                time.sleep(0.5)
        except BaseException:
            container.stop()
            raise
        return Provisioned("nessie", url, "testcontainers", server=f"Nessie ({image})", stop=container.stop)

    def _jar(self) -> Path:
        dest = cache_dir("nessie", VERSION)
        jar = dest / JAR_NAME
        if jar.exists():
            return jar
        group, artifact, version, kind, classifier = COORDINATES.split(":")
        run_checked(
            [
                "mvn",
                "-q",
                "-B",
                "dependency:copy",
                f"-Dartifact={group}:{artifact}:{version}:{kind}:{classifier}",
                f"-DoutputDirectory={dest}",
            ],
            f"downloading the Nessie {VERSION} server (about 245 MB) from Maven Central",
            cwd=dest,
        )
        if not jar.exists():
            raise ProvisioningFailed(f"nessie: Maven finished but {jar} is missing")
        return jar


def _startup_cache(jar: Path) -> str:
    """Writes the AOT cache every start maps (Java 25+), with one training start, when missing;
    says where it is (or why there is none) for the install line."""
    java = find_java(MIN_JAVA)
    major = java_version(java)
    if major < jvm_startup.AOT_CACHE_JAVA:
        return f" (no start-up cache: Java {major}, the cache needs {jvm_startup.AOT_CACHE_JAVA}+)"
    cache = jvm_startup.cache_file("nessie", VERSION, java, jar)
    if not cache.is_file():
        partial = jvm_startup.training_file(cache)
        with tempfile.TemporaryDirectory(prefix="lochkit-nessie-training-") as workdir:
            server = start_server(
                Path(workdir), {"nessie.version.store.type": "IN_MEMORY"}, aot_output=partial
            )
            server.stop()
        if not jvm_startup.publish(partial, cache):
            return " (no start-up cache: the training start wrote none; its log was in a temporary directory)"
    return f", start-up cache {cache}"


def start_server(
    workdir: Path,
    store_properties: Mapping[str, str],
    env: Mapping[str, str] | None = None,
    *,
    aot_output: Path | None = None,
) -> Provisioned:
    """Start the Nessie server jar on loopback with free ports and ``store_properties`` (at least
    ``nessie.version.store.type``); ready when ``GET /api/v2/config`` answers. ``env`` carries
    properties that must not show in a process listing (Quarkus reads them from the environment).
    The log is ``workdir/nessie.log`` (appended to by every start in that directory).
    ``aot_output``: a training start, which writes the AOT cache there as it stops (and may take
    minutes to stop); otherwise the start uses the cache when there is one."""
    java = find_java(MIN_JAVA)
    java_major = java_version(java)
    jar = PROVISIONER._jar()
    startup = (
        jvm_startup.training_options(aot_output)
        if aot_output is not None
        else jvm_startup.cache_options(jvm_startup.cache_file("nessie", VERSION, java, jar), java_major)
    )
    port, management = free_port(), free_port()
    store = store_properties["nessie.version.store.type"]
    props = {
        "quarkus.http.host": "127.0.0.1",
        "quarkus.http.port": str(port),
        "quarkus.management.host": "127.0.0.1",
        "quarkus.management.port": str(management),
        "quarkus.otel.sdk.disabled": "true",
        # Access logs on every request would fill the log and cost the server time.
        "quarkus.http.access-log.enabled": "false",
        **store_properties,
    }
    server = LocalServer(
        f"Nessie {VERSION}",
        [
            java,
            "-Xmx1g",
            "-XX:+UseSerialGC",  # two cores shared with the client: less GC thread contention
            *startup,
            *jvm_startup.java_options_from_env("LOCHKIT_NESSIE_SERVER_JVM_OPTIONS"),
            *(f"-D{k}={v}" for k, v in props.items()),
            "-jar",
            str(jar),
        ],
        log_path=workdir / "nessie.log",
        cwd=workdir,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/api/v2"
    server.wait_until(lambda: _answers(url), _READY_TIMEOUT, "GET /api/v2/config answering")
    return Provisioned(
        "nessie",
        url,
        "local-process",
        server=f"Nessie {VERSION} ({store}, Java {java_major})",
        options={"store": store},
        stop=server.stop
        if aot_output is None
        else functools.partial(server.stop, jvm_startup.TRAINING_STOP_GRACE_S),
    )


def store_type() -> str:
    """The version store type to start Nessie with: LOCHKIT_NESSIE_STORE, IN_MEMORY by default."""
    store = os.environ.get(STORE_ENV, "IN_MEMORY").upper()
    if store not in STORE_TYPES:
        raise ProvisioningFailed(
            f"nessie: {STORE_ENV}={store} is not a version store type this launcher knows; use one "
            f"of {', '.join(STORE_TYPES)}"
        )
    return store


def java_version(java: str) -> int:
    """The feature version (17, 21, 25...) of a java binary; 0 when it cannot be run."""
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    match = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr + done.stdout)
    if match is None:
        return 0
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def _java_in(home_or_binary: str) -> str:
    path = Path(home_or_binary)
    return str(path / "bin" / "java") if path.is_dir() else str(path)


def java_candidates() -> list[str]:
    """Java binaries to try, in order of preference."""
    found: list[str] = []
    for env in ("LOCHKIT_NESSIE_JAVA", "JAVA_HOME"):
        if os.environ.get(env):
            found.append(_java_in(os.environ[env]))
    on_path = shutil.which("java")
    if on_path:
        found.append(on_path)
        # The JDKs installed beside the default one (Debian's /usr/lib/jvm, or any such directory).
        jvm_root = Path(os.path.realpath(on_path)).parents[2]
        if jvm_root.is_dir():
            found += sorted(
                str(p / "bin" / "java") for p in jvm_root.iterdir() if (p / "bin" / "java").exists()
            )
    return list(dict.fromkeys(found))


def find_java(minimum: int) -> str:
    """The first Java of at least ``minimum``, or a clear error saying what is needed."""
    tried = []
    for candidate in java_candidates():
        version = java_version(candidate)
        tried.append(f"{candidate} ({version or 'not runnable'})")
        if version >= minimum:
            return candidate
    raise ProvisioningFailed(
        f"nessie: Nessie {VERSION} needs Java {minimum} or newer; found "
        f"{', '.join(tried) or 'no java at all'}. Install one (e.g. apt-get install "
        f"openjdk-{minimum}-jre-headless) and point lochkit at it with "
        "LOCHKIT_NESSIE_JAVA=/path/to/jdk (or JAVA_HOME)"
    )


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/config", timeout=5) as response:
            return bool(json.loads(response.read()).get("defaultBranch"))
    except urllib.error.HTTPError as e:
        # With authentication on, every path answers 401 to a request without a token: it is up.
        if e.code == 401:
            return True
        raise


def _answers_quietly(url: str) -> bool:
    try:
        return _answers(url)
    except Exception:  # not up yet: refused, reset, 5xx while starting
        return False


PROVISIONER = NessieProvisioner()
