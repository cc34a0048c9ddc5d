"""One cell of the load comparison: a scenario's users against one server for a while, the
server sampled meanwhile, and the figures of that run.

The users are ``lochkit scenario NAME --uri ...`` (Nessie's perf simulations on locust) in a
process of their own; their run directory's events (one per scenario action, that is one locust
request) give requests/s, latency and the errors, split by what the server answered. The sampler
gives the server's memory and connections."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
import pyarrow.parquet as pq

from loadgen.latency import LATENCY_MAX_US, latency_histogram, ms
from loadgen.runs.events import CONFLICT, ERROR, OK, RETRY_TIMEOUT
from loadgen.serve_load.sampling import Sample, ServerSampler
from loadgen.serve_load.servers import Served

#: Error kinds (``error_kind`` of an event) that are answers of the 4xx family other than a
#: conflict: the version-store exceptions the REST client maps 400, 404 and 409 answers to, and
#: the status of any other 4xx answer.
CLIENT_ERROR_KINDS: Final = frozenset(
    {"ReferenceNotFound", "ReferenceAlreadyExists", "InputError", "InvalidOperation", "ObjTooLarge"}
)
#: How much longer than its run time a scenario process may take (start-up, setup, shutdown).
_GRACE_S: Final = 300.0


class CellFailed(RuntimeError):
    """The scenario process itself failed (not a request: a crash, a wrong option)."""


@dataclass(frozen=True)
class Cell:
    """The figures of one target x users run."""

    target: str
    users: int
    seconds: float
    requests: int
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    #: Answers 500-599.
    server_errors: int
    #: Conflicts (409 with conflict details, or the server's commit retries exhausted).
    conflicts: int
    #: Other 4xx answers (not found, already exists, bad request, unauthorised, ...).
    client_errors: int
    #: Requests with no answer (connection refused or reset, timed out) or another failure.
    no_answer: int
    error_kinds: dict[str, int]
    rss_peak_bytes: int
    rss_end_bytes: int
    connections_peak: int
    samples: list[Sample] = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_cell(
    served: Served,
    scenario: str,
    users: int,
    seconds: int,
    out: Path,
    *,
    extra: Sequence[str] = (),
    interval_s: float = 0.5,
) -> Cell:
    """Run ``users`` users of ``scenario`` against ``served`` for ``seconds``; its run directory
    and the scenario's output go to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    argv = [
        *scenario_command(scenario, served.uri, users, seconds, out / "run"),
        *extra,
    ]
    log = out / "scenario.log"
    with log.open("wb") as output, ServerSampler(served.port, interval_s) as sampler:
        try:
            done = subprocess.run(argv, stdout=output, stderr=subprocess.STDOUT, timeout=seconds + _GRACE_S)
        except subprocess.TimeoutExpired:
            raise CellFailed(f"{scenario} against {served.target} did not end; see {log}") from None
    # 0: no error, 1: requests failed (counted below); anything else is the scenario's own failure.
    if done.returncode not in (0, 1) or not list((out / "run").rglob("events.parquet")):
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
        raise CellFailed(f"{scenario} against {served.target} failed (exit {done.returncode}):\n{tail}")
    return summarise(served.target, users, out / "run", sampler.samples)


def scenario_command(scenario: str, uri: str, users: int, seconds: int, out: Path) -> list[str]:
    """The ``lochkit scenario`` command line of one cell: every user started at once (spawn rate
    = users), for ``seconds``."""
    return [
        sys.executable,
        "-m",
        "lochkit",
        "scenario",
        scenario,
        "--uri",
        uri,
        "--users",
        str(users),
        "--spawn-rate",
        str(users),
        "--run-time",
        f"{seconds}s",
        "--out",
        str(out),
    ]


def summarise(target: str, users: int, run: Path, samples: list[Sample]) -> Cell:
    """The figures of a scenario's run directory (its workers' too) and the server's samples."""
    histogram = latency_histogram()
    kinds: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    first_ns, last_ns, requests = None, None, 0
    for path in sorted(run.rglob("events.parquet")):
        table = pq.read_table(path, columns=["start", "duration_ns", "outcome", "error_kind"])
        starts: list[Any] = table.column("start").cast(pa.int64()).to_pylist()
        durations: list[Any] = table.column("duration_ns").to_pylist()
        outcome_column: list[Any] = table.column("outcome").to_pylist()
        kind_column: list[str | None] = table.column("error_kind").to_pylist()
        for start, duration, outcome, kind in zip(
            starts, durations, outcome_column, kind_column, strict=True
        ):
            requests += 1
            histogram.record_value(min(max(duration // 1000, 1), LATENCY_MAX_US))
            first_ns = start if first_ns is None else min(first_ns, start)
            last_ns = start + duration if last_ns is None else max(last_ns, start + duration)
            outcomes[_family(outcome, kind)] += 1
            if outcome != OK:
                kinds[kind or outcome] += 1
    seconds = (last_ns - first_ns) / 1e9 if first_ns is not None and last_ns is not None else 0.0
    rss = [s.rss_bytes for s in samples]
    return Cell(
        target=target,
        users=users,
        seconds=round(seconds, 3),
        requests=requests,
        requests_per_s=round(requests / seconds, 1) if seconds > 0 else 0.0,
        p50_ms=ms(histogram, 50),
        p99_ms=ms(histogram, 99),
        server_errors=outcomes["5xx"],
        conflicts=outcomes["conflict"],
        client_errors=outcomes["4xx"],
        no_answer=outcomes["no answer"],
        error_kinds=dict(sorted(kinds.items())),
        rss_peak_bytes=max(rss, default=0),
        rss_end_bytes=rss[-1] if rss else 0,
        connections_peak=max((s.connections for s in samples), default=0),
        samples=samples,
    )


def _family(outcome: str, kind: str | None) -> str:
    """ok, conflict, 5xx, 4xx or no answer, for one event."""
    if outcome == OK:
        return "ok"
    if outcome in (CONFLICT, RETRY_TIMEOUT):
        return "conflict"
    kind = kind or ""
    if kind.startswith("HTTP 5"):
        return "5xx"
    if outcome == ERROR and (kind in CLIENT_ERROR_KINDS or kind.startswith("HTTP 4")):
        return "4xx"
    return "no answer"
