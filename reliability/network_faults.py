"""Network faults: Toxiproxy between lochkit and the database, one toxic at a time.

Writers and the prober talk to the database only through the proxy; the verification afterwards
uses a direct connection. Each toxic stays for a few seconds, is removed, and lochkit must work
again through the same clients.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from persist_spi.errors import InputError
from provisioning.servers.process import free_port
from reliability.crash_campaign import ensure_branches
from reliability.fault_run import FaultRunResult, Prober, finish, resumed_text, writers_running
from reliability.target import Target
from reliability.timeouts import call_bound
from reliability.toxiproxy import Toxic, ToxiproxyClient, host_port, via_proxy

BRANCHES = ("n1", "n2")
#: Special "toxic": the proxy refuses connections (the server is unreachable).
DOWN = Toxic("down", "down")

#: The scenarios, each for a few seconds. ``timeout`` with 0 holds connections open but passes no
#: data (a half-open connection: only a client-side timeout ends the wait).
TOXICS: tuple[Toxic, ...] = (
    Toxic("latency", "latency", {"latency": 300, "jitter": 100}),
    Toxic("latency-up", "latency", {"latency": 300, "jitter": 100}, stream="upstream"),
    Toxic("bandwidth", "bandwidth", {"rate": 16}),
    Toxic("slicer", "slicer", {"average_size": 16, "size_variation": 8, "delay": 2000}),
    Toxic("reset-peer", "reset_peer", {"timeout": 200}),
    Toxic("limit-data", "limit_data", {"bytes": 2000}),
    Toxic("timeout", "timeout", {"timeout": 2000}),
    Toxic("half-open", "timeout", {"timeout": 0}),
    Toxic("half-open-up", "timeout", {"timeout": 0}, stream="upstream"),
    DOWN,
)


def network_faults(
    target: Target,
    toxiproxy_api: str,
    run_dir: Path,
    *,
    toxics: Sequence[Toxic] = TOXICS,
    seconds_each: float = 5.0,
    seed: int = 0,
    log: Callable[[str], None] = print,
) -> FaultRunResult:
    if target.url is None:
        raise InputError(f"{target.backend} has no server address to put a proxy in front of")
    run_dir.mkdir(parents=True, exist_ok=True)
    result = FaultRunResult("network faults")
    bound = call_bound(target.backend)
    client = ToxiproxyClient(toxiproxy_api)
    proxy = f"lochkit-{target.backend}-{uuid.uuid4().hex[:8]}"
    port = free_port()
    host, server_port = host_port(target.url)
    client.create_proxy(proxy, port, f"{host}:{server_port}")
    proxied = via_proxy(target.url, port)
    with target.persist() as persist:
        ensure_branches(persist, BRANCHES)
    started = time.monotonic()
    proxied_target = Target(
        target.backend, proxied, target.options, target.repository_id, target.multi_process
    )
    try:
        with (
            proxied_target.persist() as through_proxy,
            writers_running(target, proxied, run_dir, BRANCHES, seed) as running,
        ):
            prober = Prober(through_proxy)
            prober.start()
            time.sleep(seconds_each)
            for toxic in toxics:
                prober.phase = toxic.name
                if toxic is DOWN:
                    client.set_enabled(proxy, False)
                else:
                    client.add_toxic(proxy, toxic)
                time.sleep(seconds_each)
                client.reset()
                prober.phase = f"after {toxic.name}"
                resumed = prober.wait_for_success(bound + 30)
                result.resumed_after.append(resumed)
                result.faults += 1
                during = [p for p in prober.results if p.phase == toxic.name]
                failed = sum(1 for p in during if p.error is not None)
                log(
                    f"  {toxic.name:<13} {toxic.describe():<48} {len(during):>3} calls, {failed:>3} failed, "
                    f"longest {max((p.seconds for p in during), default=0):5.1f} s; working again "
                    f"{resumed_text(resumed)}"
                )
                time.sleep(0.5)
            prober.phase = "normal"
            time.sleep(seconds_each)
            if not prober.stop(bound):
                result.problems.append(f"a probe call still hangs after {bound:.0f} s")
            result.probes = prober.results
            proxied_target.close()
    finally:
        client.delete_proxy(proxy)
    result.seconds = time.monotonic() - started
    result.check_probes(bound)
    finish(result, target, run_dir, BRANCHES, running)
    log(result.summary())
    return result
