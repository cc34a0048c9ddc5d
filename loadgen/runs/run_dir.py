"""The run directory and its ``run.json``: what ran, against what, with which parameters and seed,
on which machine, and when. ``run.json`` is written when the run starts (``ended_at`` null) and
rewritten when it ends, so an interrupted run still says what it was."""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import sys
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from loadgen.runs.events import EventWriter

SCHEMA_VERSION: Final = 1
RUN_JSON: Final = "run.json"
EVENTS: Final = "events.parquet"
#: Where runs go by default, relative to the working directory.
DEFAULT_RUNS_ROOT: Final = Path(".lochkit") / "runs"


def lochkit_version() -> str:
    try:
        return version("lochkit")
    except PackageNotFoundError:
        return "unknown"


def machine_facts() -> dict[str, Any]:
    memory = 0
    with contextlib.suppress(ValueError, OSError, AttributeError):
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        "cores": os.cpu_count() or 0,
        "memory_bytes": memory,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "hostname": platform.node(),
    }


def _now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")


def default_run_dir(command: str, root: Path = DEFAULT_RUNS_ROOT) -> Path:
    """A new directory ``<root>/<UTC time>-<command>[-N]`` that does not exist yet."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = root / f"{stamp}-{command}"
    n = 1
    while candidate.exists():
        n += 1
        candidate = root / f"{stamp}-{command}-{n}"
    return candidate


@dataclass
class RunDirectory:
    """A run being recorded. Use as a context manager: it finishes the run (``ended_at``, status,
    totals) also when the run fails or is interrupted, unless the command finished it itself."""

    path: Path
    command: str
    argv: list[str]
    target: dict[str, Any]
    parameters: dict[str, Any]
    seed: int | None
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.path.exists() and any(self.path.iterdir()):
            raise FileExistsError(
                f"Run directory {self.path} exists and is not empty; give a new --out directory"
            )
        self.path.mkdir(parents=True, exist_ok=True)
        self.started_at = _now_iso()
        self.finished = False
        self.events = EventWriter(self.path / EVENTS)
        self._write(ended_at=None, status="running", totals={})

    def _write(self, *, ended_at: str | None, status: str, totals: dict[str, Any]) -> None:
        doc = {
            "schema_version": SCHEMA_VERSION,
            "lochkit_version": lochkit_version(),
            "command": self.command,
            "command_line": self.argv,
            "target": self.target,
            "parameters": self.parameters,
            "seed": self.seed,
            "machine": machine_facts(),
            "started_at": self.started_at,
            "ended_at": ended_at,
            "status": status,
            "totals": totals,
            **self.info,
        }
        tmp = self.path / (RUN_JSON + ".tmp")
        tmp.write_text(json.dumps(doc, indent=2, default=str) + "\n")
        tmp.replace(self.path / RUN_JSON)

    def finish(self, status: str, totals: dict[str, Any]) -> None:
        self.events.close()
        self._write(ended_at=_now_iso(), status=status, totals=totals)
        self.finished = True

    def __enter__(self) -> RunDirectory:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if exc_type is None or self.finished:  # finished by the command, with its own totals
            return
        status = "interrupted" if exc_type is KeyboardInterrupt else "failed"
        self.finish(status, {"error": f"{exc_type.__name__}: {exc}"})


def command_line() -> list[str]:
    return [Path(sys.argv[0]).name, *sys.argv[1:]]
