"""Which group each process of the server is in: lochkit's backend, the WAL writer, this command's
own monitor connection, the others by their kind. The tables show a row per group."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from backends.postgres.config import DEFAULT_APPLICATION_NAME

#: How server processes are grouped (the JSON keeps every kind apart).
POSTMASTER: Final = "postmaster"
BACKEND: Final = "lochkit backend"
WALWRITER: Final = "walwriter"
MONITOR: Final = "monitor backend"
EXITED: Final = "exited children"
OTHER: Final = "other"
MONITOR_APPLICATION: Final = "lochkit-pg-commit-cost-monitor"


def role_of(backend_type: str, application_name: str) -> str:
    """A process's group: lochkit's own connections apart from other client backends, every other
    process by its kind (``walwriter``, ``checkpointer``, ``autovacuum worker``...)."""
    if backend_type == "client backend" and application_name == DEFAULT_APPLICATION_NAME:
        return BACKEND
    return backend_type


def roles(activity: Iterable[tuple[int, str, str]], postmaster: int, monitor: int) -> dict[int, str]:
    """pid -> group, from ``pg_stat_activity``'s (pid, backend_type, application_name) rows."""
    found = {postmaster: POSTMASTER, monitor: MONITOR}
    for pid, backend_type, application_name in activity:
        found.setdefault(pid, role_of(backend_type, application_name))
    return found
