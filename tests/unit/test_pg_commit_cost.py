"""The pure parts of ``python -m loadgen.pg_commit_cost``: reading /proc's text, grouping the
server's processes, the per-operation arithmetic, the tables and the snippet, and the refusals
before anything starts. The real run against a PostgreSQL server is tests/servers/test_pg_commit_cost.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from conformance import snippets
from loadgen.pg_commit_cost import cli
from loadgen.pg_commit_cost.checks import (
    binaries_problem,
    check_machine,
    parse_configs,
    proc_problem,
)
from loadgen.pg_commit_cost.errors import CannotMeasure
from loadgen.pg_commit_cost.groups import (
    BACKEND,
    EXITED,
    MONITOR,
    MONITOR_APPLICATION,
    OTHER,
    POSTMASTER,
    WALWRITER,
    roles,
)
from loadgen.pg_commit_cost.measure import Run, timed_calls
from loadgen.pg_commit_cost.options import CONFIGS, NAME, OPERATIONS, Options
from loadgen.pg_commit_cost.proc import (
    PROC,
    ProcCpu,
    parse_schedstat,
    parse_stat,
    read_proc,
    server_processes,
)
from loadgen.pg_commit_cost.sample import ClientCost, Sample, sample_of
from loadgen.pg_commit_cost.saved import load_saved, shareable
from loadgen.pg_commit_cost.snapshots import ServerSnapshot, lsn_bytes, server_cpu
from loadgen.pg_commit_cost.tables import ROWS, spread, tables

#: /proc/PID/stat of a PostgreSQL backend (its command name holds a space and parentheses): parent
#: 700, utime 11 + stime 4 ticks, cutime 30 + cstime 12 ticks of reaped children.
STAT = (
    "4321 (postgres: (x) ) S 700 700 700 0 -1 4194560 2000 0 0 0 11 4 30 12 20 0 1 0 "
    "2389934 226000000 5000 18446744073709551615 1 1 0 0 0 0 4194304 19935232 84487 0 0 0 17 1 0 0 0 0 0"
)
SCHEDSTAT = "239174000 1500 42\n"


def _process(proc: Path, pid: str, ppid: int, ticks: int, run_ns: int) -> None:
    (proc / pid).mkdir(parents=True)
    (proc / pid / "stat").write_text(f"{pid} (postgres) S {ppid} 0 0 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0\n")
    (proc / pid / "schedstat").write_text(f"{run_ns} 7 1\n")


# --- /proc ------------------------------------------------------------------------------------------


def test_stat_fields_are_counted_after_the_command_name_whatever_it_holds() -> None:
    assert parse_stat(STAT) == (700, 15, 42)


def test_schedstat_gives_time_on_a_cpu_and_time_waiting_for_one() -> None:
    assert parse_schedstat(SCHEDSTAT) == (239174000, 1500)


def test_a_process_is_read_from_its_directory_and_a_gone_one_is_none(tmp_path: Path) -> None:
    (tmp_path / "4321").mkdir()
    (tmp_path / "4321" / "stat").write_text(STAT)
    (tmp_path / "4321" / "schedstat").write_text(SCHEDSTAT)
    assert read_proc(tmp_path / "4321") == (700, ProcCpu(15, 239174000, 1500, 42))
    assert read_proc(tmp_path / "4322") is None


def test_the_server_is_the_postmaster_and_its_children_only(tmp_path: Path) -> None:
    _process(tmp_path, "700", 1, 5, 50)  # the postmaster
    _process(tmp_path, "701", 700, 6, 60)  # a backend
    _process(tmp_path, "702", 700, 7, 70)  # the WAL writer
    _process(tmp_path, "900", 1, 8, 80)  # someone else's process
    (tmp_path / "self").mkdir()  # not a process directory
    found = server_processes(700, tmp_path)
    assert sorted(found) == [700, 701, 702]
    assert found[702] == ProcCpu(7, 70, 7, 0)


def test_the_real_proc_of_this_process_reads_and_has_a_parent() -> None:
    read = read_proc(PROC / "self")
    assert read is not None
    assert read[0] > 0
    assert read[1].run_ns > 0


# --- grouping ---------------------------------------------------------------------------------------


def test_lochkit_connections_are_the_backend_and_other_processes_go_by_their_kind() -> None:
    activity = [
        (701, "client backend", "lochkit"),
        (702, "walwriter", ""),
        (703, "client backend", "psql"),
        (704, "autovacuum worker", ""),
        (705, "client backend", MONITOR_APPLICATION),
    ]
    assert roles(activity, postmaster=700, monitor=705) == {
        700: POSTMASTER,
        701: BACKEND,
        702: WALWRITER,
        703: "client backend",
        704: "autovacuum worker",
        705: MONITOR,
    }


def _snapshot(
    processes: dict[int, ProcCpu], roles: dict[int, str], lsn: str = "0/0", statements: int = 0
) -> ServerSnapshot:
    wal = dict.fromkeys(("records", "fpi", "bytes_stat", "writes", "syncs", "write_ms", "sync_ms"), 0.0)
    return ServerSnapshot(processes, roles, lsn, wal, statements)


def test_server_cpu_is_the_difference_per_group_with_children_that_came_and_went() -> None:
    roles = {700: POSTMASTER, 701: BACKEND, 702: WALWRITER, 703: "autovacuum worker", 705: MONITOR}
    before = _snapshot(
        {
            700: ProcCpu(10, 100, 1, child_ticks=50),
            701: ProcCpu(20, 200, 2),
            702: ProcCpu(5, 50, 0),
            703: ProcCpu(4, 40, 0),  # an autovacuum worker that exits in between, after 4 + 3 ticks
            705: ProcCpu(1, 10, 0),
        },
        roles,
    )
    after = _snapshot(
        {
            700: ProcCpu(11, 110, 1, child_ticks=57),
            701: ProcCpu(50, 500, 9),
            702: ProcCpu(5, 50, 0),  # idle: still shown
            705: ProcCpu(2, 20, 0),
            706: ProcCpu(3, 30, 0),  # a new process nobody listed
        },
        roles,
    )
    used = server_cpu(before, after)
    assert used == {
        POSTMASTER: ProcCpu(1, 10, 0),
        BACKEND: ProcCpu(30, 300, 7),
        WALWRITER: ProcCpu(),
        EXITED: ProcCpu(ticks=7 - 4),  # the worker's ticks after the first snapshot
        MONITOR: ProcCpu(1, 10, 0),
        OTHER: ProcCpu(3, 30, 0),
    }


def test_idle_groups_other_than_backend_and_walwriter_are_left_out() -> None:
    processes = {700: ProcCpu(1, 1, 1), 701: ProcCpu(3, 3), 702: ProcCpu(4, 4), 710: ProcCpu(2, 2, 2)}
    same = _snapshot(processes, {700: POSTMASTER, 701: BACKEND, 702: WALWRITER, 710: "checkpointer"})
    assert server_cpu(same, same) == {BACKEND: ProcCpu(), WALWRITER: ProcCpu()}


def test_a_wal_position_is_its_high_and_low_words() -> None:
    assert lsn_bytes("0/10") == 16
    assert lsn_bytes("16/B374D848") == (0x16 << 32) + 0xB374D848


# --- the arithmetic ---------------------------------------------------------------------------------


def _sample(**changes: object) -> Sample:
    """100 operations in 0.05 s: 0.5 ms each, 0.3 ms of it the client's CPU."""
    sample = Sample(
        config="bench",
        operation="commit 1 put",
        ops=100,
        wall_s=0.05,
        window_s=0.06,
        client_cpu_s=0.03,
        client_thread_cpu_s=0.029,
        client_runqueue_s=0.002,
        client_voluntary_switches=90,
        server={
            BACKEND: {"cpu_s": 0.02, "run_s": 0.021, "runqueue_s": 0.001},
            WALWRITER: {"cpu_s": 0.001, "run_s": 0.0012, "runqueue_s": 0.0},
            "checkpointer": {"cpu_s": 0.002, "run_s": 0.0, "runqueue_s": 0.0},
            MONITOR: {"cpu_s": 0.5, "run_s": 0.5, "runqueue_s": 0.0},
        },
        wal_bytes=900_000,
        wal={
            "records": 1500.0,
            "fpi": 3.0,
            "bytes_stat": 890_000.0,
            "writes": 100.0,
            "syncs": 50.0,
            "write_ms": 1.0,
            "sync_ms": 9.0,
        },
        statements=100,
        loadavg=(1.5, 1.0, 0.5),
    )
    return replace(sample, **changes)  # type: ignore[arg-type]  # the tests' own field values


