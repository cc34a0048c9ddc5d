"""Every content-generator subcommand end to end on each target, asserting what lands in the
repository (keys, content ids kept on update, namespaces, tags, deletions), not just exit codes."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from loadgen.contentgen import maintenance as m
from loadgen.contentgen.generate import GenerateOptions, Generator
from loadgen.contentgen.recording import Recorder
from loadgen.runs import RunDirectory
from loadgen.targets import Target
from lochkit.cli import main
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.cache import CachingPersist
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Delete, Put
from persist_spi.versionstore.policies.group import GroupPolicy
from persist_spi.versionstore.refs import RefKind, branch
from persist_spi.versionstore.results import KeyEntry
from persist_spi.versionstore.store import VersionStore


def _unique() -> str:
    return uuid.uuid4().hex[:8]


def _generate(target: Target, **options: object) -> Recorder:
    recorder = Recorder(None)
    Generator(target.api, GenerateOptions(**options), recorder, lambda _: None, lambda _: None).run()  # type: ignore[arg-type]
    return recorder


def _entries(target: Target, ref: str) -> dict[ContentKey, KeyEntry]:
    return {e.key: e for e in target.api.get_entries(branch(ref), with_content=True)}


def test_generate_creates_keys_namespaces_and_keeps_content_ids(target: Target) -> None:
    ref = f"gen-{_unique()}"
    pattern = f"db{_unique()}_${{every,10,uuid}}.tbl_${{seq,0}}"
    recorder = _generate(
        target,
        default_branch=ref,
        num_commits=60,
        num_tables=20,
        puts_per_commit=5,
        key_pattern=pattern,
        seed=3,
    )
    entries = _entries(target, ref)
    namespaces = [k for k, e in entries.items() if e.payload == Namespace.PAYLOAD]
    tables = [k for k, e in entries.items() if e.payload == IcebergTable.PAYLOAD]
    assert len(namespaces) == 2
    assert all(t.parent in namespaces for t in tables)
    assert 10 <= len(tables) <= 20
    assert recorder.count("commitMultipleOperations", "ok") == 60
    # An update keeps the content id: every table's id equals the one its creating commit got.
    log = list(target.api.get_commits(branch(ref), with_operations=True))
    first_id: dict[ContentKey, str] = {}
    for entry in reversed(log):
        for op in entry.operations or ():
            if hasattr(op, "content") and op.content.id is not None:
                first_id.setdefault(op.key, op.content.id)
    for key in tables:
        assert entries[key].content_id == first_id[key]


def test_generate_creates_branches_and_tags(target: Target) -> None:
    ref = f"br-{_unique()}"
    _generate(target, default_branch=ref, num_commits=10, num_branches=3, tag_probability=1.0, seed=5)
    names = {r.named_ref.name: r for r in target.api.list_references()}
    extra = [n for n in names if n.startswith("branch-2001-") and names[n].named_ref.kind is RefKind.BRANCH]
    assert len(extra) >= 2
    tags = [
        r
        for r in names.values()
        if r.named_ref.kind is RefKind.TAG and r.named_ref.name.startswith("new-tag-")
    ]
    assert len(tags) >= 10


def test_delete_refresh_copy_and_missing_namespaces(target: Target) -> None:
    ref = f"maint-{_unique()}"
    _generate(
        target, default_branch=ref, num_commits=10, num_tables=6, key_pattern="ns.sub.t${seq,0}", seed=1
    )
    recorder = Recorder(None)
    before = _entries(target, ref)
    m.refresh(
        target.api, m.Selection(ref=ref, key=("ns",), recursive=True), None, "me", recorder, lambda _: None
    )
    after = _entries(target, ref)
    assert {k: e.content_id for k, e in after.items()} == {k: e.content_id for k, e in before.items()}
    assert next(target.api.get_commits(branch(ref))).meta.message.startswith("Refresh ")

    source = next(k for k, e in after.items() if e.payload == IcebergTable.PAYLOAD)
    m.copy(target.api, ref, 3, source, ["ns", "copy%d"], "me", recorder, lambda _: None)
    copies = [ContentKey.of("ns", f"copy{i}") for i in range(3)]
    copied = target.api.get_values(branch(ref), copies)
    assert len(copied) == 3
    assert len({c.id for c in copied.values()} | {after[source].content_id}) == 4  # new content ids

    # Deleting recursively removes children before their namespaces (reverse order, one batch).
    m.delete(
        target.api,
        m.Selection(ref=ref, key=("ns", "sub"), recursive=True, batch=100),
        None,
        "me",
        recorder,
        lambda _: None,
    )
    left = _entries(target, ref)
    assert not any(k.starts_with(ContentKey.of("ns", "sub")) for k in left)
    assert ContentKey.of("ns") in left

    # create-missing-namespaces on a branch that has every namespace creates nothing.
    lines: list[str] = []
    assert (
        m.create_missing_namespaces(target.api, [ref], "me", False, recorder, lines.append, lines.append) == 0
    )
    assert any("created 0 namespaces" in line for line in lines)
    assert (
        m.create_missing_namespaces(
            target.api, ["no-such-branch"], "me", False, recorder, lines.append, lines.append
        )
        == 1
    )


def test_reads_print_what_the_repository_holds(target: Target) -> None:
    ref = f"read-{_unique()}"
    _generate(target, default_branch=ref, num_commits=3, num_tables=1, key_pattern="r.t${seq,0}", seed=9)
    lines: list[str] = []
    m.read_commits(target.api, ref, None, 2, True, lines.append)
    assert sum("Commit #" in line for line in lines) == 2
    lines.clear()
    m.read_entries(target.api, ref, None, True, 0, False, lines.append)
    assert "Key: r.t0" in lines
    assert "Type: NAMESPACE" in lines
    lines.clear()
    head = target.api.reference(branch(ref)).hash
    m.read_content(target.api, ref, f"{head}~1", ContentKey.of("r", "t0"), False, lines.append)
    assert any(line.startswith("Value: IcebergTable(") for line in lines)
    lines.clear()
    m.read_refs(target.api, 0, lines.append)
    assert any(f"name={ref}," in line for line in lines)


def test_csv_and_content_info_inputs_select_keys(target: Target, tmp_path: Path) -> None:
    ref = f"in-{_unique()}"
    _generate(
        target,
        default_branch=ref,
        num_commits=6,
        num_tables=2,
        puts_per_commit=4,
        key_pattern="f.t${seq,0}",
        seed=2,
    )
    csv = tmp_path / "keys.csv"
    csv.write_text("f|t0\n")
    recorder = Recorder(None)
    m.delete(
        target.api,
        m.Selection(ref=ref, input_file=csv, input_format="CSV_KEYS", separator="|"),
        None,
        None,
        recorder,
        lambda _: None,
    )
    info = tmp_path / "info.json"
    info.write_text(json.dumps([{"key": {"elements": ["f", "t1"]}, "reference": ref}]))
    m.delete(
        target.api,
        m.Selection(input_file=info, input_format="CONTENT_INFO_JSON"),
        None,
        None,
        recorder,
        lambda _: None,
    )
    keys = set(_entries(target, ref))
    assert ContentKey.of("f", "t0") not in keys
    assert ContentKey.of("f", "t1") not in keys


def test_same_seed_twice_gives_the_same_commit_ids_in_process() -> None:
    from backends.inmemory import InMemoryBackendFactory
    from loadgen.targets.in_process import in_process_target
    from persist_spi.versionstore.sources import seeded_sources

    def run() -> list[str]:
        target = in_process_target(
            InMemoryBackendFactory().create(),
            backend="inmemory",
            provisioning="embedded",
            url=None,
            sources=seeded_sources(42),
        )
        with target:
            _generate(
                target,
                num_commits=20,
                num_tables=10,
                puts_per_commit=3,
                key_pattern="s${every,3,uuid}.t${seq,0}",
                seed=42,
            )
            return [str(e.hash) for e in target.api.get_commits(branch("main"))]

    first, second = run(), run()
    assert len(first) == 20
    assert first == second


def test_cli_generate_then_commits_on_rocksdb_leaves_a_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    code = main(
        [
            "generate",
            "--backend",
            "rocksdb",
            "-n",
            "25",
            "-t",
            "10",
            "--puts-per-commit",
            "5",
            "--key-pattern",
            "db_${every,10,uuid}.tbl_${seq,0}",
            "--seed",
            "4",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    doc = json.loads((out / "run.json").read_text())
    assert doc["schema_version"] == 1
    assert doc["status"] == "ok"
    assert doc["seed"] == 4
    assert doc["target"]["backend"] == "rocksdb"
    assert doc["totals"]["commits"] == 25
    assert doc["machine"]["cores"] >= 1
    table = pq.read_table(out / "events.parquet")
    commits = [r for r in table.to_pylist() if r["action"] == "commitMultipleOperations"]
    assert len(commits) == 25
    assert all(r["outcome"] == "ok" and r["attempts"] == 1 for r in commits)
    assert str(table.schema.field("start").type) == "timestamp[ns, tz=UTC]"
    capsys.readouterr()
    assert main(["content-generator", "commits", "--backend", "rocksdb", "-L", "3"]) == 0
    assert capsys.readouterr().out.count("Commit #") == 3


def test_generate_commits_under_the_policy_it_is_given_and_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    landed: list[object] = []
    real_commit = GroupPolicy.commit

    def counted(self: GroupPolicy, store: Any, request: Any) -> Any:
        landed.append(request)
        return real_commit(self, store, request)

    monkeypatch.setattr(GroupPolicy, "commit", counted)
    out = tmp_path / "run"
    argv = ["generate", "--backend", "inmemory", "-n", "3", "--policy", "group", "--out", str(out)]
    assert main(argv) == 0
    assert len(landed) == 3
    assert json.loads((out / "run.json").read_text())["parameters"]["policy"] == "group"
    # Without --policy, the store's default is applied and recorded by name.
    assert main(["generate", "--backend", "inmemory", "-n", "1", "--out", str(tmp_path / "default")]) == 0
    assert json.loads((tmp_path / "default" / "run.json").read_text())["parameters"]["policy"] == "nessie"


@pytest.mark.parametrize("policy", ["immediate", "fair", "group"])
def test_a_policy_a_nessie_server_cannot_apply_is_a_usage_error_before_it_is_reached(
    policy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing listens on port 1: reaching it would be exit code 5, not 2.
    assert main(["generate", "--uri", "http://127.0.0.1:1/api/v2", "--policy", policy]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lochkit generate: --policy {policy} does not apply to a Nessie server")
    assert "Over REST use 'nessie'" in err
    assert len(err.splitlines()) == 1


def test_the_policies_a_nessie_server_can_apply_pass_on_to_the_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # As for lochkit experiment: nessie and coordinated (one commit per branch at a time from this
    # client) apply over REST, so the run goes on and meets the unreachable server (exit code 5).
    for policy in ("nessie", "coordinated"):
        assert main(["generate", "--uri", "http://127.0.0.1:1/api/v2", "--policy", policy]) == 5
        assert "does not apply" not in capsys.readouterr().err


def test_errors_name_the_command_as_it_was_typed(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["generate"], ["content-generator", "generate"]):
        assert main([*command, "--backend", "inmemory", "--type", "NOPE"]) == 2
        assert capsys.readouterr().err.startswith(f"lochkit {' '.join(command)}: ")


def test_cli_usage_errors_exit_2_and_missing_refs_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--backend", "inmemory", "--key-pattern", "${bad"]) == 2
    assert "at col #" in capsys.readouterr().err
    assert main(["generate", "--backend", "inmemory", "--type", "NOPE"]) == 2
    assert main(["generate", "--backend", "inmemory", "-d", "PT0S"]) == 2
    assert main(["content-generator", "content", "--backend", "inmemory", "-r", "nope", "-k", "a"]) == 1
    assert "not found" in capsys.readouterr().err
    # Reading a store that outlives the command creates nothing there: no repository is an error.
    empty = str(tmp_path / "empty")
    assert main(["content-generator", "refs", "--backend", "rocksdb", "--url", empty]) == 1
    assert f"no repository '' at rocksdb://{empty}" in capsys.readouterr().err


def test_run_directory_keeps_events_in_row_groups(tmp_path: Path) -> None:
    from loadgen.runs.events import Event, EventWriter

    with EventWriter(tmp_path / "e.parquet", row_group_rows=10) as writer:
        for i in range(25):
            writer.add(Event(i, i, "w", "commitMultipleOperations", puts=1))
    assert pq.ParquetFile(tmp_path / "e.parquet").num_row_groups == 3
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "x").write_text("")
    with pytest.raises(FileExistsError):
        RunDirectory(tmp_path / "r", "generate", [], {}, {}, None)


def _tables_without_namespaces(target: Target, ref: str) -> None:
    """Leave ``a.b.t1`` and ``x.t2`` on ``ref`` with none of their namespaces. In-process: a second
    store over the same database with namespace validation off. On a Nessie server (validation on,
    not configurable per request): Nessie checks namespaces against the head's index only, so a
    commit that deletes the namespaces while it adds the tables under them is accepted and leaves
    them missing."""
    api = target.api
    head = api.create_reference(branch(ref), api.reference(branch(api.default_branch())).hash).hash
    tables = [
        Put(ContentKey.of("a", "b", "t1"), IcebergTable(metadata_location="m1")),
        Put(ContentKey.of("x", "t2"), IcebergTable(metadata_location="m2")),
    ]
    if isinstance(api, VersionStore):
        persist = api.persist
        if isinstance(persist, CachingPersist):  # in-process targets read through the object cache
            persist = persist.delegate
        assert isinstance(persist, AdapterPersist)
        relaxed = AdapterPersist(persist.adapter, persist.config.with_changes(namespace_validation=False))
        VersionStore(relaxed).commit(branch(ref), head, CommitMeta("no namespaces"), tables)
        return
    namespaces = [ContentKey.of("a"), ContentKey.of("a", "b"), ContentKey.of("x")]
    head = api.commit(
        branch(ref),
        head,
        CommitMeta("namespaces"),
        [Put(k, Namespace(elements=k.elements)) for k in namespaces],
    ).hash
    api.commit(branch(ref), head, CommitMeta("tables"), [*tables, *(Delete(k) for k in namespaces)])


def test_create_missing_namespaces_creates_every_missing_ancestor_once(target: Target) -> None:
    ref = f"ns-{_unique()}"
    _tables_without_namespaces(target, ref)
    assert {k for k, e in _entries(target, ref).items() if e.payload == Namespace.PAYLOAD} == set()
    lines: list[str] = []
    recorder = Recorder(None)
    assert (
        m.create_missing_namespaces(target.api, [ref], "me", True, recorder, lines.append, lines.append) == 0
    )
    assert any("created 3 namespaces" in line for line in lines), lines
    entries = _entries(target, ref)
    created = {k for k, e in entries.items() if e.payload == Namespace.PAYLOAD}
    assert created == {ContentKey.of("a"), ContentKey.of("a", "b"), ContentKey.of("x")}
    namespace = entries[ContentKey.of("a", "b")].content
    assert isinstance(namespace, Namespace)
    assert namespace.elements == ("a", "b")
    assert next(target.api.get_commits(branch(ref))).meta.message == "Create namespaces a, a.b, x"
    # A second run finds nothing missing and commits nothing.
    head = target.api.reference(branch(ref)).hash
    lines.clear()
    assert (
        m.create_missing_namespaces(target.api, [ref], "me", False, recorder, lines.append, lines.append) == 0
    )
    assert any("created 0 namespaces" in line for line in lines), lines
    assert target.api.reference(branch(ref)).hash == head
