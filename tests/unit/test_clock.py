"""The clock behind ``referenced`` and creation times: readings never repeat, even across threads
and when the system clock stands still or steps back."""

from __future__ import annotations

import threading

from persist_spi.clock import UniqueMicrosClock


class Frozen:
    """A system clock that returns scripted readings."""

    def __init__(self, *readings: int) -> None:
        self._readings = list(readings)

    def micros(self) -> int:
        return self._readings.pop(0) if len(self._readings) > 1 else self._readings[0]


def test_a_standing_or_backward_clock_still_yields_increasing_readings() -> None:
    clock = UniqueMicrosClock(Frozen(100, 100, 90, 500, 500))
    assert [clock.micros() for _ in range(6)] == [100, 101, 102, 500, 501, 502]


def test_readings_from_many_threads_are_all_distinct_and_increase_per_thread() -> None:
    clock = UniqueMicrosClock(Frozen(7))
    per_thread: list[list[int]] = [[] for _ in range(8)]

    def read(out: list[int]) -> None:
        for _ in range(2000):
            out.append(clock.micros())

    threads = [threading.Thread(target=read, args=(out,)) for out in per_thread]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [r for out in per_thread for r in out]
    assert len(set(everything)) == len(everything) == 16_000
    assert all(out == sorted(out) for out in per_thread)
    assert sorted(everything) == list(range(7, 7 + 16_000))
