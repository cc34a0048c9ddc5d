"""Quicker starts for the Java servers lochkit launches: Java's ahead-of-time cache, and extra JVM
options from the environment.

A Java server spends most of its start-up loading, verifying and linking the same classes every
time. Java 25 and newer can keep them, already parsed and linked, in an AOT cache file (JEP 483 and
514), which every later start maps. ``lochkit servers install`` writes the cache once, with a
training start of the server (``-XX:AOTCacheOutput``: the JVM writes the cache as it exits, which
takes a while), and every start uses it when it is there. The cache is one file per server version,
jar and Java build under ``~/.cache/lochkit`` and changes nothing the server does once it is up. The
training start writes to a file of its own, renamed into place only when complete, so no server
ever reads a half-written cache; a cache the JVM cannot use is ignored with a warning in the
server's log.

``LOCHKIT_NESSIE_SERVER_JVM_OPTIONS`` adds JVM options to every start of a Nessie server, and
``LOCHKIT_SPARK_DRIVER_JVM_OPTIONS`` to the report job's Spark driver. CI sets
``-XX:TieredStopAtLevel=1`` in both: the quick compiler only, which halves start-up work but makes
a long run slower, so measurements leave them unset. (``LOCHKIT_NESSIE_JAVA_OPTS`` is another
thing: the options of the Java program of Nessie's side of the benchmarks, :mod:`loadgen.nessie_jvm`.)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shlex
from pathlib import Path
from typing import Final

from provisioning.servers.process import cache_dir

#: The first Java with a one-step AOT cache (``-XX:AOTCacheOutput``, JEP 514).
AOT_CACHE_JAVA: Final = 25
#: How long a training start may take to stop: the JVM writes the cache (about 100 MB for Nessie)
#: in a second JVM as it exits, which takes minutes on a busy two-core machine.
TRAINING_STOP_GRACE_S: Final = 600.0


def java_options_from_env(variable: str) -> tuple[str, ...]:
    """The JVM options in environment ``variable`` (shell-quoted words), none when unset."""
    return tuple(shlex.split(os.environ.get(variable, "")))


def cache_file(server: str, version: str, java: str, jar: Path) -> Path:
    """Where the AOT cache of ``server`` on this jar and Java build lives (one per combination:
    the JVM refuses any other's)."""
    real_java = Path(os.path.realpath(java))
    stat = jar.stat()
    identity = f"{real_java}|{real_java.stat().st_mtime_ns}|{jar}|{stat.st_size}|{stat.st_mtime_ns}"
    digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
    return cache_dir(server, version, "aot") / f"{server}-{digest}.aot"


def cache_options(cache: Path, java_version: int) -> tuple[str, ...]:
    """The options that start a server from ``cache``: none before Java 25 or while it is missing."""
    if java_version < AOT_CACHE_JAVA or not cache.is_file():
        return ()
    return (f"-XX:AOTCache={cache}",)


def training_file(cache: Path) -> Path:
    """A file of its own for one training start to write ``cache`` to."""
    return cache.with_name(f"{cache.name}.{os.getpid()}-{secrets.token_hex(4)}.partial")


def training_options(partial: Path) -> tuple[str, ...]:
    return (f"-XX:AOTCacheOutput={partial}",)


def publish(partial: Path, cache: Path) -> bool:
    """Move a training start's complete cache into place; False (and nothing left behind) when it
    wrote none or an empty one (stopped before the JVM finished writing)."""
    try:
        complete = partial.stat().st_size > 0
    except FileNotFoundError:
        complete = False
    if complete:
        os.replace(partial, cache)
    for leftover in (partial, partial.with_name(partial.name + ".config")):
        with contextlib.suppress(OSError):
            leftover.unlink()
    return complete
