"""Percentiles of measured latencies, as every benchmark of ``lochkit bench`` reports them."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(values: Sequence[float], p: float) -> float:
    """The element at round(p/100 * (n-1)) of the sorted values (0 when there are none)."""
    data = sorted(values)
    if not data:
        return 0.0
    return data[min(len(data) - 1, round(p / 100 * (len(data) - 1)))]
