"""No command that writes test data touches a user's data, on RocksDB and on PostgreSQL.

A database holds a user's catalog, written the way ``lochkit serve`` writes it: repository ``""``
(the one every command uses by default) and repository ``warehouse``. Every command that writes
test data (the conformance suite, ``generate``, the asymmetric experiment, a locust scenario, the
commit benchmark, ``torture``) is then pointed at that database, as a user would by mistake:

- without ``--allow-existing-data`` it refuses with a message that says why and what to do, exit 2
  (the suite: every test fails with that message), and writes nothing;
- with it, it runs, in repositories of its own only, and its scratch repositories are gone after.

Either way every row of the user's repositories (references and objects, with their ``referenced``
timestamps) is byte-for-byte what it was. Each command runs as the user runs it: ``lochkit`` in a
subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from persist_spi.adapter import ObjRow, RefRow
from persist_spi.config import StoreConfig
from persist_spi.logic.internal_refs import REF_REFS, REF_REPO
from persist_spi.logic.ownership import LOAD_OWNER, OWNER_PROPERTY, is_scratch
from persist_spi.registry import backend_factory
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from provisioning.servers.postgres import PROVISIONER

USER_REPOSITORIES = ("", "warehouse")
USER_REFS = (REF_REFS, REF_REPO, "refs/heads/main", "refs/heads/dev")
REFUSED = "refusing to write test data"
#: Seconds a command may take here, generous for a loaded 2-core machine.
TIMEOUT = 600


@dataclass
class Database:
    backend: str
    url: str


@pytest.fixture(scope="module", params=["rocksdb", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    backend = request.param
    if backend == "rocksdb":
        db = Database(backend, str(tmp_path_factory.mktemp("user-rocksdb") / "store"))
        _write_user_catalog(db)
        yield db
        return
    server = PROVISIONER.local_process("postgres", tmp_path_factory.mktemp("user-postgres"))
    try:
        db = Database(backend, str(server.url))
        _write_user_catalog(db)
        yield db
    finally:
        server.stop()


def _write_user_catalog(db: Database) -> None:
    """A catalog in each user repository, opened the way ``lochkit serve`` opens it."""
    from loadgen.targets.opening import open_target

    for repository in USER_REPOSITORIES:
        args = SimpleNamespace(
            backend=db.backend, url=db.url, provision="external", repository=repository, object_cache=False
        )
        with open_target(args, purpose="serve") as target:  # type: ignore[arg-type]
            api = target.api
            main = branch("main")
            api.commit(
                main, None, CommitMeta("namespace"), [Put(ContentKey.of("db"), Namespace(elements=("db",)))]
            )
            head = api.commit(
                main,
                None,
                CommitMeta("table"),
                [Put(ContentKey.of("db", "orders"), IcebergTable(metadata_location="s3://b/orders/1"))],
            ).hash
            api.create_reference(branch("dev"), head)


def _snapshot(db: Database) -> dict[str, tuple[list[RefRow | None], list[ObjRow]]]:
    """Every row of the user's repositories, as the database holds it."""
    adapter = backend_factory(db.backend).create(db.url)
    try:
        return {
            repo: (
                adapter.fetch_refs(repo, list(USER_REFS)),
                sorted(adapter.scan_objs(repo, None), key=lambda row: row.obj_id),
            )
            for repo in USER_REPOSITORIES
        }
    finally:
        adapter.close()


def _repositories(db: Database) -> set[str]:
    adapter = backend_factory(db.backend).create(db.url)
    try:
        return set(adapter.list_repositories())
    finally:
        adapter.close()


def _load_owner(db: Database, repository: str) -> str | None:
    from persist_spi.adapter_persist import AdapterPersist
    from persist_spi.logic.repository_logic import RepositoryLogic

    adapter = backend_factory(db.backend).create(db.url)
    try:
        persist = AdapterPersist(adapter, StoreConfig(repository_id=repository))
        description = RepositoryLogic(persist).fetch_repository_description()
        return None if description is None else description.properties.get(OWNER_PROPERTY)
    finally:
        adapter.close()


