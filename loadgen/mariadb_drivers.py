"""Round trips of the Python MariaDB / MySQL drivers that are installed, against one server: the
figures behind the MariaDB backend's choice of PyMySQL (docs/backends/mariadb.md).

    python -m loadgen.mariadb_drivers [--url mariadb://USER:PASSWORD@HOST:PORT/DATABASE]
        [--rounds 2000] [--markdown-out docs/generated/mariadb-drivers.md]

Without ``--url`` it starts a local MariaDB server for the run (as the conformance suite does).
Each driver opens one autocommit connection and runs the same statements: a primary-key SELECT of
one 2 KiB row, and the UPDATE a compare-and-swap is, in a scratch table it creates and drops.
Drivers that are not installed are listed as such; nothing is installed.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
import uuid
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from backends.mariadb.config import parse_settings
from conformance import snippets

#: module name -> how the driver is known on PyPI, and how to connect with it.
DRIVERS: dict[str, str] = {
    "pymysql": "PyMySQL",
    "MySQLdb": "mysqlclient",
    "mariadb": "mariadb",
    "mysql.connector": "mysql-connector-python",
}


def _connect(module: Any, name: str, host: str, port: int, user: str, password: str, database: str) -> Any:
    if name == "MySQLdb":
        return module.connect(
            host=host, port=port, user=user, password=password, database=database, autocommit=True
        )
    if name == "mysql.connector":
        # Its default collation (utf8mb4_0900_ai_ci) exists only on MySQL: name one MariaDB knows.
        conn = module.connect(
            host=host,
            port=port,
            user=user,
            password=password,
            database=database,
            collation="utf8mb4_general_ci",
        )
        conn.autocommit = True
        return conn
    conn = module.connect(host=host, port=port, user=user, password=password, database=database)
    if name == "pymysql":
        conn.autocommit(True)
    else:  # MariaDB Connector/Python: a property
        conn.autocommit = True
    return conn


def _time(rounds: int, call: Callable[[], None]) -> tuple[float, float]:
    """Median and 95th percentile, in microseconds."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        call()
        samples.append((time.perf_counter_ns() - start) / 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95)]


def _round_trips(conn: Any, table: str, rounds: int) -> tuple[str, str]:
    """Median / p95 of the two statements on ``conn``, in a scratch table it drops afterwards."""
    cursor = conn.cursor()
    try:
        cursor.execute(f"CREATE TABLE {table} (k INT PRIMARY KEY, v LONGBLOB, n BIGINT)")
        cursor.execute(f"INSERT INTO {table} VALUES (%s, %s, %s)", (1, b"\x01" * 2048, 0))

        def select() -> None:
            cursor.execute(f"SELECT v, n FROM {table} WHERE k = %s", (1,))
            cursor.fetchall()

        def update() -> None:
            cursor.execute(f"UPDATE {table} SET n = n + 1 WHERE k = %s AND n >= %s", (1, 0))

        _time(100, select)  # warm-up
        sel, upd = _time(rounds, select), _time(rounds, update)
        return f"{sel[0]:.0f} / {sel[1]:.0f}", f"{upd[0]:.0f} / {upd[1]:.0f}"
    finally:
        cursor.execute(f"DROP TABLE IF EXISTS {table}")


def measure(url: str, rounds: int) -> list[tuple[str, str, str, str]]:
    settings = parse_settings("mariadb", url)
    table = f"driver_speed_{uuid.uuid4().hex[:8]}"
    rows: list[tuple[str, str, str, str]] = []
    for name, package in DRIVERS.items():
        try:
            module = importlib.import_module(name)
        except ImportError:
            rows.append((package, "not installed", "", ""))
            continue
        conn = _connect(
            module, name, settings.host, settings.port, settings.user, settings.password, settings.database
        )
        try:
            select, update = _round_trips(conn, table, rounds)
        finally:
            conn.close()
        version = metadata.version(package)
        rows.append((f"{package} {version}", select, update, ""))
    return rows


def markdown(rows: list[tuple[str, str, str, str]]) -> str:
    lines = [
        "| driver | SELECT by key, µs (median / p95) | compare-and-swap UPDATE, µs (median / p95) |",
        "|---|---|---|",
    ]
    lines += [f"| {driver} | {select} | {update} |" for driver, select, update, _ in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a MariaDB or MySQL server (default: start a local MariaDB)")
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--markdown-out", type=Path)
    args = parser.parse_args(argv)
    command = snippets.invocation(["python", "-m", "loadgen.mariadb_drivers"], argv)
    if args.url:
        address = parse_settings("mariadb", args.url).address  # the command is printed: no password
        command = [address if word == args.url else word for word in command]
        text = markdown(measure(args.url, args.rounds))
    else:
        from provisioning.registry import start_local
        from provisioning.workdir import workdir

        with workdir("mariadb-drivers") as where:
            server = start_local("mariadb", where)
            try:
                text = markdown(measure(server.url or "", args.rounds))
            finally:
                server.stop()
    print(text, end="")
    if args.markdown_out:
        snippets.write(args.markdown_out, text, command, source="one connection per driver, local server")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
