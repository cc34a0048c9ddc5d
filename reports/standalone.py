"""A local Spark standalone cluster (one master, one worker) from PySpark's own installation, for
trying the report job against ``spark://`` the way a real cluster runs it.

PySpark's wheel has no ``sbin/start-master.sh``, but its ``bin/spark-class`` starts the master and
worker classes directly. Both bind to 127.0.0.1 on free ports; their process ids, URLs and logs live
in a state directory (default ``.lochkit/spark-cluster``) so ``stop`` finds exactly what ``start``
started.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from persist_spi.errors import LochkitError

DEFAULT_STATE: Final = Path(".lochkit") / "spark-cluster"
STATE_FILE: Final = "cluster.json"
START_TIMEOUT_S: Final = 120.0


class ClusterError(LochkitError, RuntimeError):
    """The cluster could not be started or stopped; the message says why and where the logs are."""


@dataclass
class Cluster:
    master_url: str
    master_ui: str
    master_pid: int
    worker_pid: int
    state_dir: str


def spark_class() -> Path:
    try:
        import pyspark
    except ImportError:
        raise ClusterError("PySpark is not installed: pip install 'lochkit[reports]'") from None
    path = Path(pyspark.__file__).parent / "bin" / "spark-class"
    if not path.exists():
        raise ClusterError(f"{path} is missing: this PySpark installation has no launcher scripts")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env.setdefault("SPARK_NO_DAEMONIZE", "1")
    return env


def load(state_dir: Path = DEFAULT_STATE) -> Cluster | None:
    state = state_dir / STATE_FILE
    if not state.exists():
        return None
    return Cluster(**json.loads(state.read_text()))


def _alive_workers(ui: str) -> int:
    with urllib.request.urlopen(f"{ui}/json/", timeout=5) as response:
        return int(json.load(response).get("aliveworkers", 0))


def _launch(launcher: Path, log_path: Path, arguments: list[str]) -> subprocess.Popen[bytes]:
    """One Spark daemon on 127.0.0.1, in its own session so ``stop`` can end it with its children."""
    with open(log_path, "wb") as log:
        return subprocess.Popen(
            [str(launcher), arguments[0], "--host", "127.0.0.1", *arguments[1:]],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_env(),
            start_new_session=True,
        )


def start(state_dir: Path = DEFAULT_STATE, cores: int = 2, memory: str = "2g") -> Cluster:
    """Start a master and one worker with ``cores`` and ``memory``; returns once the worker has
    registered with the master."""
    existing = load(state_dir)
    if existing and _alive(existing.master_pid):
        raise ClusterError(
            f"A cluster started from {state_dir} is running at {existing.master_url}; stop it first"
        )
    launcher = spark_class()
    state_dir.mkdir(parents=True, exist_ok=True)
    port, ui_port, worker_ui = _free_port(), _free_port(), _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    master_ui = f"http://127.0.0.1:{ui_port}"
    master = _launch(
        launcher,
        state_dir / "master.log",
        ["org.apache.spark.deploy.master.Master", "--port", str(port), "--webui-port", str(ui_port)],
    )
    worker = _launch(
        launcher,
        state_dir / "worker.log",
        [
            "org.apache.spark.deploy.worker.Worker",
            "--cores",
            str(cores),
            "--memory",
            memory,
            "--webui-port",
            str(worker_ui),
            "--work-dir",
            str(state_dir / "work"),
            master_url,
        ],
    )
    cluster = Cluster(master_url, master_ui, master.pid, worker.pid, str(state_dir))
    (state_dir / STATE_FILE).write_text(json.dumps(asdict(cluster), indent=2) + "\n")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if master.poll() is not None or worker.poll() is not None:
            stop(state_dir)
            raise ClusterError(
                f"The Spark {'master' if master.poll() is not None else 'worker'} exited; see "
                f"{state_dir}/master.log and worker.log"
            )
        try:
            if _alive_workers(master_ui) >= 1:
                return cluster
        except OSError:
            pass
        time.sleep(1.0)
    stop(state_dir)
    raise ClusterError(
        f"No worker registered within {START_TIMEOUT_S:.0f} s; see {state_dir}/master.log and worker.log"
    )


def stop(state_dir: Path = DEFAULT_STATE) -> bool:
    """Stop the master and worker ``start`` recorded in ``state_dir``; False if none was recorded."""
    cluster = load(state_dir)
    if cluster is None:
        return False
    for pid in (cluster.worker_pid, cluster.master_pid):
        if _alive(pid):
            os.killpg(pid, signal.SIGTERM)  # its own session: the JVM and any executor it started
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in (cluster.worker_pid, cluster.master_pid)):
        time.sleep(0.5)
    for pid in (cluster.worker_pid, cluster.master_pid):
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
    (state_dir / STATE_FILE).unlink(missing_ok=True)
    return True
