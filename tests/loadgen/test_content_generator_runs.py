"""What a content-generator run prints and records beyond its commits: the summary and run.json of a
run that fails or is interrupted, the progress bar (on a terminal only), and the seed."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import loadgen.targets.opening
from loadgen.targets import Target
from persist_spi.errors import BackendUnavailable
from persist_spi.versionstore.content import Content, ContentKey
from persist_spi.versionstore.operations import Operation, Put

from .run_files import commit_events, run_json

if TYPE_CHECKING:  # fixtures of conftest.py
    from .conftest import CliResult, RocksRepository

Cli = Callable[..., "CliResult"]


class _FailingCommits:
    """The target's API, except that commit number ``fail_at`` (1-based) raises ``error``."""

    def __init__(self, api: Any, fail_at: int, error: BaseException) -> None:
        self._api = api
        self._fail_at = fail_at
        self._error = error
        self.commits = 0

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        self.commits += 1
        if self.commits == self._fail_at:
            raise self._error
        return self._api.commit(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)


def fail_commit(monkeypatch: pytest.MonkeyPatch, fail_at: int, error: BaseException) -> None:
    """Make the next command's target fail its ``fail_at``-th commit with ``error``."""
    real_open = loadgen.targets.opening.open_target

    @contextlib.contextmanager
    def failing_open(*args: Any, **kwargs: Any) -> Iterator[Target]:
        with real_open(*args, **kwargs) as target:
            target.api = _FailingCommits(target.api, fail_at, error)
            yield target

    monkeypatch.setattr(loadgen.targets.opening, "open_target", failing_open)


