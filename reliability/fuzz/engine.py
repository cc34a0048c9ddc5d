"""Running fuzz targets: atheris (coverage-guided, libFuzzer) in a child process per target, or
Hypothesis in this process where atheris is not installed.

libFuzzer ends its process when it is done or finds a crash, hence the child process. It starts
from the target's seeds plus a corpus directory it grows, and writes a crashing input to the
artifacts directory; the crash's traceback is kept in the run's log.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from reliability.fuzz.targets import TARGETS, FuzzTarget

MAX_LEN = 4096
#: Seconds one input may take before libFuzzer calls it a hang.
INPUT_TIMEOUT = 10


@dataclass
class FuzzRun:
    target: str
    engine: str
    inputs: int = 0
    seconds: float = 0.0
    seed: int = 0
    crashes: list[Path] = field(default_factory=list)
    #: The traceback (or libFuzzer's report) of the first crash.
    report: str = ""

    @property
    def ok(self) -> bool:
        return not self.crashes and not self.report


def atheris_available() -> bool:
    return importlib.util.find_spec("atheris") is not None


def run_target(name: str, runs: int, seed: int, work_dir: Path, *, engine: str | None = None) -> FuzzRun:
    target = TARGETS[name]
    chosen = engine or ("atheris" if atheris_available() else "hypothesis")
    if chosen == "atheris":
        return _run_atheris(target, runs, seed, work_dir)
    return _run_hypothesis(target, runs, seed, work_dir)


def _write_seeds(target: FuzzTarget, corpus: Path) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    for n, seed in enumerate(target.seeds()):
        (corpus / f"seed-{n:03}").write_bytes(seed)


def _run_atheris(target: FuzzTarget, runs: int, seed: int, work_dir: Path) -> FuzzRun:
    corpus, artifacts = work_dir / target.name / "corpus", work_dir / target.name / "crashes"
    _write_seeds(target, corpus)
    artifacts.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "reliability.fuzz.atheris_main",
        target.name,
        f"-runs={runs}",
        f"-seed={seed}",
        f"-max_len={MAX_LEN}",
        f"-timeout={INPUT_TIMEOUT}",
        "-rss_limit_mb=2048",
        "-print_final_stats=1",
        f"-artifact_prefix={artifacts}/",
        str(corpus),
    ]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    run = FuzzRun(target.name, "atheris", seed=seed, seconds=time.monotonic() - started)
    output = done.stdout + done.stderr
    (work_dir / target.name / "fuzz.log").write_text(output)
    executed = re.search(r"stat::number_of_executed_units:\s*(\d+)", output)
    run.inputs = int(executed.group(1)) if executed else 0
    run.crashes = sorted(p for p in artifacts.iterdir() if p.is_file())
    if done.returncode != 0 or run.crashes:
        run.report = _crash_report(output) or f"atheris exited with {done.returncode}"
    return run


def _crash_report(output: str) -> str:
    marker = output.find("=== Uncaught Python exception: ===")
    if marker >= 0:
        return output[marker : marker + 4000]
    found = re.search(r"==\d+== ERROR: libFuzzer:.*", output)
    return found.group(0) if found else ""


def _run_hypothesis(target: FuzzTarget, runs: int, seed: int, work_dir: Path) -> FuzzRun:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    run = FuzzRun(target.name, "hypothesis", seed=seed)
    examples = [0]
    seeds = target.seeds()

    @hypothesis_seed(seed)
    @settings(
        max_examples=runs,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.one_of(st.binary(max_size=MAX_LEN), st.sampled_from(seeds) if seeds else st.binary()))
    def one(data: bytes) -> None:
        examples[0] += 1
        target.check(data)

    started = time.monotonic()
    try:
        one()
    except Exception as e:  # Hypothesis re-raises the shrunk crash; keep it as the report
        crashes = work_dir / target.name / "crashes"
        crashes.mkdir(parents=True, exist_ok=True)
        run.report = f"{type(e).__name__}: {e}"
    run.inputs = examples[0]
    run.seconds = time.monotonic() - started
    return run
