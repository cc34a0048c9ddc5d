"""Clients of ``lochkit serve`` that commit until they are killed, for test_killed_clients.py.

``python killed_committer.py URI`` reads ``NAME LOG`` lines on its standard input and for each
forks a client (a process, started in milliseconds since everything is imported already) and
prints its process id; the test SIGKILLs the clients by their ids. A client commits one new
namespace per commit to ``main``, each with a message of its own (``NAME-1``, ``NAME-2``...).
Before sending a commit it appends ``attempt MESSAGE`` to LOG, and once the server's answer is
read, ``ack MESSAGE HASH``: a commit is acknowledged when its answer reached the client, and an
``ack`` line is written only then. Each line is one ``write`` of a file opened for appending, so a
SIGKILL leaves whole lines (the kernel has them once ``write`` returned); a kill between reading
the answer and writing the line loses the line, which only makes the test check fewer commits,
never a wrong one."""

from __future__ import annotations

import os
import signal
import sys

from nessie_client import NessieRestClient
from persist_spi.versionstore.content import ContentKey, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch


def main(uri: str, name: str, log: str) -> None:
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    main_branch = branch("main")
    with NessieRestClient(uri) as client:
        # Each commit adds a key no one else writes, so an old expected hash never conflicts: the
        # client spends its time in commit requests, where the test's kills should land.
        expected = client.reference(main_branch).hash
        n = 0
        while True:
            n += 1
            message = f"{name}-{n}"
            os.write(out, f"attempt {message}\n".encode())
            put = Put(ContentKey.of(message), Namespace(elements=(message,)))
            result = client.commit(main_branch, expected, CommitMeta(message), [put])
            os.write(out, f"ack {message} {result.hash.hex_text}\n".encode())


def launcher(uri: str) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # killed clients are reaped at once
    for line in sys.stdin:
        name, log = line.split()
        pid = os.fork()
        if pid == 0:
            try:
                main(uri, name, log)
            finally:
                os._exit(1)
        print(pid, flush=True)


if __name__ == "__main__":
    launcher(sys.argv[1])
