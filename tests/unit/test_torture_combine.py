"""``lochkit torture --combine``: a long campaign run one backend at a time, published as one table,
and unlike runs refused."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from lochkit.cli import main
from lochkit.commands.torture import LOCAL_BACKENDS
from reliability.campaign import PROFILES, run_campaign
from reliability.combine import load_report, report_from_dict
from reliability.figures import CampaignReport, FuzzFigures


def _scale_run(work: Path, backend: str = "inmemory", seed: int = 1) -> Path:
    """A real (tiny) campaign run, written the way ``lochkit torture --out`` writes it."""
    profile = dataclasses.replace(PROFILES["ci"], scale_commits=3)
    report = run_campaign([backend], profile, parts=["scale"], seed=seed, work=work, log=lambda _: None)
    return _write(work, report)


def _fuzz_run(work: Path, crashes: int = 0) -> Path:
    report = CampaignReport("ci", 1, ("fuzz",), started="2026-01-02T03:04:05+00:00", seconds=120)
    report.fuzz = [FuzzFigures("references", "atheris", 5_000, 60.0, crashes)]
    work.mkdir(parents=True, exist_ok=True)
    return _write(work, report)


def _write(work: Path, report: CampaignReport) -> Path:
    (work / "results.json").write_text(json.dumps(report.as_dict()))
    return work


def test_a_report_reads_back_equal_to_what_was_written(tmp_path: Path) -> None:
    run = _scale_run(tmp_path)
    written = json.loads((run / "results.json").read_text())
    assert json.loads(json.dumps(report_from_dict(written).as_dict())) == written


def test_runs_of_one_backend_each_and_a_fuzzing_run_make_one_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory, rocks = _scale_run(tmp_path / "memory"), _scale_run(tmp_path / "rocks", "rocksdb")
    fuzz = _fuzz_run(tmp_path / "fuzz")
    snippet = tmp_path / "long.md"
    argv = ["torture", "--combine", str(memory), "--combine", str(rocks / "results.json")]
    code = main([*argv, "--combine", str(fuzz), "--markdown-out", str(snippet)])
    out = capsys.readouterr().out
    assert code == 0, out
    text = snippet.read_text()
    assert "| `inmemory` |" in text
    assert "| `rocksdb` |" in text
    assert "| references | atheris | 5,000 | 0 |" in text
    # Crashes, restarts and toxics did not run on these backends; the table must not claim they did.
    assert "not run" in text
    assert "Runs: inmemory: " in text
    assert "; fuzzing: 2026-01-02 03:04 UTC, 2 min" in text
    left_out = [name for name in LOCAL_BACKENDS if name not in ("inmemory", "rocksdb")]
    assert f"Not in these runs: {', '.join(left_out)}." in text
    assert "passed" in out


def test_a_run_without_a_start_time_takes_it_from_its_file(tmp_path: Path) -> None:
    run = _fuzz_run(tmp_path)
    data = json.loads((run / "results.json").read_text())
    del data["started"], data["machine"]  # as runs before reports carried them
    (run / "results.json").write_text(json.dumps(data))
    os.utime(run / "results.json", (1_700_000_120, 1_700_000_120))
    assert load_report(run / "results.json").started == "2023-11-14T22:13:20+00:00"  # mtime - 120 s


@pytest.mark.parametrize(
    ("second", "refusal"),
    [
        (lambda p: _scale_run(p, "rocksdb", seed=2), "seed 2"),
        (lambda p: _scale_run(p), "backend inmemory is in both"),
        (lambda p: [_fuzz_run(p / "a"), _fuzz_run(p / "b")], "fuzzed the decoders"),
    ],
    ids=["other seed", "same backend twice", "two fuzzing runs"],
)
def test_unlike_runs_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], second: Callable[[Path], object], refusal: str
) -> None:
    runs = [str(_scale_run(tmp_path / "first"))]
    second(tmp_path / "second")
    runs += [str(p.parent) for p in sorted((tmp_path / "second").rglob("results.json"))]
    code = main(["torture", *[w for run in runs for w in ("--combine", run)]])
    assert code == 2
    assert refusal in capsys.readouterr().err


def test_runs_of_different_parts_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _scale_run(tmp_path / "first")
    report = run_campaign(
        ["rocksdb"], PROFILES["ci"], parts=["server"], work=tmp_path / "second", log=lambda _: None
    )
    second = _write(tmp_path / "second", report)
    assert main(["torture", "--combine", str(first), "--combine", str(second)]) == 2
    assert "a table needs the same parts on every backend" in capsys.readouterr().err


def test_a_problem_in_any_run_fails_the_combined_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [_scale_run(tmp_path / "memory"), _fuzz_run(tmp_path / "fuzz", crashes=1)]
    assert main(["torture", *[w for run in runs for w in ("--combine", str(run))]]) == 1
    assert "fuzz references: 1 crash(es)" in capsys.readouterr().out


def test_a_directory_without_results_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["torture", "--combine", str(tmp_path)]) == 2
    assert "no results.json there" in capsys.readouterr().err
