"""Starting campaign processes cheaply and killing them for real.

Children come from a fork server that has already imported lochkit and the database drivers, so a
restarted writer is up in milliseconds instead of re-importing everything; it forks from a process
without threads or open connections, which makes forking safe. Specs (connection addresses
included) travel over the fork server's pipe, not on command lines.
"""

from __future__ import annotations

import multiprocessing
import signal
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

_context: ForkServerContext | None = None


def context() -> ForkServerContext:
    global _context
    if _context is None:
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
