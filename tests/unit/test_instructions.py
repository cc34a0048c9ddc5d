"""``lochkit bench --instructions``: instructions per commit from two counted runs, subtracted.

callgrind itself is stood in for by a script that runs the real child without instrumentation and
writes a total that grows by a known amount per commit, so these tests check lochkit's part (the
child, the arguments, the subtraction, the errors) in seconds. The real counts are a benchmark
(docs/commit-cost.md)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from loadgen import instructions
from loadgen.commit_bench import build_parser, validate
from persist_spi.errors import InputError

#: What the stand-in counts: a fixed start-up, then this many per put of each commit.
PER_PUT = 1000

_STAND_IN = f"""#!{sys.executable}
import re, subprocess, sys
args = sys.argv[1:]
out = next(a.split("=", 1)[1] for a in args if a.startswith("--callgrind-out-file="))
command = args[args.index("--callgrind-out-file=" + out) + 1:]
done = subprocess.run(command)
puts = int(command[command.index("--puts") + 1])
commits = int(command[command.index("--commits") + 1])
with open(out, "w") as f:
    f.write("events: Ir\\n")
    f.write(f"summary: {{5_000_000 + {PER_PUT} * puts * commits}}\\n")
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
    assert counted.per_commit == 10 * PER_PUT  # the start-up cancels out


def test_the_markdown_table_gives_millions_per_commit() -> None:
    table = instructions.markdown([instructions.InstructionCount("inmemory", 1, 200, 1_510_000.0)])
    assert "| inmemory | 1 | 1.51 |" in table


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
