"""No password is ever printed or written: a planted password (as written, percent-encoded and
plus-encoded) is looked for in everything the commands print and in every file they write, on the
paths that work and on those that fail (wrong password, server down, unreachable servers of every
backend). The PostgreSQL and MariaDB servers are real local ones whose lochkit user gets the planted
password."""

from __future__ import annotations

import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote, urlsplit

import psycopg
import pytest
from psycopg import sql

from backends.mariadb import MariadbBackendFactory
from backends.postgres import PostgresBackendFactory
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.registry import BackendFactory
from provisioning.servers import mariadb
from provisioning.servers.postgres import PROVISIONER

SECRET = "Planted$ecret-" + uuid.uuid4().hex[:12]
FORMS = sorted({SECRET, quote(SECRET, safe=""), quote_plus(SECRET)})


def _repository_behind_the_secret(factory: BackendFactory, scheme: str, server_url: str | None) -> str:
    """A URL of ``server_url``'s server with user lochkit's password set to :data:`SECRET`, and an
    initialised repository behind it."""
    where = urlsplit(server_url or "").netloc.rpartition("@")[2]
    url = f"{scheme}://lochkit:{quote(SECRET, safe='')}@{where}/lochkit"
    adapter = factory.create(url)
    try:
        adapter.setup_schema()
        RepositoryLogic(AdapterPersist(adapter, StoreConfig())).initialize("main")
    finally:
        adapter.close()
    return url


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("secrets"))
    try:
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER ROLE lochkit PASSWORD {}").format(sql.Literal(SECRET)))
        yield _repository_behind_the_secret(PostgresBackendFactory(), "postgresql", server.url)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def mariadb_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import pymysql

    server = mariadb.PROVISIONER.local_process("mariadb", tmp_path_factory.mktemp("mariadb-secrets"))
    try:
        admin = urlsplit(server.admin_url)
        conn = pymysql.connect(
            host=admin.hostname,
            port=admin.port or 3306,
            user=admin.username,
            password=unquote(admin.password or ""),
        )
        with conn.cursor() as cursor:
            cursor.execute("ALTER USER 'lochkit'@'127.0.0.1' IDENTIFIED BY %s", [SECRET])
        conn.close()
        yield _repository_behind_the_secret(MariadbBackendFactory(), "mariadb", server.url)
    finally:
        server.stop()


def test_mariadb_check_prints_and_writes_no_password(mariadb_url: str, tmp_path: Path) -> None:
    code, out = lochkit("check", "--backend", "mariadb", "--url", mariadb_url, cwd=tmp_path)
    assert code == 0, out
    assert_clean(out, "lochkit check --backend mariadb")
    wrong = mariadb_url.replace(quote(SECRET, safe=""), quote(SECRET + "-wrong", safe=""))
    code, out = lochkit("check", "--backend", "mariadb", "--url", wrong, cwd=tmp_path)
    assert code == 2, out
    assert "credentials" in out
    assert_clean(out, "lochkit check --backend mariadb with a wrong password")
    assert SECRET + "-wrong" not in out
    assert_tree_clean(tmp_path)


def test_mariadb_server_command_line_holds_no_password(tmp_path: Path) -> None:
    """The local server gets its users from a file, never from its command line (which any user
    of the machine can read in the process listing)."""
    server = mariadb.PROVISIONER.local_process("mariadb", tmp_path)
    try:
        password = unquote(urlsplit(server.url or "").password or "")
        admin_password = unquote(urlsplit(server.admin_url).password or "")
        listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
        assert "mariadbd" in listing
        for secret in (password, admin_password):
            assert secret
            assert secret not in listing
    finally:
        server.stop()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lochkit(*args: str, cwd: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "lochkit", *args], capture_output=True, text=True, timeout=900, cwd=cwd
    )
    return done.returncode, done.stdout + done.stderr


def assert_clean(text: str, what: str) -> None:
    for form in FORMS:
        assert form not in text, f"{what} shows the password ({form!r})"


def assert_tree_clean(root: Path) -> int:
    files = [p for p in root.rglob("*") if p.is_file()]
    for path in files:
        data = path.read_bytes()
        for form in FORMS:
            assert form.encode() not in data, f"{path} holds the password ({form!r})"
    return len(files)


