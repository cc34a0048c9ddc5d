"""The tools local servers need on this machine (a JDK, Maven, Go, apt as root), checked quickly
for ``lochkit servers list``: what was found, or how to get it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from provisioning.base import LocalServerStatus, Requirement
from provisioning.servers.process import maven_fetched


def _output(cmd: Sequence[str]) -> str:
    try:
        done = subprocess.run(list(cmd), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def _first_line(text: str) -> str:
    # Maven colours its banner even when not on a terminal.
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text).strip()
    return plain.splitlines()[0] if plain else ""


def _versioned(
    binary: str, args: Sequence[str], pattern: str, minimum: tuple[int, ...], what: str, how: str
) -> Requirement:
    """``binary``, if its version banner (the first line ``binary args`` prints) shows at least
    ``minimum`` in the groups of ``pattern``."""
    if shutil.which(binary) is None:
        return Requirement(what, None, how)
    banner = _first_line(_output([binary, *args]))
    match = re.search(pattern, banner)
    if match is None or tuple(int(g) for g in match.groups()) < minimum:
        return Requirement(what, None, f"{how} (found: {banner or 'a ' + binary + ' without a version'})")
    return Requirement(what, banner, how)


def java(minimum: int = 17) -> Requirement:
    how = "install a JDK, e.g. apt-get install openjdk-17-jdk-headless"
    return _versioned(
        "java", ["-version"], r'version "(\d+)', (minimum,), f"Java {minimum} or newer (a JDK)", how
    )


def maven() -> Requirement:
    what = "Maven (downloads the server's jars from Maven Central)"
    how = "install Maven, e.g. apt-get install maven"
    if shutil.which("mvn") is None:
        return Requirement(what, None, how)
    return Requirement(what, _first_line(_output(["mvn", "-v"])) or "mvn", how)


def go(minimum: tuple[int, int], builds: str) -> Requirement:
    """Go at least ``minimum`` (the ``go`` line of the built module's go.mod), to build ``builds``."""
    what = f"Go {minimum[0]}.{minimum[1]} or newer (builds {builds} from the Go module proxy)"
    how = "install Go from https://go.dev/dl or your package manager"
    return _versioned("go", ["version"], r"go(\d+)\.(\d+)", minimum, what, how)


def maven_jars_status(backend: str, server: str, dest: Path) -> LocalServerStatus:
    """A JVM server whose jars :func:`~provisioning.servers.process.maven_fetch` puts in ``dest``:
    installed once fetched; running needs Java 17+, fetching Maven too."""
    if maven_fetched(dest):
        return LocalServerStatus(backend, f"{server} in {dest / 'lib'}", (java(17),))
    return LocalServerStatus(backend, None, (java(17), maven()))


def apt_as_root(
    package: str = "postgresql",
    otherwise: str = "install PostgreSQL yourself and set LOCHKIT_POSTGRES_BINDIR",
) -> Requirement:
    what = f"root and apt-get (to install Debian's {package} package)"
    how = f"run as root on Debian/Ubuntu, or {otherwise}"
    if shutil.which("apt-get") is None:
        return Requirement(what, None, how)
    if os.geteuid() != 0:
        return Requirement(what, None, f"{how} (not root)")
    return Requirement(what, "root, apt-get", how)
