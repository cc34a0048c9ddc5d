"""Starting campaign processes cheaply and killing them for real.

Children come from a fork server that has already imported lochkit and the database drivers, so a
restarted writer is up in milliseconds instead of re-importing everything; it forks from a process
without threads or open connections, which makes forking safe. Specs (connection addresses
included) travel over the fork server's pipe, not on command lines.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import tempfile
from collections.abc import Callable
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from typing import Any

#: Modules the fork server imports once; missing ones (drivers not installed) are skipped.
PRELOAD = (
    "reliability.writer",
    "reliability.crash_op",
    "backends.postgres.adapter",
    "backends.mongodb.adapter",
    "backends.cassandra.adapter",
    "backends.dynamodb.adapter",
    "backends.rocksdb.adapter",
    # Google's client and gRPC take seconds to import on a loaded machine: a writer that imported
    # them itself was still starting when the campaign killed the lease's holder. gRPC is safe to
    # fork here: the fork server imports it but never opens a channel.
    "backends.bigtable.adapter",
    "backends.mariadb.adapter",
    "psycopg",
    "psycopg_pool",
    "pymongo",
    "cassandra.cluster",
    "boto3",
    "pymysql",
    "rocksdict",
)

#: The longest path a Unix socket can be bound at on Linux (``sun_path`` holds 108 bytes, NUL included).
_SOCKET_PATH_LIMIT = 107
#: What multiprocessing appends to the temporary directory for the fork server's socket:
#: ``/pymp-XXXXXXXX/listener-XXXXXXXX``.
_SOCKET_SUFFIX = 32
#: Short, world-writable directories to fall back on, as Python 3.13's multiprocessing does.
_SHORT_TEMPORARY_DIRECTORIES = ("/tmp", "/var/tmp", "/dev/shm")

_context: ForkServerContext | None = None


def _fit_fork_server_socket() -> None:
    """Keeps the fork server's socket path short enough to bind.

    The socket lives under the temporary directory; a long ``TMPDIR`` (a CI job's own directory, a
    test's private one) made every writer fail with "AF_UNIX path too long". Python 3.11 has no
    fallback, so multiprocessing's private directory is created, once, in a short system one; it
    removes that directory itself at exit.
    """
    if len(os.fsencode(tempfile.gettempdir())) + _SOCKET_SUFFIX <= _SOCKET_PATH_LIMIT:
        return
    for directory in _SHORT_TEMPORARY_DIRECTORIES:
        if os.path.isdir(directory) and os.access(directory, os.W_OK | os.X_OK):
            configured = tempfile.tempdir
            tempfile.tempdir = directory
            try:
                multiprocessing.util.get_temp_dir()  # created now and remembered for the process
            finally:
                tempfile.tempdir = configured
            return
    # None usable: the bind below fails with the operating system's own message.


def context() -> ForkServerContext:
    global _context
    if _context is None:
        _fit_fork_server_socket()
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(list(PRELOAD))
    return _context


def start(target: Callable[[Any], None], spec: Any, name: str) -> BaseProcess:
    process = context().Process(target=target, args=(spec,), name=name, daemon=True)
    process.start()
    return process


def kill(process: BaseProcess, timeout: float = 30) -> None:
    """SIGKILL and reap."""
    if process.is_alive():
        process.kill()
    process.join(timeout)


def killed(process: BaseProcess) -> bool:
    return process.exitcode == -signal.SIGKILL
