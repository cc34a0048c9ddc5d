"""Clients SIGKILLed in the middle of their commits to ``lochkit serve`` (on RocksDB, a process of
its own): the server keeps answering, every commit acknowledged to a client is in the branch's
log, nothing is committed twice or out of nowhere, and the store checks clean.

"Acknowledged" is the client's view: the server's answer was read (see killed_committer.py). A kill
that races the answer leaves a commit the server made but the client never learned of; such a
commit may or may not be in the log (both are correct), but it must be there at most once, and only
if the client attempted it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from nessie_client import NessieRestClient
from persist_spi.versionstore.content import ContentKey, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from provisioning.servers.process import free_port

from .serve_process import CLI, start_serve

CLIENT = str(Path(__file__).with_name("killed_committer.py"))
SEED = 20261127
CLIENTS = 4
KILLS = 20


def _start_server(data: Path, port: int) -> subprocess.Popen[str]:
    served = ["--backend", "rocksdb", "--url", str(data), "--port", str(port)]
    return start_serve(served, f"http://127.0.0.1:{port}/api/v2/config")


def _lines(log: Path) -> list[list[str]]:
    """Whole lines of a client's log, split in words."""
    text = log.read_text() if log.exists() else ""
    return [line.split() for line in text.splitlines(keepends=True) if line.endswith("\n")]


def _kill(pid: int) -> None:
    """SIGKILL a client and wait until it is gone (its launcher reaps it)."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"client {pid} outlived SIGKILL"
        time.sleep(0.005)


def _acked(log: Path) -> int:
    return sum(1 for words in _lines(log) if words[0] == "ack")


def test_clients_killed_mid_commit_lose_no_acknowledged_commit(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    port = free_port()
    uri = f"http://127.0.0.1:{port}/api/v2"
    server = _start_server(tmp_path / "db", port)
    launcher = subprocess.Popen(
        [sys.executable, CLIENT, uri], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert launcher.stdin is not None
    assert launcher.stdout is not None
    clients: dict[str, int] = {}
    logs: list[Path] = []
    killed_mid_commit = 0
    try:

        def spawn() -> None:
            name = f"c{len(logs)}"
            logs.append(tmp_path / f"{name}.log")
            assert launcher.stdin is not None
            assert launcher.stdout is not None
            launcher.stdin.write(f"{name} {logs[-1]}\n")
            launcher.stdin.flush()
            clients[name] = int(launcher.stdout.readline())

        for _ in range(CLIENTS):
            spawn()
        for _ in range(KILLS):
            # A client that has committed once is past its start: it is committing now.
            deadline = time.monotonic() + 30
            ready = [n for n in clients if _acked(tmp_path / f"{n}.log")]
            while not ready:
                assert time.monotonic() < deadline, "no client committed within 30 s"
                assert server.poll() is None, "lochkit serve ended"
                time.sleep(0.01)
                ready = [n for n in clients if _acked(tmp_path / f"{n}.log")]
            victim = rng.choice(sorted(ready))
            time.sleep(rng.uniform(0.0, 0.05))
            _kill(clients.pop(victim))
            if _lines(tmp_path / f"{victim}.log")[-1][0] == "attempt":
                killed_mid_commit += 1
            spawn()
    finally:
        for pid in clients.values():
            _kill(pid)
        launcher.kill()
        launcher.communicate()

    try:
        # The server still answers, reads and writes.
        assert server.poll() is None, "lochkit serve ended while its clients were killed"
        with NessieRestClient(uri) as client:
            main_branch = branch("main")
            head = client.reference(main_branch).hash
            after = Put(ContentKey.of("after"), Namespace(elements=("after",)))
            client.commit(main_branch, head, CommitMeta("after the kills"), [after])
            log = [(e.hash.hex_text, e.meta.message) for e in client.get_commits(main_branch)]
    finally:
        server.send_signal(signal.SIGTERM)
        output = server.communicate(timeout=60)[0]
    assert server.returncode == 0, output

    attempted: set[str] = set()
    acknowledged: dict[str, str] = {}
    for path in logs:
        for words in _lines(path):
            if words[0] == "attempt":
                attempted.add(words[1])
            elif words[0] == "ack":
                acknowledged[words[1]] = words[2]
    in_log = {message: commit for commit, message in log}
    messages = [message for _, message in log]
    assert killed_mid_commit > 0, "no kill landed while a commit was on its way: the test proves nothing"
    assert len(acknowledged) > KILLS
    lost = {m: h for m, h in acknowledged.items() if in_log.get(m) != h}
    assert not lost, f"acknowledged commits missing from main's log: {lost}"
    assert len(messages) == len(set(messages)), "a commit is in the log twice"
    unknown = set(messages) - attempted - {"after the kills"}
    assert not unknown, f"commits no client attempted: {unknown}"

    # The store the server left behind checks clean.
    check = subprocess.run(
        [CLI, "check", "--backend", "rocksdb", "--url", str(tmp_path / "db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr
