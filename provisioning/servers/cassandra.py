"""Apache Cassandra as a local JVM process (jars from Maven Central), and Cassandra/ScyllaDB containers.

The local node is a throw-away, single-node test server: loopback only, free ports, a private data
directory removed on stop, PasswordAuthenticator + CassandraAuthorizer on (so credential and
permission errors can be tested against it), and settings that trade durability and production
safety for a fast start and low memory. ScyllaDB ships no JVM jars, so it is only available through
testcontainers (or an external address).
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from persist_spi import hints
from provisioning.base import LocalServerStatus, Provisioned, ProvisioningFailed, ServerProvisioner
from provisioning.servers import requirements, versions
from provisioning.servers.process import (
    LocalServer,
    RestartableServer,
    cache_dir,
    cache_path,
    free_port,
    maven_fetch,
    port_answers,
)

#: Maven coordinates of the server, e.g. ``org.apache.cassandra:cassandra-all:5.0.9``.
COORDINATES: Final = versions.LOCAL["cassandra"]
VERSION: Final = COORDINATES.rsplit(":", 1)[-1]
#: The superuser CassandraRoleManager creates on a fresh node with PasswordAuthenticator.
SUPERUSER: Final = ("cassandra", "cassandra")
#: Options of every server provisioned here. The server holds nobody's data, so the adapter may
#: create its keyspace in either layout (in Nessie's layout it otherwise requires one to exist).
#: The URLs name no keyspace: each layout takes its default (``lochkit``, or Nessie's ``nessie``).
OPTIONS: Final = {"create_keyspace": "true"}
HEAP: Final = "1G"
_log = logging.getLogger(__name__)
START_TIMEOUT_S: Final = 240.0

#: Java 17 module flags, as listed in Cassandra's own ``conf/jvm17-server.options`` (5.0): the
#: server reaches into JDK internals (off-heap memory, attach, reflection on collections).
JVM17_MODULE_FLAGS: Final = (
    "-Djdk.attach.allowAttachSelf=true",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Dio.netty.allocator.maxOrder=11",
)

#: The rest of the JVM options (from ``jvm-server.options`` where they matter, plus test-node
#: start-up shortcuts that are safe only for a single node that never joins a cluster).
JVM_FLAGS: Final = (
    "-XX:+UseG1GC",
    "-XX:+ParallelRefProcEnabled",
    "-XX:MaxGCPauseMillis=300",
    "-Xss256k",
    "-XX:+PerfDisableSharedMem",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.net.preferIPv4Stack=true",
    "-Dcassandra-foreground=yes",
    # A lone seed has no peers to wait for; these skip the gossip/ring settling sleeps.
    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
    "-Dcassandra.ring_delay_ms=1000",
    # Create the default superuser at once instead of ~10 s after start.
    "-Dcassandra.superuser_setup_delay_ms=0",
)

_YAML: Final = """\
# lochkit test node: single node on loopback; fast start, low memory, nothing kept.
cluster_name: lochkit-test
num_tokens: 1
initial_token: 0
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:{storage_port}"
listen_address: 127.0.0.1
rpc_address: 127.0.0.1
storage_port: {storage_port}
native_transport_port: {native_port}
start_native_transport: true
data_file_directories: [{data}/data]
commitlog_directory: {data}/commitlog
saved_caches_directory: {data}/saved_caches
hints_directory: {data}/hints
cdc_raw_directory: {data}/cdc_raw
authenticator: PasswordAuthenticator
authorizer: CassandraAuthorizer
role_manager: CassandraRoleManager
# The data dir is deleted on stop: syncing the commit log often or snapshotting buys nothing.
commitlog_sync: periodic
commitlog_sync_period: 10000ms
auto_snapshot: false
snapshot_before_compaction: false
snapshot_on_duplicate_row_detection: false
# 1 GiB heap shared with other servers on 2 cores: small memtables and few threads.
memtable_heap_space: 128MiB
memtable_offheap_space: 128MiB
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 2
concurrent_materialized_view_writes: 2
concurrent_compactors: 1
key_cache_size: 16MiB
# Single node: nothing to hint, no peers to rank.
hinted_handoff_enabled: false
dynamic_snitch: false
# Generous CAS contention timeout: on 2 shared cores racing LWTs (the concurrency suite) would
# otherwise time out and surface as "unknown result" errors that say nothing about the adapter.
cas_contention_timeout: 10000ms
write_request_timeout: 5000ms
read_request_timeout: 5000ms
range_request_timeout: 10000ms
request_timeout: 10000ms
# Auth caches: fewer system_auth reads per request; tests create their roles before first use.
roles_validity: 10000ms
permissions_validity: 10000ms
credentials_validity: 10000ms
"""

_LOGBACK: Final = """\
<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
"""


@dataclass(frozen=True)
class LocalCassandra:
    """A started local node: where it listens and how to stop it."""

    server: LocalServer
    data_dir: Path
    native_port: int
    url: str

    def stop(self) -> None:
        try:
            # The data is thrown away, so a drain on SIGTERM only costs time: allow it briefly.
            self.server.stop(grace=15)
        finally:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def install() -> Path:
    """The server's jars (and runtime dependencies) in the user's cache; downloaded once."""
    dest = cache_dir("cassandra", VERSION)
    maven_fetch([COORDINATES], dest, f"download Apache Cassandra {VERSION} from Maven Central")
    return dest / "lib"


def java_command(lib: Path, data_dir: Path, *, heap: str = HEAP) -> list[str]:
    java = shutil.which("java")
    if java is None:
        raise ProvisioningFailed("Apache Cassandra needs Java 17 (or newer) on PATH; install a JDK")
    jamm = sorted(lib.glob("jamm-*.jar"))
    # Cassandra measures memtable sizes with jamm; as an agent it is exact, otherwise it guesses.
    agent = [f"-javaagent:{jamm[0]}"] if jamm else []
    return [
        java,
        *JVM17_MODULE_FLAGS,
        *JVM_FLAGS,
        *agent,
        f"-Xms{heap}",
        f"-Xmx{heap}",
        f"-Dcassandra.config={(data_dir / 'cassandra.yaml').as_uri()}",
        f"-Dcassandra.storagedir={data_dir}",
        f"-Dcassandra.logdir={data_dir / 'logs'}",
        f"-Dlogback.configurationFile={(data_dir / 'logback.xml').as_uri()}",
        "-cp",
        str(lib / "*"),
        "org.apache.cassandra.service.CassandraDaemon",
    ]


#: For a node that fault injection kills and restarts. In periodic mode a write is acknowledged
#: before its commit log section is closed with a sync marker, and replay stops at the last
#: marker: a SIGKILL loses what was acknowledged since (measured: an LWT insert killed within
#: milliseconds was gone after the restart). Batch mode syncs before acknowledging.
CRASH_SAFE_COMMITLOG: Final = "commitlog_sync: batch\n"


def write_config(data_dir: Path, storage_port: int, native_port: int, *, crash_safe: bool = False) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    text = _YAML.format(storage_port=storage_port, native_port=native_port, data=data_dir)
    if crash_safe:
        periodic = "commitlog_sync: periodic\ncommitlog_sync_period: 10000ms\n"
        text = text.replace(periodic, CRASH_SAFE_COMMITLOG)
    (data_dir / "cassandra.yaml").write_text(text)
    (data_dir / "logback.xml").write_text(_LOGBACK)


def start_local(
    workdir: Path, *, timeout: float = START_TIMEOUT_S, crash_safe: bool = False
) -> LocalCassandra:
    """Install if needed, start one node on loopback and wait until CQL answers with credentials."""
    lib = install()
    native_port, storage_port = free_port(), free_port()
    data_dir = workdir / f"cassandra-{native_port}"
    write_config(data_dir, storage_port, native_port, crash_safe=crash_safe)
    server = LocalServer(
        f"Apache Cassandra {VERSION}",
        java_command(lib, data_dir),
        # Outside the data directory, which stop() deletes: the log must survive a failed start.
        log_path=workdir / f"cassandra-{native_port}.log",
        cwd=data_dir,
    )
    user, password = SUPERUSER
    node = LocalCassandra(
        server, data_dir, native_port, f"cassandra://{user}:{password}@127.0.0.1:{native_port}"
    )
    started = time.monotonic()
    try:
        server.wait_until(lambda: port_answers(native_port), timeout, f"the CQL port {native_port} answers")
        remaining = max(10.0, timeout - (time.monotonic() - started))
        server.wait_until(lambda: cql_answers(native_port), remaining, "a CQL query as the superuser works")
    except BaseException:
        node.stop()
        raise
    _log.info("%s ready on port %d after %.1f s", server.name, native_port, time.monotonic() - started)
    return node


def cql_answers(port: int, credentials: tuple[str, str] = SUPERUSER) -> bool:
    """True when the node runs a query for the superuser (the role is created shortly after start)."""
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cluster = Cluster(
        ["127.0.0.1"],
        port=port,
        auth_provider=PlainTextAuthProvider(*credentials),
        connect_timeout=5,
        control_connection_timeout=5,
    )
    try:
        session = cluster.connect()
        return session.execute("SELECT release_version FROM system.local").one() is not None
    finally:
        cluster.shutdown()


class CassandraProvisioner(ServerProvisioner):
    backends = ("cassandra", "scylladb")

    def install(self, backend: str) -> str:
        if backend == "scylladb":
            raise ProvisioningFailed(f"scylladb: {_no_local_scylla()}")
        return f"Apache Cassandra {VERSION} in {install()}"

    def local_status(self, backend: str) -> LocalServerStatus:
        if backend == "scylladb":
            return LocalServerStatus(backend, None, impossible=_no_local_scylla())
        return requirements.maven_jars_status(
            backend, f"Apache Cassandra {VERSION}", cache_path("cassandra", VERSION)
        )

    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        if backend == "scylladb":
            raise ProvisioningFailed(f"scylladb: {_no_local_scylla()}")
        node = start_local(workdir)
        return Provisioned(
            backend,
            node.url,
            "local-process",
            server=f"Apache Cassandra {VERSION}",
            options=dict(OPTIONS),
            stop=node.stop,
        )

    def restartable_process(self, backend: str, workdir: Path) -> Provisioned:
        """Commit log in batch mode (see :data:`CRASH_SAFE_COMMITLOG`), data kept between
        restarts."""
        if backend == "scylladb":
            raise ProvisioningFailed(f"scylladb: {_no_local_scylla()}")
        node = start_local(workdir, crash_safe=True)
        control = RestartableServer(
            node.server, lambda: cql_answers(node.native_port), "a CQL query works again", START_TIMEOUT_S
        )
        return Provisioned(
            backend,
            node.url,
            "local-process",
            server=f"Apache Cassandra {VERSION}",
            options=dict(OPTIONS),
            stop=node.stop,
            control=control,
        )

    def testcontainers(self, backend: str, workdir: Path) -> Provisioned:
        """Unverified on the project's machines (no Docker engine there)."""
        container = _scylla_container() if backend == "scylladb" else _cassandra_container()
        container.start()
        host = container.get_container_host_ip()
        port = int(container.get_exposed_port(9042))
        scheme = "scylladb" if backend == "scylladb" else "cassandra"
        return Provisioned(
            backend,
            f"{scheme}://{host}:{port}?local_dc=datacenter1",
            "testcontainers",
            server=versions.IMAGES[backend],
            options=dict(OPTIONS),
            stop=lambda: _stop_container(container),
        )


