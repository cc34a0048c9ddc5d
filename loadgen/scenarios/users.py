"""The base of every scenario user: a locust :class:`~locust.User` that calls the target's
version-store API instead of HTTP (so it works in-process and over REST alike)."""

from __future__ import annotations

from typing import Any

from locust import User, constant, constant_pacing

from loadgen.scenarios.run import ScenarioRun, current


def pacing(rate: float) -> Any:
    """Nessie's ``sim.rate``: operations per second per user, 0 for as fast as possible."""
    return constant_pacing(1.0 / rate) if rate > 0 else constant(0)


class NessieUser(User):
    abstract = True
    finished: bool = False

    def wait_time(self) -> float:
        return float(self._pace(self))

    def pace(self, rate: float) -> None:
        """Run this user's tasks at ``rate`` per second (0: as fast as possible)."""
        self._pace = pacing(rate)

    def finish(self) -> None:
        """This user ran its count (commits, branches): it idles from now on (locust would start a
        replacement for a stopped user), and a local run ends once every user finished."""
        if not self.finished:
            self.finished = True
            self.scenario.finished += 1
        self._pace = constant(1.0)

    def on_start(self) -> None:
        self.finished = False
        self._pace = pacing(0)
        self.scenario: ScenarioRun = current()
        self.user_id = self.scenario.next_user_id()
        self.worker_name = f"user-{self.user_id}"