# --- failed and interrupted runs -------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", "-n", "10", "--key-pattern", "f.t${seq,0}", "-t", "3"],
        ["content-generator", "copy", "-n", "10", "-k", "src", "-k", "t", "-t", "src", "-t", "copy%d"],
    ],
    ids=["generate", "copy"],
)
def test_a_backend_error_mid_run_still_sums_up_what_was_done(
    cli: Cli, rocks: RocksRepository, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    rocks.add_tables("main", [ContentKey.of("src", "t")])
    before = len(rocks.log("main"))
    fail_commit(monkeypatch, 4, BackendUnavailable("rocksdb", "here", "the database went away", "restart it"))

    done = cli(*argv, *rocks.args, "--out", "run")

    assert done.code == 5  # the database cannot be reached: persist_spi.exit_codes.UNAVAILABLE
    lines = done.err.strip().splitlines()
    error = "rocksdb at here: the database went away. restart it"
    assert lines[-1].endswith(f": {error}")  # the one-line error comes last...
    assert "Commits:     3 ok, 0 conflicts, 1 errors" in lines  # ...after the summary
    assert f"Stopped:     BackendUnavailable: {error}" in lines
    doc = run_json(Path("run"))
    assert doc["status"] == "failed"
    assert doc["totals"]["commits"] == 3
    assert doc["totals"]["errors"] == 1
    assert doc["totals"]["error"] == f"BackendUnavailable: {error}"
    assert [e["outcome"] for e in commit_events(Path("run"))] == ["ok", "ok", "ok", "error"]
    assert len(rocks.log("main")) == before + 3


def test_a_conflict_without_continue_on_error_stops_the_run_with_exit_1(
    cli: Cli, rocks: RocksRepository
) -> None:
    # A view cannot replace the table at k.t0 (see test_generate_options.py): the first commit that
    # draws it conflicts and, without --continue-on-error, ends the run.
    rocks.add_tables("main", [ContentKey.of("k", "t0")])
    before = len(rocks.log("main"))
    done = cli(
        "generate", *rocks.args, "--type", "ICEBERG_VIEW", "--key-pattern", "k.t${seq,0}", "-t", "3",
        "-n", "40", "--seed", "3", "--out", "run",
    )  # fmt: skip

    assert done.code == 1  # a failed commit, not a usage error (the store's refusal is a ValueError too)
    events = commit_events(Path("run"))
    assert [e["outcome"] for e in events[:-1]] == ["ok"] * (len(events) - 1)
    assert events[-1]["outcome"] == "conflict"
    assert events[-1]["error_kind"] == "PAYLOAD_DIFFERS"
    landed = len(events) - 1
    assert landed >= 1  # under this seed the first commits draw the free keys
    doc = run_json(Path("run"))
    assert doc["status"] == "failed"
    assert (doc["totals"]["commits"], doc["totals"]["conflicts"]) == (landed, 1)
    assert doc["totals"]["error"].startswith("InvalidOperation: Key 'k.t0' holds content of another type")
    assert f"Commits:     {landed} ok, 1 conflicts, 0 errors" in done.err
    assert done.err.strip().splitlines()[-1].startswith("lochkit generate: ")
    assert len(rocks.log("main")) == before + landed


def test_an_interrupted_run_is_recorded_as_interrupted_with_its_totals(
    cli: Cli, rocks: RocksRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_commit(monkeypatch, 3, KeyboardInterrupt())
    done = cli("generate", *rocks.args, "-n", "10", "--out", "run")
    assert done.code == 130
    assert "Commits:     2 ok, 0 conflicts, 1 errors" in done.err
    doc = run_json(Path("run"))
    assert doc["status"] == "interrupted"
    assert doc["totals"]["commits"] == 2
    assert doc["ended_at"] is not None
    # The interrupted call may or may not have landed: never counted as a commit.
    assert [(e["outcome"], e["error_kind"]) for e in commit_events(Path("run"))] == [
        ("ok", None),
        ("ok", None),
        ("error", "KeyboardInterrupt"),
    ]


# --- progress --------------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


BULK_COMMANDS = {
    "copy": (["-n", "3", "-k", "b", "-k", "t0", "-t", "b", "-t", "{run}%d"], "Created ", "[###"),
    "delete": (["-k", "b", "-R", "-B", "1"], "Deleted ", "keys"),
    "content-refresh": (["-k", "b", "-R", "-B", "1"], "Refreshed ", "keys"),
}


@pytest.mark.parametrize("command", list(BULK_COMMANDS))
def test_bulk_commands_show_a_bar_on_a_terminal_and_step_lines_otherwise(
    cli: Cli, rocks: RocksRepository, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    options, step, bar = BULK_COMMANDS[command]
    rocks.add_tables("main", [ContentKey.of("b", "t0"), ContentKey.of("b", "t1")])

    plain = cli("content-generator", command, *rocks.args, *[o.format(run="plain") for o in options])
    assert plain.code == 0, plain.err
    assert "\r" not in plain.err  # off a terminal: no bar...
    assert plain.out.count(step) >= 2  # ...but a line per step

    if command == "delete":
        rocks.add_tables("main", [ContentKey.of("b", "t0"), ContentKey.of("b", "t1")])
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    on_terminal = cli("content-generator", command, *rocks.args, *[o.format(run="tty") for o in options])
    assert on_terminal.code == 0, terminal.getvalue()
    shown = terminal.getvalue()
    assert f"\r{command} " in shown
    assert bar in shown
    assert "/s" in shown
    assert step not in on_terminal.out  # the bar replaces the step lines


# --- the seed --------------------------------------------------------------------------------------


def _without_id(op: Operation) -> Content:
    assert isinstance(op, Put), f"the generator only puts, got {op}"
    return dataclasses.replace(op.content, id=None)


def _draws(rocks: RocksRepository) -> list[tuple[str, list[tuple[ContentKey, Any]]]]:
    """Each commit's message and puts, without content ids (which only a given seed fixes)."""
    return [
        (
            entry.meta.message,
            [(op.key, _without_id(op)) for op in entry.operations or ()],
        )
        for entry in reversed(rocks.log("main"))
    ]


def test_an_unseeded_run_records_the_seed_it_drew_and_that_seed_replays_its_draws(
    cli: Cli, new_rocks: Callable[[str], RocksRepository]
) -> None:
    pattern = ["-n", "8", "-t", "6", "--puts-per-commit", "3", "--key-pattern", "s${every,3,uuid}.t${seq,0}"]
    first, replay = new_rocks("first"), new_rocks("replay")

    unseeded = cli("generate", *first.args, *pattern, "--out", "unseeded")
    assert unseeded.code == 0, unseeded.err
    doc = run_json(Path("unseeded"))
    seed = doc["seed"]
    assert isinstance(seed, int)
    assert doc["seed_drawn"] is True
    assert doc["parameters"]["seed"] is None  # what was given
    assert f"Seed:        {seed} (drawn; --seed {seed} replays" in unseeded.err

    seeded = cli("generate", *replay.args, *pattern, "--seed", str(seed), "--out", "seeded")
    assert seeded.code == 0, seeded.err
    assert run_json(Path("seeded"))["seed"] == seed
    assert run_json(Path("seeded"))["seed_drawn"] is False
    drawn = _draws(first)
    assert len(drawn) == 8
    assert _draws(replay) == drawn  # same keys (uuids included), same contents, same order
