"""The private PostgreSQL server: started and removed by :func:`private_server`, switched between
configurations with ``ALTER SYSTEM``, and read into snapshots by a connection of this command's own."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from loadgen.pg_commit_cost.errors import MeasurementFailed
from loadgen.pg_commit_cost.groups import MONITOR_APPLICATION, roles
from loadgen.pg_commit_cost.proc import PROC, read_proc, server_processes
from loadgen.pg_commit_cost.snapshots import ServerSnapshot

if TYPE_CHECKING:
    import psycopg

    from provisioning.servers.postgres import PostgresProvisioned

#: After a reload the monitor's session sees the new settings; the other processes handle their
#: SIGHUP on their own schedule, within this.
RELOAD_SETTLE_S: Final = 0.2
RELOAD_TIMEOUT_S: Final = 10.0


class WatchedServer:
    """The private server and a superuser connection of this command's own that watches it. That
    connection is in the ``postgres`` database, so its reads never count among lochkit's statements."""

    def __init__(self, provisioned: PostgresProvisioned) -> None:
        import psycopg

        assert provisioned.url is not None  # a local process always has one
        self.url = provisioned.url
        self.monitor: psycopg.Connection[tuple[Any, ...]] = psycopg.connect(
            provisioned.admin_url, autocommit=True, application_name=MONITOR_APPLICATION
        )
        try:
            self.monitor_pid = int(self.value("SELECT pg_backend_pid()"))
            self.version = str(self.value("SHOW server_version"))
            self.data_directory = Path(str(self.value("SHOW data_directory")))
            # Every backend is a child of the postmaster, this connection's included.
            own = read_proc(PROC / str(self.monitor_pid))
            if own is None:
                raise MeasurementFailed(f"the server's process {self.monitor_pid} is not in {PROC}")
            self.postmaster = own[0]
        except BaseException:
            self.monitor.close()
            raise

    def value(self, query: str, params: Sequence[object] = ()) -> Any:
        row = self.monitor.execute(query, params).fetchone()
        assert row is not None
        return row[0]

    def configure(self, settings: dict[str, str]) -> None:
        """ALTER SYSTEM, reload, and wait until the settings are in force."""
        from psycopg import sql

        for name, value in settings.items():
            self.monitor.execute(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
        self.monitor.execute("SELECT pg_reload_conf()")
        deadline = time.monotonic() + RELOAD_TIMEOUT_S
        while (current := self.settings(list(settings))) != settings:
            if time.monotonic() > deadline:
                raise MeasurementFailed(
                    f"the private server's settings were not in force {RELOAD_TIMEOUT_S:.0f} s after "
                    f"a reload: asked for {settings}, found {current}"
                )
            time.sleep(0.05)
        time.sleep(RELOAD_SETTLE_S)

    def settings(self, names: list[str]) -> dict[str, str]:
        rows = self.monitor.execute("SELECT name, setting FROM pg_settings WHERE name = ANY(%s)", [names])
        return {str(name): str(setting) for name, setting in rows}

    def snapshot(self) -> ServerSnapshot:
        activity = self.monitor.execute("SELECT pid, backend_type, application_name FROM pg_stat_activity")
        found_roles = roles(activity.fetchall(), self.postmaster, self.monitor_pid)
        processes = server_processes(self.postmaster)
        row = self.monitor.execute(
            "SELECT pg_current_wal_lsn()::text, wal_records, wal_fpi, wal_bytes, wal_write, wal_sync, "
            "wal_write_time, wal_sync_time FROM pg_stat_wal"
        ).fetchone()
        assert row is not None
        names = ("records", "fpi", "bytes_stat", "writes", "syncs", "write_ms", "sync_ms")
        wal = dict(zip(names, map(float, row[1:]), strict=True))
        statements = int(
            self.value(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
                [self.database()],
            )
        )
        return ServerSnapshot(processes, found_roles, str(row[0]), wal, statements)

    def database(self) -> str:
        """lochkit's database on this server."""
        from psycopg.conninfo import conninfo_to_dict

        return str(conninfo_to_dict(self.url)["dbname"])

    def close(self) -> None:
        self.monitor.close()


@contextlib.contextmanager
def private_server() -> Iterator[WatchedServer]:
    """A PostgreSQL server of this command's own, with PostgreSQL's default settings; stopped, its
    data directory and work directory deleted, when the block ends however it ends."""
    from provisioning.servers.postgres import PROVISIONER
    from provisioning.workdir import workdir

    with workdir("pg-commit-cost") as where:
        provisioned = PROVISIONER.configurable_process("postgres", where)
        try:
            server = WatchedServer(provisioned)
            try:
                yield server
            finally:
                server.close()
        finally:
            provisioned.stop()  # fast shutdown, then the data directory is deleted