def _figures(sample: Sample) -> dict[str, float]:
    return {title: figure(sample) for title, _, figure in ROWS}


def test_each_row_is_a_figure_per_operation() -> None:
    figures = _figures(_sample())
    assert figures["ops/s"] == pytest.approx(2000)
    assert figures["wall ms"] == pytest.approx(0.5)
    assert figures["client CPU ms"] == pytest.approx(0.3)
    assert figures["(calling thread)"] == pytest.approx(0.29)
    assert figures["wait ms (wall - client CPU)"] == pytest.approx(0.2)
    # The monitor is this command's own connection: no part of the server's cost.
    assert figures["server CPU ms"] == pytest.approx(0.23)
    assert figures["backend"] == pytest.approx(0.2)
    assert figures["walwriter"] == pytest.approx(0.01)
    assert figures["others"] == pytest.approx(0.02)
    assert figures["backend CPU ms (schedstat ns)"] == pytest.approx(0.21)
    assert figures["client runqueue wait ms"] == pytest.approx(0.02)
    assert figures["backend runqueue wait ms"] == pytest.approx(0.01)
    assert figures["WAL B/op"] == pytest.approx(9000)
    assert figures["WAL FPI/op"] == pytest.approx(0.03)
    assert figures["WAL writes/op"] == pytest.approx(1.0)
    assert figures["WAL syncs/op"] == pytest.approx(0.5)
    assert figures["WAL write+sync ms/op"] == pytest.approx(0.1)
    assert figures["statements/op"] == pytest.approx(1.0)
    assert figures["client waits/op"] == pytest.approx(0.9)
    assert figures["load avg 1 min"] == pytest.approx(1.5)


