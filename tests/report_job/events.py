"""Hand-made events for the report tests."""

from __future__ import annotations

from typing import Any

EVENT_COLUMNS = (
    "run_id STRING, start_ns LONG, duration_ns LONG, worker STRING, action STRING, puts INT, "
    "attempts INT, outcome STRING, error_kind STRING"
)


def event(
    run: str = "r1",
    second: float = 0.0,
    duration_ms: float = 1.0,
    worker: str = "w1",
    action: str = "commitMultipleOperations",
    puts: int = 1,
    attempts: int = 1,
    outcome: str = "ok",
    error_kind: str | None = None,
) -> tuple[Any, ...]:
    return (
        run,
        int(second * 1e9),
        int(duration_ms * 1e6),
        worker,
        action,
        puts,
        attempts,
        outcome,
        error_kind,
    )
