"""Temporary work directories of provisioned servers (data, logs, password files).

Every run directory is made here and removed here: when its server stops, when starting it fails,
and, for whatever is still left (an exception between creation and use), when the process exits.
``LOCHKIT_KEEP_WORKDIR=1`` keeps them for debugging.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

_LIVE: set[Path] = set()


def keep_requested() -> bool:
    return bool(os.environ.get("LOCHKIT_KEEP_WORKDIR"))


def make_workdir(name: str) -> Path:
    """A fresh private directory ``$TMPDIR/lochkit-<name>-*``; remove it with :func:`remove_workdir`."""
    path = Path(tempfile.mkdtemp(prefix=f"lochkit-{name}-"))
    _LIVE.add(path)
    return path


def remove_workdir(path: Path) -> None:
    """Delete ``path``, unless LOCHKIT_KEEP_WORKDIR is set."""
    _LIVE.discard(path)
    if not keep_requested():
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def workdir(name: str) -> Iterator[Path]:
    """A work directory for the duration of the block."""
    path = make_workdir(name)
    try:
        yield path
    finally:
        remove_workdir(path)


@atexit.register
def _remove_leftovers() -> None:
    for path in list(_LIVE):
        remove_workdir(path)
