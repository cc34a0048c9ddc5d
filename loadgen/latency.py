"""HDR histograms for load runs: latencies in microseconds and attempts per call, in constant
memory however long the run (shared by the experiments and the scenarios)."""

from __future__ import annotations

from typing import Final

from hdrh.histogram import HdrHistogram

#: Latencies are recorded in microseconds, from 1 µs to 2 minutes, with 3 significant digits.
LATENCY_MAX_US: Final = 120_000_000
#: Attempts per commit, 1 to 1,000,000.
ATTEMPTS_MAX: Final = 1_000_000
DIGITS: Final = 3


def latency_histogram() -> HdrHistogram:
    return HdrHistogram(1, LATENCY_MAX_US, DIGITS)


def attempts_histogram() -> HdrHistogram:
    return HdrHistogram(1, ATTEMPTS_MAX, DIGITS)


def ms(histogram: HdrHistogram, percentile: float) -> float:
    if histogram.get_total_count() == 0:
        return 0.0
    return round(float(histogram.get_value_at_percentile(percentile)) / 1000, 3)


def max_ms(histogram: HdrHistogram) -> float:
    return round(float(histogram.get_max_value()) / 1000, 3) if histogram.get_total_count() else 0.0
