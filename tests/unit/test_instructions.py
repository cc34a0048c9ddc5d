"""``lochkit bench --instructions``: instructions per commit from two counted runs, subtracted.

callgrind itself is stood in for by a script that runs the real child without instrumentation and
writes a total that grows by a known amount per commit, so these tests check lochkit's part (the
child, the arguments, the subtraction, the errors) in seconds. The real counts are a benchmark
(docs/commit-cost.md)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from loadgen import instructions
from loadgen.commit_bench import build_parser, validate
from persist_spi.errors import InputError

#: What the stand-in counts: a fixed start-up, then this many per put of each commit...
PER_PUT = 1000
#: ... and this many per put for building the commit's operations, committed or not.
HARNESS = 300

_STAND_IN = f"""#!{sys.executable}
import re, subprocess, sys
args = sys.argv[1:]
out = next(a.split("=", 1)[1] for a in args if a.startswith("--callgrind-out-file="))
command = args[args.index("--callgrind-out-file=" + out) + 1:]
done = subprocess.run(command)
puts = int(command[command.index("--puts") + 1])
commits = int(command[command.index("--commits") + 1])
# Building a commit's operations counts HARNESS per put whether or not it is committed.
per_put = {HARNESS} if "--no-commit" in command else {PER_PUT} + {HARNESS}
with open(out, "w") as f:
    f.write("events: Ir\\n")
    f.write(f"summary: {{5_000_000 + per_put * puts * commits}}\\n")
sys.exit(done.returncode)
"""


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "bin" / "valgrind"
    script.parent.mkdir()
    script.write_text(_STAND_IN)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{script.parent}")
    return script


def test_instructions_per_commit_are_the_difference_of_two_runs(stand_in: Path) -> None:
    counted = instructions.count("inmemory", puts=10, commits=3, log=lambda _: None)
    # The start-up cancels out, and building the operations is counted apart and taken off.
    assert counted.per_commit == 10 * PER_PUT
    assert counted.harness_per_commit == 10 * HARNESS


def test_the_markdown_table_gives_millions_per_commit() -> None:
    table = instructions.markdown([instructions.InstructionCount("inmemory", 1, 200, 1_510_000.0, 62_000.0)])
    assert "| inmemory | 1 | 1.51 | 0.06 |" in table


def test_a_child_that_does_not_commit_builds_the_same_operations(monkeypatch: pytest.MonkeyPatch) -> None:
    """With --no-commit the child builds every measured commit's operations and commits only its
    warm-up: what it counts is the benchmark's own work, which the count takes off."""
    from loadgen.commit_bench import Bench
    from persist_spi.versionstore.store import VersionStore

    built: list[int] = []
    committed: list[int] = []
    build, commit = Bench.operations, VersionStore.commit

    def counting_build(self: Bench, tables: Any, n: int, puts: int) -> Any:
        built.append(n)
        return build(self, tables, n, puts)

    def counting_commit(self: VersionStore, *args: Any, **kwargs: Any) -> Any:
        committed.append(len(built))
        return commit(self, *args, **kwargs)

    monkeypatch.setattr(Bench, "operations", counting_build)
    monkeypatch.setattr(VersionStore, "commit", counting_commit)
    instructions._commit("inmemory", 2, 5, commit=False)
    assert built == list(range(instructions.WARMUP + 5))
    # Each commit after the set-up's (made before any operations are built) follows one build.
    assert [c for c in committed if c] == list(range(1, instructions.WARMUP + 1))
    built.clear()
    committed.clear()
    instructions._commit("inmemory", 2, 5)
    assert [c for c in committed if c] == list(range(1, instructions.WARMUP + 5 + 1))


def test_a_backend_with_a_server_is_refused_with_the_reason(stand_in: Path) -> None:
    with pytest.raises(InputError, match="postgres does its work in a server process"):
        instructions.count("postgres", puts=1, commits=1)


def test_without_valgrind_the_error_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(instructions.CallgrindMissing, match="apt-get install valgrind"):
        instructions.count("inmemory", puts=1, commits=1)


def test_a_failing_child_is_reported_with_its_output(stand_in: Path) -> None:
    # An unregistered name gets past no check of count(); the child's own error must come through.
    with pytest.raises(instructions.CountedRunFailed, match=r"(?s)exited with 1.*No backend named"):
        instructions._instructions("no-such-backend-here", 1, 1)


@pytest.mark.parametrize(
    ("argv", "commits"), [(["--instructions"], 200), ([], 1000), (["--instructions", "--commits", "7"], 7)]
)
def test_commits_default_to_fewer_when_counting(argv: list[str], commits: int) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    validate(parser, args)
    assert args.commits == commits


def test_counting_instructions_is_lochkits_side_only(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    args = parser.parse_args(["--instructions", "--compare-nessie"])
    with pytest.raises(SystemExit):
        validate(parser, args)
    assert "leave out --compare-nessie" in capsys.readouterr().err
