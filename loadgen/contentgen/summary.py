"""The one-screen summary a load command prints at the end (also after a failure: what it did until
then, and why it stopped), and the totals ``run.json`` keeps."""

from __future__ import annotations

from array import array
from typing import Any

from loadgen.contentgen.recording import Recorder
from loadgen.runs.events import CONFLICT, ERROR, OK, RETRY_TIMEOUT
from loadgen.targets import Target


def percentile(sorted_values: list[int], p: float) -> int:
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, round(p / 100 * (len(sorted_values) - 1)))]


def latency_ms(values: array[int] | None) -> dict[str, float]:
    data = sorted(values or ())
    return {
        "p50_ms": round(percentile(data, 50) / 1e6, 3),
        "p99_ms": round(percentile(data, 99) / 1e6, 3),
        "max_ms": round((data[-1] if data else 0) / 1e6, 3),
    }


def totals(recorder: Recorder, target: Target, elapsed_s: float, commit_action: str) -> dict[str, Any]:
    commits_ok = recorder.count(commit_action, OK)
    doc: dict[str, Any] = {
        "elapsed_s": round(elapsed_s, 3),
        "commits": commits_ok,
        "commits_per_s": round(commits_ok / elapsed_s, 1) if elapsed_s > 0 else 0.0,
        "conflicts": sum(n for (_, o), n in recorder.outcomes.items() if o == CONFLICT),
        "errors": sum(n for (_, o), n in recorder.outcomes.items() if o in (ERROR, RETRY_TIMEOUT)),
        "calls": recorder.calls(),
        "commit_latency": latency_ms(recorder.durations.get(commit_action)),
        "latency_by_action": {a: latency_ms(v) for a, v in sorted(recorder.durations.items())},
    }
    timer = target.request_timer
    if timer is not None and timer.requests:
        overhead = max(recorder.op_nanos / 1e9 - timer.seconds, 0.0)
        doc["http"] = {
            "requests": timer.requests,
            "round_trip_s": round(timer.seconds, 3),
            # Time in API calls not spent waiting for an HTTP answer: JSON, model conversion, our code.
            "client_overhead_us_per_request": round(overhead / timer.requests * 1e6, 1),
        }
    return doc


def render(
    doc: dict[str, Any],
    target: Target,
    run_dir: str,
    commit_action: str,
    *,
    seed: int | None = None,
    seed_drawn: bool = False,
) -> str:
    lines = [
        "",
        f"Target:      {target.describe()}",
        f"Run:         {run_dir}",
    ]
    if seed is not None:
        replay = f" (drawn; --seed {seed} replays its keys, contents and draws)" if seed_drawn else ""
        lines.append(f"Seed:        {seed}{replay}")
    lines += [
        f"Elapsed:     {doc['elapsed_s']:.2f} s",
        f"Commits:     {doc['commits']} ok, {doc['conflicts']} conflicts, {doc['errors']} errors",
        f"Throughput:  {doc['commits_per_s']:.1f} commits/s",
    ]
    lat = doc["commit_latency"]
    lines.append(
        f"{commit_action}: p50 {lat['p50_ms']:.2f} ms, p99 {lat['p99_ms']:.2f} ms, max {lat['max_ms']:.2f} ms"
    )
    for action, each in doc["latency_by_action"].items():
        if action != commit_action:
            lines.append(f"  {action}: p50 {each['p50_ms']:.2f} ms, p99 {each['p99_ms']:.2f} ms")
    if "http" in doc:
        http = doc["http"]
        lines.append(
            f"HTTP:        {http['requests']} requests, {http['round_trip_s']:.2f} s in round trips, client "
            f"overhead {http['client_overhead_us_per_request']:.0f} µs/request"
        )
    for note in target.notes:
        lines.append(f"Note:        {note}")
    if "error" in doc:
        lines.append(f"Stopped:     {doc['error']}")
    return "\n".join(lines)