def test_check_prints_and_writes_no_password(url: str, tmp_path: Path) -> None:
    code, out = lochkit("check", "--backend", "postgres", "--url", url, "--parquet", "parquet", cwd=tmp_path)
    assert code == 0, out
    assert_clean(out, "lochkit check")
    code, out = lochkit(
        "check", "--backend", "postgres", "--url", f"{url}?table_prefix=absent_", cwd=tmp_path
    )
    assert code == 4, out  # no lochkit tables under that prefix: nothing to check, said plainly
    assert "no repository to check" in out
    assert_clean(out, "lochkit check of a database without lochkit's tables")
    wrong = url.replace(quote(SECRET, safe=""), quote(SECRET + "-wrong", safe=""))
    code, out = lochkit("check", "--backend", "postgres", "--url", wrong, cwd=tmp_path)
    assert code == 2
    assert "credentials" in out
    assert_clean(out, "lochkit check with a wrong password")
    assert SECRET + "-wrong" not in out
    down = url.replace(urlsplit(url).netloc.rpartition("@")[2], f"127.0.0.1:{closed_port()}")
    code, out = lochkit(
        "check", "--backend", "postgres", "--url", f"{down}?connect_timeout=3&pool_timeout=3", cwd=tmp_path
    )
    assert code == 5  # cannot be reached: persist_spi.exit_codes.UNAVAILABLE
    assert_clean(out, "lochkit check against a server that is down")
    assert assert_tree_clean(tmp_path) >= 3


def test_torture_run_directory_holds_no_password(url: str, tmp_path: Path) -> None:
    argv = ["torture", "--backend", "postgres", "--url", f"postgres={url}", "--profile", "ci"]
    argv += ["--only", "crash,scale", "--scale-commits", "3", "--kill-seconds", "2", "--out", "run"]
    # The database holds repository '' (the fixture's): refused, in words without the password.
    code, out = lochkit(*argv, cwd=tmp_path)
    assert code == 2, out
    assert "refusing to write test data" in out
    assert_clean(out, "lochkit torture refusing a database with data")
    code, out = lochkit(*argv, "--allow-existing-data", cwd=tmp_path)
    assert code == 0, out
    assert_clean(out, "lochkit torture")
    assert assert_tree_clean(tmp_path / "run") > 20  # ledgers, histories, steps, results


def test_conformance_report_holds_no_password(url: str, tmp_path: Path) -> None:
    code, out = lochkit(
        "conformance",
        "--backend",
        "postgres",
        "--url",
        url,
        "-k",
        "test_index_segment_above_soft_limit_is_rejected",
        "--report",
        "report.json",
        "--allow-existing-data",  # the fixture's repository ''
        cwd=tmp_path,
    )
    assert code == 0, out
    assert_clean(out, "lochkit conformance")
    assert assert_tree_clean(tmp_path) >= 1


@pytest.mark.parametrize(
    ("backend", "template", "expected"),
    [
        # Unreachable: exit code 5 (persist_spi.exit_codes.UNAVAILABLE); a bad URL: a usage error, 2.
        (
            "postgres",
            "postgresql://lochkit:{secret}@127.0.0.1:{port}/lochkit?connect_timeout=3&pool_timeout=3",
            5,
        ),
        ("mongodb", "mongodb://lochkit:{secret}@127.0.0.1:{port}/lochkit", 5),
        ("cassandra", "cassandra://lochkit:{secret}@127.0.0.1:{port}/lochkit?connect_timeout=3", 5),
        ("dynamodb", "dynamodb://lochkit:{secret}@127.0.0.1:{port}?region=us-west-2&connect_timeout=1", 5),
        ("mariadb", "mariadb://lochkit:{secret}@127.0.0.1:{port}/lochkit?connect_timeout=3", 5),
        ("mariadb", "mariadb://lochkit:{secret}@127.0.0.1:{port}/lochkit?unknown_option=1", 2),
        ("mongodb", "mongodb://lochkit:{secret}@127.0.0.1:{port}/bad/name", 2),
        ("cassandra", "cassandra://lochkit:{secret}@127.0.0.1:{port}/Bad-Keyspace", 2),
        ("dynamodb", "dynamodb://lochkit:{secret}@127.0.0.1:{port}?unknown_option=1", 2),
        ("postgres", "postgresql://lochkit:{secret}@127.0.0.1:{port}/x?unknown_option=1", 2),
        # Bigtable takes no credentials from a URL: refused as a usage error, the secret masked.
        ("bigtable", "bigtable://lochkit:{secret}@127.0.0.1:{port}?project=p&instance=i", 2),
    ],
)
def test_unreachable_servers_and_bad_urls_show_no_password(
    backend: str, template: str, expected: int, tmp_path: Path
) -> None:
    for secret in (quote(SECRET, safe=""), quote_plus(SECRET)):
        bad = template.format(secret=secret, port=closed_port())
        code, out = lochkit("check", "--backend", backend, "--url", bad, cwd=tmp_path)
        assert code == expected, out
        assert_clean(out, f"lochkit check --backend {backend}")
