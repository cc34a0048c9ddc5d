"""Server faults: the database process SIGKILLed under load and started again on the same data
directory and port, while writers keep committing through their original clients.

While it is down, every call must fail with one of lochkit's documented errors within the
backend's documented bound (:mod:`reliability.timeouts`); after the restart the same clients must
work again; afterwards every acknowledged commit must be on its branch exactly once, ambiguous
ones at most once, and the checker must pass.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

from provisioning.base import ServerControl
from reliability.crash_campaign import ensure_branches
from reliability.fault_run import FaultRunResult, Prober, finish, resumed_text, writers_running
from reliability.target import Target
from reliability.timeouts import call_bound

BRANCHES = ("s1", "s2")


def server_restarts(
    target: Target,
    control: ServerControl,
    run_dir: Path,
    *,
    restarts: int,
    up_seconds: tuple[float, float] = (3.0, 6.0),
    down_seconds: tuple[float, float] = (2.0, 5.0),
    seed: int = 0,
    log: Callable[[str], None] = print,
) -> FaultRunResult:
    run_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    result = FaultRunResult("server restarts")
    bound = call_bound(target.backend)
    with target.persist() as persist:
        ensure_branches(persist, BRANCHES)
    started = time.monotonic()
    with target.persist() as persist, writers_running(target, target.url, run_dir, BRANCHES, seed) as running:
        prober = Prober(persist)
        prober.start()
        for n in range(1, restarts + 1):
            prober.phase = "up"
            time.sleep(rng.uniform(*up_seconds))
            prober.phase = f"down {n}"
            control.kill()
            time.sleep(rng.uniform(*down_seconds))
            prober.phase = f"restarting {n}"
            restart_seconds = control.restart()
            prober.phase = f"after restart {n}"
            resumed = prober.wait_for_success(bound + 60)
            result.resumed_after.append(resumed)
            result.faults += 1
            log(
                f"  server restart {n}/{restarts}: back in {restart_seconds:.1f} s, lochkit working again "
                f"{resumed_text(resumed)}"
            )
        prober.phase = "up"
        time.sleep(up_seconds[0])
        if not prober.stop(bound):
            result.problems.append(f"a probe call still hangs after {bound:.0f} s")
        result.probes = prober.results
    result.seconds = time.monotonic() - started
    result.check_probes(bound)
    finish(result, target, run_dir, BRANCHES, running)
    log(result.summary())
    return result
