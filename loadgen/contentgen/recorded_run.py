"""A content-generator run inside its run directory: the events recorded as they happen, the totals
written to ``run.json`` and the summary printed, also when the run fails or is interrupted, so what
it did before is never lost (``run.json``'s totals then carry the error too)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from loadgen.contentgen.generate import COMMIT
from loadgen.contentgen.recording import Recorder
from loadgen.contentgen.summary import render, totals
from loadgen.runs import RunDirectory
from loadgen.runs.run_dir import command_line
from loadgen.targets import Target

#: What a run does: given the target's API and the recorder, returns the command's exit code.
Body = Callable[[Any, Recorder], int]


def recorded_run(
    command: str,
    *,
    target: Target,
    body: Body,
    path: Path,
    parameters: Mapping[str, Any],
    seed: int | None = None,
    seed_drawn: bool = False,
) -> int:
    """Run ``body`` recording into a new run directory at ``path``, then print the summary on
    stderr; an exception from ``body`` finishes the directory as failed (or interrupted), prints
    the summary of what was done, and goes on to the caller for its one-line message."""

    def summary(doc: dict[str, Any]) -> str:
        return render(doc, target, str(path), COMMIT, seed=seed, seed_drawn=seed_drawn)

    with RunDirectory(
        path,
        command,
        command_line(),
        target.facts(),
        dict(parameters),
        seed,
        info={"seed_drawn": seed_drawn} if seed is not None else {},
    ) as run_dir:
        recorder = Recorder(run_dir.events)
        started = time.perf_counter()
        try:
            code = body(target.api, recorder)
        except BaseException as e:
            doc = totals(recorder, target, time.perf_counter() - started, COMMIT)
            doc["error"] = f"{type(e).__name__}: {e}"
            run_dir.finish("interrupted" if isinstance(e, KeyboardInterrupt) else "failed", doc)
            if recorder.calls():  # a run that did nothing has nothing to sum up
                print(summary(doc), file=sys.stderr)
            raise
        doc = totals(recorder, target, time.perf_counter() - started, COMMIT)
        run_dir.finish("ok" if code == 0 else "failed", doc)
    print(summary(doc), file=sys.stderr)
    return int(code)