def test_a_sample_is_the_difference_of_two_snapshots_less_the_statistics_read() -> None:
    before = _snapshot(
        {700: ProcCpu(10, 0, 0), 701: ProcCpu(20, 1_000, 0)},
        {700: POSTMASTER, 701: BACKEND},
        lsn="1/FFFFFF00",
        statements=41,
    )
    after = _snapshot(
        {700: ProcCpu(10, 0, 0), 701: ProcCpu(45, 2_000_001_000, 5_000_000)},
        {700: POSTMASTER, 701: BACKEND},
        lsn="2/00000100",
        statements=142,
    )
    after.wal["syncs"] = 30.0
    client = ClientCost(
        wall_s=0.5, window_s=0.6, cpu_s=0.2, thread_cpu_s=0.19, runqueue_s=0.01, voluntary_switches=99
    )
    sample = sample_of("durable", "floor cas", 100, client, before, after, (1.0, 2.0, 3.0), ticks_per_s=100)
    assert sample.server[BACKEND] == {"cpu_s": 0.25, "run_s": 2.0, "runqueue_s": 0.005}
    assert POSTMASTER not in sample.server  # idle
    assert sample.wal_bytes == 0x200
    assert sample.wal["syncs"] == 30.0
    assert sample.statements == 100
    assert (sample.wall_s, sample.client_cpu_s, sample.client_voluntary_switches) == (0.5, 0.2, 99)