def _no_local_scylla() -> str:
    return (
        "ScyllaDB cannot be installed from the package registries lochkit reaches. With a "
        f"Docker engine, {hints.use_method('scylladb', 'testcontainers')} (image "
        f"{versions.IMAGES['scylladb']}); otherwise start ScyllaDB yourself (docker compose up -d "
        f"--wait scylladb) and {hints.pass_url('scylladb', 'scylladb://HOST:9042/lochkit')}"
    )


def _cassandra_container() -> Any:
    from testcontainers.community.cassandra import CassandraContainer

    container = CassandraContainer(versions.IMAGES["cassandra"])
    container.with_env(
        "JVM_OPTS",
        "-Dcassandra.skip_wait_for_gossip_to_settle=0 -Dcassandra.num_tokens=1 -Dcassandra.initial_token=0",
    )
    return container


def _scylla_container() -> Any:
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    container = DockerContainer(versions.IMAGES["scylladb"])
    container.with_exposed_ports(9042)
    # One shard, developer mode (no I/O tuning checks) and overprovisioned (no busy polling): what
    # ScyllaDB recommends for tests on shared machines.
    container.with_command(
        "--smp 1 --memory 1G --developer-mode 1 --overprovisioned 1 --skip-wait-for-gossip-to-settle 0"
    )
    container.waiting_for(LogMessageWaitStrategy("Starting listening for CQL clients"))
    return container


def _stop_container(container: Any) -> None:
    with contextlib.suppress(Exception):
        container.stop()


PROVISIONER = CassandraProvisioner()
