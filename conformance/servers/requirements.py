"""The tools local servers need on this machine (a JDK, Maven, Go, apt as root), checked quickly
for ``lochkit servers list``: what was found, or how to get it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence

from conformance.provisioning import Requirement


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


def java(minimum: int = 17) -> Requirement:
    what = f"Java {minimum} or newer (a JDK)"
    how = "install a JDK, e.g. apt-get install openjdk-17-jdk-headless"
    if shutil.which("java") is None:
        return Requirement(what, None, how)
    banner = _first_line(_output(["java", "-version"]))
    match = re.search(r'version "(\d+)', banner)
    if match is None or int(match.group(1)) < minimum:
        return Requirement(what, None, f"{how} (found: {banner or 'an unknown java'})")
    return Requirement(what, banner, how)


def maven() -> Requirement:
    what = "Maven (downloads the server's jars from Maven Central)"
    how = "install Maven, e.g. apt-get install maven"
    if shutil.which("mvn") is None:
        return Requirement(what, None, how)
    return Requirement(what, _first_line(_output(["mvn", "-v"])) or "mvn", how)


def go(minimum: tuple[int, int] = (1, 24)) -> Requirement:
    wanted = ".".join(map(str, minimum))
    what = f"Go {wanted} or newer (builds FerretDB from the Go module proxy)"
    how = "install Go from https://go.dev/dl or your package manager"
    if shutil.which("go") is None:
        return Requirement(what, None, how)
    banner = _first_line(_output(["go", "version"]))
    match = re.search(r"go(\d+)\.(\d+)", banner)
    if match is None or (int(match.group(1)), int(match.group(2))) < minimum:
        return Requirement(what, None, f"{how} (found: {banner or 'an unknown go'})")
    return Requirement(what, banner, how)


def apt_as_root() -> Requirement:
    what = "root and apt-get (to install Debian's postgresql package)"
    how = "run as root on Debian/Ubuntu, or install PostgreSQL yourself and set LOCHKIT_POSTGRES_BINDIR"
    if shutil.which("apt-get") is None:
        return Requirement(what, None, how)
    if os.geteuid() != 0:
        return Requirement(what, None, f"{how} (not root)")
    return Requirement(what, "root, apt-get", how)