def test_cells_are_medians_with_the_range_when_repeats_differ() -> None:
    assert spread([3.0, 1.0, 2.0], ".1f") == "2.0 (1.0-3.0)"
    assert spread([2.0, 2.0], ".1f") == "2.0"
    assert spread([1234.5], ",.0f") == "1,234"
    assert spread([], ".1f") == "—"


def test_the_tables_have_an_operation_each_a_row_per_figure_and_a_column_per_configuration() -> None:
    samples = [
        _sample(),
        _sample(wall_s=0.1),  # a second repeat, half as fast
        _sample(config="durable", wall_s=0.2),
        _sample(operation="floor cas", wall_s=0.01),
    ]
    text = tables(samples, ["bench", "durable"])
    assert [line for line in text.splitlines() if line.startswith("### ")] == [
        f"### {operation}" for operation in OPERATIONS
    ]
    assert text.count("| per operation | bench | durable |") == len(OPERATIONS)
    first = text.split("### ")[1].splitlines()
    assert "| ops/s | 1,500 (1,000-2,000) | 500 |" in first
    assert "| wall ms | 0.750 (0.500-1.000) | 2.000 |" in first
    floor_cas = text.split("### floor cas")[1].split("###")[0]
    assert "| ops/s | 10,000 | — |" in floor_cas
    assert all(len(line.split("|")) == 5 for line in text.splitlines() if line.startswith("|"))


def test_options_count_commits_for_commits_and_floor_calls_for_the_floor() -> None:
    options = Options(commits=30, floor_ops=40, warmup=5, repeats=1, configs=("bench",))
    assert [options.calls(op) for op in OPERATIONS] == [30, 30, 40, 40]
    assert options.describe() == "1 repeat of 30 commits and 40 floor calls per cell, after 5 warm-up calls"


def test_timed_calls_time_the_calls_and_not_their_preparation() -> None:
    made: list[int] = []

    def prepare() -> Callable[[], object]:
        made.append(len(made))
        return lambda: sum(range(1000))

    client = timed_calls(prepare, 25)
    assert len(made) == 25
    assert 0 < client.wall_s <= client.window_s
    assert client.cpu_s >= 0
    assert client.voluntary_switches >= 0


# --- refusals before anything starts ----------------------------------------------------------------


def test_configurations_are_named_in_order_without_repeats() -> None:
    assert parse_configs("durable, bench,durable") == ("durable", "bench")
    assert parse_configs(",".join(CONFIGS)) == tuple(CONFIGS)


@pytest.mark.parametrize(
    ("text", "said"),
    [("bench,fast,slow", "unknown configuration 'fast', 'slow'"), (" , ", "no configuration")],
)
def test_an_unknown_or_missing_configuration_says_which_and_what_there_is(text: str, said: str) -> None:
    with pytest.raises(CannotMeasure) as refused:
        parse_configs(text)
    message = str(refused.value)
    assert message.startswith(f"--configs {text!r}: {said}; ")
    assert "bench, bench+sync, durable, durable-async" in message


def test_a_machine_without_proc_is_told_to_run_it_on_linux(tmp_path: Path) -> None:
    problem = proc_problem(tmp_path)
    assert problem is not None
    assert "run it on Linux" in problem
    assert str(tmp_path / "self" / "stat") in problem


def test_a_kernel_without_scheduler_statistics_is_named(tmp_path: Path) -> None:
    (tmp_path / "self").mkdir()
    (tmp_path / "self" / "stat").write_text(STAT)
    problem = proc_problem(tmp_path)
    assert problem is not None
    assert "CONFIG_SCHED_INFO" in problem
    assert "schedstat" in problem


def test_this_machine_has_what_proc_must_give() -> None:
    assert proc_problem() is None


def test_missing_postgres_binaries_are_refused_with_how_to_install_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("provisioning.servers.postgres.server_bindir", lambda: None)
    with pytest.raises(CannotMeasure) as refused:
        check_machine()
    message = str(refused.value)
    assert message.startswith(f"{NAME} cannot run here: ")
    assert "lochkit servers install postgres" in message
    assert "LOCHKIT_POSTGRES_BINDIR" in message
    assert binaries_problem(Path("bin")) is None


