"""Run and writer metrics on hand-made events whose answers are known."""

from __future__ import annotations

from typing import Any

import pytest

from reports import run_metrics as rm

from .events import event


def rows_by(df: Any, *keys: str) -> dict[Any, Any]:
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r for r in df.collect()}


def test_throughput_of_a_long_run_is_counted_in_one_second_windows_with_idle_ones_as_zero(
    events_df: Any,
) -> None:
    events = events_df(
        [
            event(second=0.0),
            event(second=0.9),
            event(second=0.95, action="getContent", puts=0),
            event(second=2.5),
            event(second=2.6, outcome="conflict"),
            event(second=29.5, duration_ms=500.0),  # the run lasts 30 s
        ]
    )
    bounds = rm.run_bounds(events)
    got = rows_by(rm.throughput(events, bounds), "window")
    assert sorted(got) == list(range(30))
    assert {r["window_s"] for r in got.values()} == {1.0}
    assert (got[0]["start_s"], got[0]["ops"], got[0]["commits"], got[0]["failed"]) == (0.0, 3, 2, 0)
    assert got[0]["commits_per_s"] == 2.0
    assert (got[1]["ops"], got[1]["commits"]) == (0, 0)
    assert (got[2]["start_s"], got[2]["ops"], got[2]["commits"], got[2]["failed"]) == (2.0, 2, 1, 1)
    assert (got[29]["start_s"], got[29]["commits"]) == (29.0, 1)


def test_a_short_run_is_counted_in_twenty_equal_windows(events_df: Any) -> None:
    """A run of a third of a second (as `lochkit generate -n 200` on RocksDB) is no single point: its
    windows are a twentieth of it, and none of them is a partial one."""
    events = events_df([event(second=i * 0.002, duration_ms=0.0) for i in range(171)])
    got = rows_by(rm.throughput(events, rm.run_bounds(events)), "window")
    assert sorted(got) == list(range(20))
    assert all(r["window_s"] == pytest.approx(0.017) for r in got.values())
    assert got[19]["start_s"] == pytest.approx(0.323)
    assert sum(r["commits"] for r in got.values()) == 171
    assert got[0]["commits_per_s"] == pytest.approx(got[0]["commits"] / 0.017)


def test_latency_percentiles_of_successful_calls_per_worker_and_action(events_df: Any) -> None:
    rows = [event(duration_ms=float(ms)) for ms in range(1, 101)]
    rows.append(event(duration_ms=5000.0, outcome="retry-timeout"))  # failures are not latency
    got = rm.latency(events_df(rows)).collect()
    assert len(got) == 1
    row = got[0]
    assert row["calls"] == 100
    assert (row["p50_ms"], row["p90_ms"], row["p99_ms"], row["max_ms"]) == (50.0, 90.0, 99.0, 100.0)


def test_writer_shares_sum_to_one_and_jain_index_matches_the_formula(events_df: Any, spark: Any) -> None:
    rows = [event(worker="a", second=i * 0.01) for i in range(30)]
    rows += [event(worker="b", second=i * 0.01, puts=10) for i in range(10)]
    events = events_df(rows)
    bounds = rm.run_bounds(events)
    writers = rm.writers(events, bounds)
    got = rows_by(writers, "worker")
    assert got["a"]["share"] == pytest.approx(0.75)
    assert got["b"]["share"] == pytest.approx(0.25)
    assert got["b"]["puts_per_commit"] == pytest.approx(10.0)
    runs = spark.createDataFrame(
        [("r1", "rocksdb", "lochkit", "s", "nessie", "1", None, None, "finished")],
        "run_id STRING, backend STRING, target STRING, scenario STRING, policy STRING, "
        "lochkit_version STRING, started_at TIMESTAMP, ended_at TIMESTAMP, status STRING",
    )
    summary = rm.runs_summary(runs, events, bounds, writers).collect()[0]
    # (30 + 10)^2 / (2 * (30^2 + 10^2)) = 1600 / 2000
    assert summary["jain_index"] == pytest.approx(0.8)
    assert summary["commits"] == 40
    assert summary["writers"] == 2
    assert summary["puts_per_commit"] == "1,10"


def test_jain_index_is_one_for_equal_writers_and_one_over_n_when_one_takes_all(spark: Any) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame(
        [
            ("even", 5.0),
            ("even", 5.0),
            ("even", 5.0),
            ("one", 9.0),
            ("one", 0.0),
            ("one", 0.0),
            ("none", 0.0),
        ],
        "g STRING, x DOUBLE",
    )
    got = {r["g"]: r["j"] for r in df.groupBy("g").agg(rm.jain_index(F.col("x")).alias("j")).collect()}
    assert got["even"] == pytest.approx(1.0)
    assert got["one"] == pytest.approx(1 / 3)
    assert got["none"] is None


def test_a_writer_under_five_percent_or_with_a_retry_timeout_is_starved(events_df: Any) -> None:
    rows = [event(worker="big", second=i * 0.001) for i in range(96)]
    rows += [event(worker="small", second=i * 0.001, puts=10) for i in range(4)]  # 4 %
    rows += [event(worker="timed-out", second=0.5, puts=10) for _ in range(10)]
    rows.append(event(worker="timed-out", second=0.6, puts=10, outcome="retry-timeout", attempts=40))
    rows += [event(worker="reader", second=0.1, action="getContent", puts=0)]
    events = events_df(rows)
    got = rows_by(rm.writers(events, rm.run_bounds(events)), "worker")
    assert set(got) == {"big", "small", "timed-out"}  # a reader is no writer
    assert got["small"]["share"] == pytest.approx(4 / 110)
    assert got["small"]["starved"] is True
    assert got["timed-out"]["starved"] is True
    assert got["timed-out"]["retry_timeouts"] == 1
    assert got["timed-out"]["attempts_max"] == 40
    assert got["big"]["starved"] is False


def test_a_lone_writer_is_not_starved(events_df: Any) -> None:
    events = events_df([event(worker="only")])
    (row,) = rm.writers(events, rm.run_bounds(events)).collect()
    assert row["share"] == 1.0
    assert row["starved"] is False


def test_attempts_histogram_counts_commit_events_per_attempt_count(events_df: Any) -> None:
    rows = [event(attempts=1)] * 3 + [event(attempts=2)] * 2 + [event(attempts=4, outcome="conflict")]
    got = rows_by(rm.attempts_histogram(events_df(rows)), "attempts")
    assert {k: (v["commit_events"], v["ok"]) for k, v in got.items()} == {1: (3, 3), 2: (2, 2), 4: (1, 0)}


def test_commits_per_second_divides_by_the_run_span(events_df: Any) -> None:
    rows = [event(second=float(i), duration_ms=0.0) for i in range(11)]  # 11 commits over 10 s
    events = events_df(rows)
    (row,) = rm.writers(events, rm.run_bounds(events)).collect()
    assert row["commits_per_s"] == pytest.approx(1.1)


def test_latency_cdf_runs_from_the_minimum_to_the_maximum(events_df: Any) -> None:
    rows = [event(duration_ms=float(ms)) for ms in range(1, 201)]
    points = rm.latency_cdf(events_df(rows)).collect()
    assert (points[0]["quantile"], points[0]["latency_ms"]) == (0.0, 1.0)
    assert (points[-1]["quantile"], points[-1]["latency_ms"]) == (1.0, 200.0)
    assert [p["latency_ms"] for p in points] == sorted(p["latency_ms"] for p in points)
    half = next(p for p in points if p["quantile"] == 0.5)
    assert half["latency_ms"] == 100.0