def _lochkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOCHKIT_ALLOW_EXISTING_DATA": ""}
    return subprocess.run(
        [sys.executable, "-m", "lochkit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        check=False,
    )


def _commands(db: Database, out: Path) -> dict[str, list[str]]:
    """Each command that writes test data, as short as it can be and still write."""
    target = ["--backend", db.backend, "--url", db.url]
    return {
        "conformance": ["conformance", *target, "-k", "PersistRepositories"],
        "generate": ["generate", *target, "-n", "5", "--out", str(out / "generate")],
        "experiment": [
            "experiment", "asymmetric", *target, "--duration", "1s", "--out", str(out / "experiment"),
        ],
        "scenario": [
            "scenario", "commit-to-branch", *target, "--users", "1", "-t", "2s", "--sim-commits", "3",
            "--only-summary", "--out", str(out / "scenario"),
        ],
        "bench": [
            "bench", *target, "--commits", "5", "--deep", "20", "--key-counts", "10", "--object-cache", "on",
        ],
        "torture": [
            "torture", "--backend", db.backend, "--url", f"{db.backend}={db.url}", "--profile", "ci",
            "--only", "scale", "--scale-commits", "5", "--out", str(out / "torture"),
        ],
    }  # fmt: skip


LOAD_COMMANDS = ("generate", "experiment", "scenario")
COMMANDS = ("conformance", *LOAD_COMMANDS, "bench", "torture")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_database_with_user_data_is_refused(database: Database, command: str, tmp_path: Path) -> None:
    before = _snapshot(database)
    result = _lochkit(*_commands(database, tmp_path)[command], cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    if command != "conformance":  # pytest's own code for failed tests
        assert result.returncode == 2, output
    assert REFUSED in output, output
    assert "--allow-existing-data" in output, output
    assert _snapshot(database) == before
    assert _repositories(database) == set(USER_REPOSITORIES)


@pytest.mark.parametrize("command", COMMANDS)
def test_with_the_opt_in_a_command_works_in_its_own_repositories_only(
    database: Database, command: str, tmp_path: Path
) -> None:
    before = _snapshot(database)
    argv = _commands(database, tmp_path)[command] + ["--allow-existing-data"]
    if command in LOAD_COMMANDS:
        argv += ["--repository", "load-test"]
    result = _lochkit(*argv, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _snapshot(database) == before
    left = _repositories(database) - set(USER_REPOSITORIES)
    assert not [r for r in left if is_scratch(r)], f"{command} left scratch repositories: {left}"
    if command in LOAD_COMMANDS:
        assert left == {"load-test"}
        assert _load_owner(database, "load-test") == LOAD_OWNER
    else:
        assert left <= {"load-test"}  # what an earlier load command of this module made


def test_a_test_run_keeps_what_a_load_command_wrote(tmp_path: Path) -> None:
    """A store ``generate`` filled is lochkit's own load data: the suite runs there without the
    opt-in, and afterwards ``lochkit check`` finds the generated repository as it was."""
    store = str(tmp_path / "store")
    generated = _lochkit("generate", "--backend", "rocksdb", "--url", store, "-n", "20", cwd=tmp_path)
    assert generated.returncode == 0, generated.stderr
    before = _check_counts(store, tmp_path)
    suite = _lochkit(
        "conformance",
        "--backend",
        "rocksdb",
        "--url",
        store,
        "-k",
        "Repositories or References",
        cwd=tmp_path,
    )
    assert suite.returncode == 0, suite.stdout + suite.stderr
    assert _check_counts(store, tmp_path) == before


def _check_counts(store: str, cwd: Path) -> str:
    """``lochkit check``'s counts line (references, commits, values...), without its time."""
    check = _lochkit("check", "--backend", "rocksdb", "--url", store, cwd=cwd)
    assert check.returncode == 0, check.stdout + check.stderr
    counts = next(line for line in check.stdout.splitlines() if " commits, " in line)
    assert " 0 commits" not in counts, counts
    return counts.rsplit(" in ", 1)[0]
