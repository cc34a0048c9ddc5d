"""DynamoDB: Amazon's DynamoDB Local emulator, from Maven Central or as a container.

DynamoDB Local is Amazon's own emulator (a Java server over SQLite), not the DynamoDB service:
passing against it shows the adapter speaks the API and its conditions correctly, not how AWS
behaves under throttling or at scale.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from provisioning.base import (
    LocalServerStatus,
    Provisioned,
    ProvisioningFailed,
    RestartOptions,
    ServerProvisioner,
)
from provisioning.servers import requirements, versions
from provisioning.servers.process import (
    LocalServer,
    RestartableServer,
    cache_dir,
    cache_path,
    free_port,
    maven_fetch,
)

#: ``group:artifact:version`` of DynamoDB Local.
COORDINATES: Final = versions.LOCAL["dynamodb"]
VERSION: Final = COORDINATES.rsplit(":", 1)[1]
#: The sqlite4java release DynamoDB Local 2.6.x is built against (its pom's sqlite4java.version).
SQLITE4JAVA_VERSION: Final = "1.0.392"
MAIN_CLASS: Final = "com.amazonaws.services.dynamodbv2.local.main.ServerRunner"
#: Options shared by the local process and the container. -sharedDb: one database for every
#: access key and region, like one AWS account (otherwise each key sees its own tables).
SERVER_OPTIONS: Final = ("-inMemory", "-sharedDb", "-disableTelemetry")
CONTAINER_PORT: Final = 8000
REGION: Final = "us-west-2"
_READY_TIMEOUT = 120.0
#: DynamoDB Local answers TransactWriteItems before the transaction is in its SQLite file, and a
#: SIGKILL in the next tens of milliseconds loses it; PutItem, DeleteItem and UpdateItem are
#: written first (``python -m reliability.dynamodb_local_durability`` shows both). lochkit's
#: commit is one transaction by default, so the restart test commits in two steps there.
TRANSACTIONS_NOT_DURABLE: Final = RestartOptions(
    MappingProxyType({"transactions": "false"}),
    "DynamoDB Local acknowledges TransactWriteItems before it is durable (a SIGKILL right after "
    "the answer lost 9 of 15 transactions and 0 of 15 PutItems), so its restarts test the "
    "two-step commit; real DynamoDB's transactions are durable when acknowledged",
)


class DynamoDBProvisioner(ServerProvisioner):
    backends = ("dynamodb",)
    restart_options = MappingProxyType({"dynamodb": TRANSACTIONS_NOT_DURABLE})

    def install(self, backend: str) -> str:
        lib = self._lib_dir()
        return f"DynamoDB Local {VERSION} in {lib}"

    def local_status(self, backend: str) -> LocalServerStatus:
        return requirements.maven_jars_status(
            backend, f"DynamoDB Local {VERSION}", cache_path("dynamodb", VERSION)
        )

    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        return self._local(workdir, SERVER_OPTIONS)

    def restartable_process(self, backend: str, workdir: Path) -> Provisioned:
        """Tables in a SQLite file under ``workdir`` instead of memory, so a restarted server has
        them back: single-item writes are in SQLite before DynamoDB Local answers, transactions
        not (:data:`TRANSACTIONS_NOT_DURABLE`)."""
        data = workdir / "dynamodb-data"
        data.mkdir(parents=True, exist_ok=True)
        return self._local(workdir, ("-dbPath", str(data), *SERVER_OPTIONS[1:]))

    def _local(self, workdir: Path, options: tuple[str, ...]) -> Provisioned:
        java = shutil.which("java")
        if java is None:
            raise ProvisioningFailed(
                "dynamodb: DynamoDB Local needs Java 17 or newer on PATH "
                "(apt-get install openjdk-17-jre-headless)"
            )
        lib = self._lib_dir()
        port = free_port()
        server = LocalServer(
            f"DynamoDB Local {VERSION}",
            [
                java,
                "-Xmx1g",
                # Two cores are shared with the test client: C1-only JIT and the serial collector
                # start the server in ~4 s instead of 6-20 s (measured) without slowing the suite.
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                # sqlite4java loads its JNI library from here (libsqlite4java-linux-amd64-<ver>.so).
                f"-Djava.library.path={lib}",
                "-cp",
                f"{lib}/*",
                MAIN_CLASS,
                *options,
                "-port",
                str(port),
            ],
            log_path=workdir / "dynamodb-local.log",
            cwd=workdir,
        )
        url = f"dynamodb://127.0.0.1:{port}?region={REGION}"
        server.wait_until(lambda: _answers(url), _READY_TIMEOUT, "answering ListTables")
        return Provisioned(
            "dynamodb",
            url,
            "local-process",
            server=f"DynamoDB Local {VERSION}",
            stop=server.stop,
            control=RestartableServer(
                server, lambda: _answers(url), "answering ListTables again", _READY_TIMEOUT
            ),
        )

    def testcontainers(self, backend: str, workdir: Path) -> Provisioned:
        """Not exercised on the machine this was written on (no Docker engine there)."""
        from testcontainers.core.container import DockerContainer

        image = versions.IMAGES["dynamodb"]
        # The image's entrypoint is `java`; its working directory holds DynamoDBLocal.jar.
        container = DockerContainer(image).with_exposed_ports(CONTAINER_PORT)
        container = container.with_command(" ".join(["-jar", "DynamoDBLocal.jar", *SERVER_OPTIONS]))
        container.start()
        try:
            host = container.get_container_host_ip()
            port = container.get_exposed_port(CONTAINER_PORT)
            url = f"dynamodb://{host}:{port}?region={REGION}"
            _wait(lambda: _answers(url), _READY_TIMEOUT, f"{image} answering ListTables")
        except BaseException:
            container.stop()
            raise
        tag = image.rsplit(":", 1)[-1]
        return Provisioned(
            "dynamodb", url, "testcontainers", server=f"DynamoDB Local {tag} ({image})", stop=container.stop
        )

    def _lib_dir(self) -> Path:
        dest = cache_dir("dynamodb", VERSION)
        maven_fetch(
            [COORDINATES, f"com.almworks.sqlite4java:libsqlite4java-linux-amd64:{SQLITE4JAVA_VERSION}:so"],
            dest,
            f"downloading DynamoDB Local {VERSION} from Maven Central",
        )
        return dest / "lib"


def _answers(url: str) -> bool:
    """True once the server answers an API call (an open port alone is not enough)."""
    from backends.dynamodb.config import parse_url

    client: Any = parse_url(url, {"connect_timeout": "1", "read_timeout": "5", "max_attempts": "1"}).client(
        sdk_retries=False
    )
    try:
        client.list_tables(Limit=1)
        return True
    finally:
        client.close()


def _wait(ready: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if ready():
                return
        except Exception:  # not ready yet: connection refused, 5xx while starting
            time.sleep(0.5)
    raise ProvisioningFailed(f"dynamodb: {what} did not happen within {timeout:.0f} s")


PROVISIONER = DynamoDBProvisioner()