def _no_run(options: Options) -> Run:
    raise AssertionError("a refused command line must start nothing")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--configs", "bench,turbo"], "--configs 'bench,turbo': unknown configuration 'turbo'"),
        (["--markdown-out", "no-such-directory/out.md"], "its directory does not exist"),
        (["--report", "saved.json", "--json", "new.json"], "give one of them"),
    ],
)
def test_a_refused_command_line_exits_2_with_one_line_and_starts_nothing(
    argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "run", _no_run)
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"{NAME}: ")
    assert said in err
    assert err.count("\n") == 1


def test_a_machine_that_cannot_run_it_exits_2_before_starting_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "run", _no_run)
    monkeypatch.setattr("provisioning.servers.postgres.server_bindir", lambda: None)
    assert cli.main(["--configs", "bench"]) == 2
    assert "PostgreSQL's server binaries" in capsys.readouterr().err


# --- saved runs and the snippet ---------------------------------------------------------------------


def test_saved_runs_are_pooled_into_the_tables_and_the_snippet_names_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs, here = tmp_path / "runs", tmp_path / "here"
    runs.mkdir()
    here.mkdir()
    monkeypatch.chdir(here)  # the files are in neither the current directory nor the home directory
    first, second = runs / "one.json", runs / "two.json"
    first.write_text(json.dumps({"samples": [asdict(_sample())]}))
    second.write_text(
        json.dumps({"samples": [asdict(_sample(wall_s=0.1)), asdict(_sample(config="durable"))]})
    )
    out = runs / "snippet.md"
    assert cli.main(["--report", str(first), str(second), "--markdown-out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| ops/s | 1,500 (1,000-2,000) | 2,000 |" in printed
    snippet = out.read_text()
    lines = snippet.splitlines()
    assert lines[0] == snippets.MARK
    command = snippets.command_of(snippet)
    assert command == f"python -m loadgen.pg_commit_cost --report one.json two.json --markdown-out {out.name}"
    assert lines[-1].startswith(f"{snippets.WRITTEN_BY}`{command}` on ")
    assert "the samples of 2 saved runs, pooled" in lines[-1]
    assert snippets.body(snippet) == printed.strip()
    assert str(tmp_path) not in snippet


def test_paths_in_the_current_directory_stay_relative_ones_elsewhere_become_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    elsewhere = "/somewhere/else/out.md"
    argv = ["python", "--json", str(tmp_path / "a.json"), f"--markdown-out={elsewhere}", "--commits", "30"]
    shared = shareable(argv)
    assert shared == [
        "python",
        "--json",
        str(tmp_path / "a.json"),
        "--markdown-out=out.md",
        "--commits",
        "30",
    ]
    assert snippets.portable_command(shared) == "python --json a.json --markdown-out=out.md --commits 30"


@pytest.mark.parametrize(("content", "said"), [("not json", "not a file"), ('{"rows": []}', "not a file")])
def test_a_file_that_is_not_a_saved_run_is_refused(tmp_path: Path, content: str, said: str) -> None:
    saved = tmp_path / "saved.json"
    saved.write_text(content)
    with pytest.raises(CannotMeasure, match=said):
        load_saved([saved])
    with pytest.raises(CannotMeasure, match="no such file"):
        load_saved([tmp_path / "missing.json"])


def test_timing_calls_leaves_what_the_caller_froze_frozen() -> None:
    """The measurement freezes the heap as the bench does, and never unfreezes: that would hand a
    test session's (or a benchmark's) own frozen objects back to the collector."""
    import gc

    gc.freeze()
    frozen = gc.get_freeze_count()
    calls: list[int] = []
    cost = timed_calls(lambda: lambda: calls.append(1), 3)
    assert calls == [1, 1, 1]
    assert cost.wall_s >= 0
    assert gc.get_freeze_count() >= frozen
