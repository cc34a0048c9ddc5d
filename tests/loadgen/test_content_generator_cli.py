"""The content generator's subcommands through ``lochkit``'s command line, on a RocksDB repository
the test prepares and reads back in-process: their options and selectors, what lands in the
repository, their run directories and exit codes. (The library functions behind them are tested on
every target in test_content_generator.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest

from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Delete, Put
from persist_spi.versionstore.refs import branch, tag
from persist_spi.versionstore.results import LogEntry

if TYPE_CHECKING:  # fixtures of conftest.py
    from .conftest import CliResult, RocksRepository

Cli = Callable[..., "CliResult"]
CG = "content-generator"
RUNS = Path(".lochkit") / "runs"  # the default run directories, under the working directory


def key(path: str) -> ContentKey:
    return ContentKey(tuple(path.split(".")))


def keys(*paths: str) -> list[ContentKey]:
    return [key(p) for p in paths]


def new_commits(rocks: RocksRepository, ref: str, since: str) -> list[LogEntry]:
    """The commits on ``ref`` after ``since``, oldest first."""
    newer: list[LogEntry] = []
    for entry in rocks.log(ref):
        if str(entry.hash) == since:
            return list(reversed(newer))
        newer.append(entry)
    raise AssertionError(f"{since} is not on {ref}")


def run_json(path: Path) -> dict[str, Any]:
    doc = json.loads((path / "run.json").read_text())
    assert isinstance(doc, dict)
    return doc


def commit_events(path: Path) -> list[dict[str, object]]:
    rows = pq.read_table(path / "events.parquet").to_pylist()
    return [r for r in rows if r["action"] == "commitMultipleOperations"]


def assert_finished_run(path: Path, command: str, commits: int) -> None:
    """The run directory of a successful bulk command that made ``commits`` commits."""
    doc = run_json(path)
    assert doc["command"] == command
    assert doc["status"] == "ok"
    assert doc["totals"]["commits"] == commits
    assert doc["target"]["backend"] == "rocksdb"
    events = commit_events(path)
    assert len(events) == commits
    assert all(e["outcome"] == "ok" and e["commit_hash"] for e in events)


# --- reads -----------------------------------------------------------------------------------------


def test_refs_lists_every_reference_at_its_head(cli: Cli, rocks: RocksRepository) -> None:
    main_head = rocks.add_tables("main", keys("a.t"))
    dev_head = rocks.add_tables("dev", keys("b.t"))
    with rocks.open() as target:
        target.api.create_reference(tag("v1"), target.api.reference(branch("dev")).hash)

    listed = cli(CG, "refs", *rocks.args)
    assert listed.code == 0
    lines = [line for line in listed.out.splitlines() if "{name=" in line]
    assert sorted(lines) == sorted(
        [
            f"Branch{{name=main, hash={main_head}}}",
            f"Branch{{name=dev, hash={dev_head}}}",
            f"Tag{{name=v1, hash={dev_head}}}",
        ]
    )
    limited = cli(CG, "refs", *rocks.args, "-L", "1")
    assert limited.code == 0
    assert sum("{name=" in line for line in limited.out.splitlines()) == 1
    assert not RUNS.exists()  # reads leave no run directory


def test_entries_lists_keys_types_ids_and_content_at_a_commit(cli: Cli, rocks: RocksRepository) -> None:
    rocks.add_tables("dev", keys("ns.t0"))
    rocks.add_tables("dev", keys("ns.t1"))
    with rocks.open() as target:
        ids = {e.key: e.content_id for e in target.api.get_entries(branch("dev"))}

    listed = cli(CG, "entries", *rocks.args, "-r", "dev")
    assert listed.code == 0
    lines = listed.out.splitlines()
    assert {line.removeprefix("Key: ") for line in lines if line.startswith("Key: ")} == {
        "ns",
        "ns.t0",
        "ns.t1",
    }
    assert lines.count("Type: NAMESPACE") == 1
    assert lines.count("Type: ICEBERG_TABLE") == 2
    assert {f"Content ID: {i}" for i in ids.values()} <= set(lines)
    assert not any(line.startswith("Value: ") for line in lines)

    before = cli(CG, "entries", *rocks.args, "-r", "dev", "-H", "~1")
    assert {line for line in before.out.splitlines() if line.startswith("Key: ")} == {"Key: ns", "Key: ns.t0"}

    with_content = cli(CG, "entries", *rocks.args, "-r", "dev", "-C", "-L", "2", "-v")
    assert with_content.code == 0
    lines = with_content.out.splitlines()
    assert sum(line.startswith("Key: ") for line in lines) == 2
    assert sum(line.startswith("Value: ") for line in lines) == 2
    assert "  key[0]: ns" in lines


def test_content_reads_one_key_at_the_head_or_an_earlier_commit(cli: Cli, rocks: RocksRepository) -> None:
    first = rocks.add_tables("dev", keys("ns.t0"))
    with rocks.open() as target:
        current = target.api.get_values(branch("dev"), [key("ns.t0")])[key("ns.t0")]
        second = target.api.commit(
            branch("dev"),
            None,
            CommitMeta("update"),
            [Put(key("ns.t0"), IcebergTable(id=current.id, metadata_location="second location"))],
        ).hash

    at_head = cli(CG, "content", *rocks.args, "-r", "dev", "-k", "ns", "-k", "t0", "-v")
    assert at_head.code == 0
    values = [line for line in at_head.out.splitlines() if line.startswith("Value: ")]
    assert len(values) == 1
    assert "second location" in values[0]
    assert "  key[1]: t0" in at_head.out.splitlines()
    for spec in (first, "~1", f"{second}^1"):
        earlier = cli(CG, "content", *rocks.args, "-r", "dev", "-H", spec, "-k", "ns", "-k", "t0")
        assert earlier.code == 0, earlier.err
        values = [line for line in earlier.out.splitlines() if line.startswith("Value: ")]
        assert len(values) == 1
        assert "location of ns.t0" in values[0], spec


# --- content-refresh -------------------------------------------------------------------------------


def test_content_refresh_rewrites_a_prefix_in_batches_and_keeps_ids(
    cli: Cli, rocks: RocksRepository, tmp_path: Path
) -> None:
    head = rocks.add_tables("dev", keys("ns.sub.t0", "ns.sub.t1", "ns.t2", "nsx.t3"))
    with rocks.open() as target:
        before = {e.key: e.content_id for e in target.api.get_entries(branch("dev"))}
    out = tmp_path / "refresh"

    done = cli(CG, "content-refresh", *rocks.args, "-r", "dev", "-k", "ns", "-R", "-B", "2")
    assert done.code == 0, done.err
    done = cli(
        CG, "content-refresh", *rocks.args, "-r", "dev", "-k", "ns", "-R", "-B", "2", "--author", "tester",
        "--out", str(out),
    )  # fmt: skip
    assert done.code == 0, done.err

    selected = keys("ns", "ns.sub", "ns.sub.t0", "ns.sub.t1", "ns.t2")
    commits = new_commits(rocks, "dev", head)
    assert len(commits) == 6  # 5 keys in batches of 2, twice
    last_run = commits[3:]
    assert sorted(op.key for c in last_run for op in c.operations or ()) == sorted(selected)
    assert all(isinstance(op, Put) for c in last_run for op in c.operations or ())
    assert [len(c.operations or ()) for c in last_run] == [2, 2, 1]
    assert all(c.meta.authors == ("tester",) and c.meta.message.startswith("Refresh ") for c in last_run)
    with rocks.open() as target:
        after = {e.key: e.content_id for e in target.api.get_entries(branch("dev"))}
    assert after == before
    assert_finished_run(out, "content-refresh", 3)
    assert len(list(RUNS.iterdir())) == 1  # the run without --out went to the default place


def test_content_refresh_on_all_branches_and_from_input_files(
    cli: Cli, rocks: RocksRepository, tmp_path: Path
) -> None:
    rocks.add_tables("main", keys("x.t0", "x.t1"))
    rocks.add_tables("dev", keys("y.t2"))
    with rocks.open() as target:
        target.api.create_reference(tag("v1"), target.api.reference(branch("dev")).hash)
    heads = {ref: str(rocks.log(ref)[0].hash) for ref in ("main", "dev")}

    all_branches = cli(CG, "content-refresh", *rocks.args, "--all", "-k", "x", "-k", "t0", "--out", "r1")
    assert all_branches.code == 0, all_branches.err
    for ref in ("main", "dev"):
        [commit] = new_commits(rocks, ref, heads[ref])
        assert [op.key for op in commit.operations or ()] == [key("x.t0")]
        heads[ref] = str(commit.hash)
    assert_finished_run(Path("r1"), "content-refresh", 2)

    csv = tmp_path / "keys.csv"
    csv.write_text("x|t1\n")
    from_csv = cli(
        CG, "content-refresh", *rocks.args, "-f", str(csv), "-F", "CSV_KEYS", "-S", "|", "--out", "r2"
    )
    assert from_csv.code == 0, from_csv.err
    [commit] = new_commits(rocks, "main", heads["main"])
    assert [op.key for op in commit.operations or ()] == [key("x.t1")]
    assert new_commits(rocks, "dev", heads["dev"]) == []
    heads["main"] = str(commit.hash)

    info = tmp_path / "info.json"
    info.write_text(
        json.dumps(
            [
                {"key": {"elements": ["y", "t2"]}, "reference": "dev"},
                {"key": {"elements": ["x", "t0"]}, "reference": "main"},
                {"key": {"elements": ["x", "t1"]}, "reference": "v1"},  # a tag: skipped
            ]
        )
    )
    from_json = cli(
        CG, "content-refresh", *rocks.args, "-f", str(info), "-F", "CONTENT_INFO_JSON", "--out", "r3"
    )
    assert from_json.code == 0, from_json.err
    for ref, refreshed in (("dev", "y.t2"), ("main", "x.t0")):
        [commit] = new_commits(rocks, ref, heads[ref])
        assert [op.key for op in commit.operations or ()] == [key(refreshed)]
    assert_finished_run(Path("r3"), "content-refresh", 2)


# --- delete ----------------------------------------------------------------------------------------


def test_delete_one_key_per_commit_deletes_children_before_their_namespace(
    cli: Cli, rocks: RocksRepository
) -> None:
    head = rocks.add_tables("dev", keys("ns.sub.t0", "ns.sub.t1", "ns.t2", "nsx.t3"))

    done = cli(CG, "delete", *rocks.args, "-r", "dev", "-k", "ns", "-R", "-B", "1", "--out", "run")
    assert done.code == 0, done.err

    deleted = []
    for commit in new_commits(rocks, "dev", head):
        [op] = commit.operations or ()
        assert isinstance(op, Delete)
        deleted.append(op.key)
    under_ns = keys("ns", "ns.sub", "ns.sub.t0", "ns.sub.t1", "ns.t2")
    assert deleted == sorted(under_ns, reverse=True)
    for position, namespace in enumerate(deleted):
        children = [k for k in deleted if k != namespace and k.starts_with(namespace)]
        assert all(deleted.index(child) < position for child in children), namespace
    assert rocks.keys("dev") == {key("nsx"): "NAMESPACE", key("nsx.t3"): "ICEBERG_TABLE"}
    assert_finished_run(Path("run"), "delete", 5)
    assert all(e["puts"] == 1 for e in commit_events(Path("run")))


def test_delete_on_all_branches_and_from_input_files(
    cli: Cli, rocks: RocksRepository, tmp_path: Path
) -> None:
    rocks.add_tables("main", keys("s.t0", "s.t1", "s.t2"))
    rocks.add_tables("dev", keys("d.t3"))  # dev starts at main's head: it has s.* too

    all_branches = cli(CG, "delete", *rocks.args, "--all", "-k", "s", "-k", "t0", "--out", "r1")
    assert all_branches.code == 0, all_branches.err
    assert key("s.t0") not in rocks.keys("main")
    assert key("s.t0") not in rocks.keys("dev")
    assert_finished_run(Path("r1"), "delete", 2)

    csv = tmp_path / "paths.csv"
    csv.write_text("s.t1\n\n")  # path strings (no --separator); blank lines are skipped
    from_csv = cli(CG, "delete", *rocks.args, "-r", "dev", "-f", str(csv), "-F", "CSV_KEYS")
    assert from_csv.code == 0, from_csv.err
    assert key("s.t1") not in rocks.keys("dev")
    assert key("s.t1") in rocks.keys("main")

    info = tmp_path / "info.json"
    info.write_text(json.dumps([{"key": {"elements": ["s", "t2"]}, "reference": "main"}]))
    # -r overrides every entry's reference.
    from_json = cli(CG, "delete", *rocks.args, "-r", "dev", "-f", str(info), "-F", "CONTENT_INFO_JSON")
    assert from_json.code == 0, from_json.err
    assert key("s.t2") not in rocks.keys("dev")
    assert key("s.t2") in rocks.keys("main")


# --- copy and create-missing-namespaces --------------------------------------------------------------


def test_copy_makes_numbered_copies_with_new_content_ids(cli: Cli, rocks: RocksRepository) -> None:
    head = rocks.add_tables("dev", keys("ns.t0"))

    done = cli(
        CG, "copy", *rocks.args, "-r", "dev", "-n", "3", "-k", "ns", "-k", "t0", "-t", "ns", "-t", "copy%d",
        "--author", "tester", "--out", "run",
    )  # fmt: skip
    assert done.code == 0, done.err

    copies = keys("ns.copy0", "ns.copy1", "ns.copy2")
    with rocks.open() as target:
        values = target.api.get_values(branch("dev"), [key("ns.t0"), *copies])
    assert set(values) == {key("ns.t0"), *copies}
    assert len({v.id for v in values.values()}) == 4  # every copy is new content
    assert {v.metadata_location for v in values.values()} == {"location of ns.t0"}  # type: ignore[attr-defined]
    commits = new_commits(rocks, "dev", head)
    assert [c.meta.message for c in commits] == ["Copy 0", "Copy 1", "Copy 2"]
    assert all(c.meta.authors == ("tester",) for c in commits)
    assert_finished_run(Path("run"), "copy", 3)


def test_create_missing_namespaces_on_named_branches_then_all(cli: Cli, rocks: RocksRepository) -> None:
    rocks.add_tables_without_namespaces("dev", keys("a.b.t1", "x.t2"))
    rocks.add_tables_without_namespaces("feature", keys("q.t3"))
    feature_head = str(rocks.log("feature")[0].hash)

    named = cli(CG, "create-missing-namespaces", *rocks.args, "-r", "dev", "--out", "r1")
    assert named.code == 0, named.err
    assert "Successfully processed 1 branches, created 3 namespaces." in named.out
    namespaces = {k for k, t in rocks.keys("dev").items() if t == "NAMESPACE"}
    assert namespaces == set(keys("a", "a.b", "x"))
    assert str(rocks.log("feature")[0].hash) == feature_head
    assert_finished_run(Path("r1"), "create-missing-namespaces", 1)
    dev_head = str(rocks.log("dev")[0].hash)

    every = cli(CG, "create-missing-namespaces", *rocks.args, "--out", "r2")
    assert every.code == 0, every.err
    assert {k for k, t in rocks.keys("feature").items() if t == "NAMESPACE"} == {key("q")}
    assert str(rocks.log("dev")[0].hash) == dev_head  # nothing was missing there any more
    assert_finished_run(Path("r2"), "create-missing-namespaces", 1)

    unknown = cli(CG, "create-missing-namespaces", *rocks.args, "-r", "dev", "-r", "nope", "--out", "r3")
    assert unknown.code == 1
    assert "Could not find branch(es) nope" in unknown.err
    assert run_json(Path("r3"))["status"] == "failed"


# --- on inmemory, and mistakes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "printed"),
    [
        (["refs"], "Branch{name=main, hash="),
        (["delete", "--all"], "Deleted"),  # nothing to delete: no commit, no line
        (["content-refresh"], "Refreshed"),
        (["create-missing-namespaces"], "Successfully processed 1 branches, created 0 namespaces."),
    ],
)
def test_commands_on_an_empty_inmemory_repository(cli: Cli, argv: list[str], printed: str) -> None:
    done = cli(CG, argv[0], "--backend", "inmemory", *argv[1:])
    assert done.code == 0, done.err
    if argv[0] in ("delete", "content-refresh"):
        assert printed not in done.out
        [run] = list(RUNS.iterdir())
        assert run_json(run)["totals"]["commits"] == 0
    else:
        assert printed in done.out


def test_copy_of_a_missing_key_says_so_in_one_line(cli: Cli) -> None:
    done = cli(CG, "copy", "--backend", "inmemory", "-k", "no", "-k", "such", "-t", "x%d", "-n", "2")
    assert done.code == 2
    assert done.err.strip().splitlines() == [
        "lochkit content-generator copy: Key 'no.such' not found on main"
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["delete", "-R"], "--recursive needs --key"),
        (["delete", "-f", "keys.csv"], "--input needs --format"),
        (["content-refresh", "--all", "-f", "keys.csv", "-F", "CSV_KEYS"], "cannot be combined"),
        (["delete", "-k", "a", "-f", "keys.csv", "-F", "CSV_KEYS"], "cannot be combined"),
        (["delete", "-f", "missing.csv", "-F", "CSV_KEYS"], "--input missing.csv: no such file"),
        (["content-refresh", "-B", "0"], "--batch must be at least 1"),
        (["copy", "-n", "0", "-k", "a", "-t", "b%d"], "--num-copies must be positive"),
    ],
)
def test_selector_mistakes_are_one_line_and_leave_no_run_directory(
    cli: Cli, rocks: RocksRepository, argv: list[str], message: str
) -> None:
    Path("keys.csv").write_text("a.b\n")
    done = cli(CG, argv[0], *rocks.args, *argv[1:])
    assert done.code == 2
    [line] = done.err.strip().splitlines()
    assert line.startswith(f"lochkit content-generator {argv[0]}: ")
    assert message in line
    assert not RUNS.exists()
    assert not Path(rocks.url).exists()  # nothing was opened either


def test_all_and_ref_together_are_refused_by_the_parser(
    cli: Cli, rocks: RocksRepository, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli(CG, "delete", *rocks.args, "--all", "-r", "dev")
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
