"""Prometheus metrics of a load run (``--metrics-port``), named in parallel to Nessie's:

- ``lochkit_nessie_versionstore_request_seconds{class,method,exception}`` (histogram) and
  ``lochkit_nessie_versionstore_request_total{class,method,result,exception}``: every
  version-store request under Nessie's method names (``commit``, ``getValues``, ...), in-process or
  over REST;
- ``lochkit_nessie_storage_persist_seconds{class,method,exception}`` and
  ``lochkit_nessie_storage_persist_total{class,method,result,exception}``: every Persist call (in-process
  targets only; a Nessie server publishes its own at ``:9000/q/metrics``);
- ``lochkit_cache_gets_total{cache="nessie-objects",result="hit"|"miss"}``,
  ``lochkit_cache_evictions_total{cache,cause="SIZE"|"EXPIRED"}`` (Caffeine's removal causes, as
  Nessie's ``cache_evictions_total{cause}``) and ``lochkit_cache_weight_bytes``: the process's
  object cache.

With writer processes, every process records into one directory (prometheus_client's
multiprocess mode) and the parent serves the sum; the cache figures are then the parent's only.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from loadgen.targets.target import Target

if TYPE_CHECKING:
    from persist_spi.cache_store import ObjectCache

#: Set in the environment of worker processes whose metrics the parent serves.
MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
BUCKETS: Final = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip


class Metrics:
    """The meters, and :meth:`instrument` to wrap a target's store and Persist with them."""

    def __init__(self, registry: Any = None) -> None:
        from prometheus_client import REGISTRY, Counter, Histogram

        registry = registry if registry is not None else REGISTRY
        labels = ("class", "method", "exception")
        self._seconds = {
            "versionstore": Histogram(
                "lochkit_nessie_versionstore_request_seconds",
                "Version-store requests (Nessie's nessie_versionstore_request_seconds)",
                labels,
                buckets=BUCKETS,
                registry=registry,
            ),
            "persist": Histogram(
                "lochkit_nessie_storage_persist_seconds",
                "Persist calls (Nessie's nessie_storage_persist_seconds)",
                labels,
                buckets=BUCKETS,
                registry=registry,
            ),
        }
        counted = ("class", "method", "result", "exception")
        self._total = {
            "versionstore": Counter(
                "lochkit_nessie_versionstore_request", "Version-store requests", counted, registry=registry
            ),
            "persist": Counter("lochkit_nessie_storage_persist", "Persist calls", counted, registry=registry),
        }

    def observe(self, layer: str, cls: str, method: str, seconds: float, exception: str | None) -> None:
        error = exception or "none"
        self._seconds[layer].labels(cls, method, error).observe(seconds)
        self._total[layer].labels(cls, method, "failure" if exception else "success", error).inc()

    def instrument(self, target: Target) -> None:
        """Time every request of ``target`` and, in-process, every Persist call under it."""
        from persist_spi.observing import ObservingPersist, observing_api
        from persist_spi.versionstore.store import VersionStore

        api = target.api
        if isinstance(api, VersionStore):
            api = VersionStore(
                ObservingPersist(api.persist, self.observe),
                sources=api.sources,
                default_branch=api.default_branch(),
                policy=api.policy,
            )
        target.api = observing_api(api, self.observe)


class CacheCollector:
    """An object cache's counters, read when scraped: the process-wide one unless told otherwise."""

    def __init__(self, cache: ObjectCache | None = None) -> None:
        self._cache = cache

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from persist_spi.cache import shared_object_cache

        stats = (self._cache or shared_object_cache()).stats()
        gets = CounterMetricFamily("lochkit_cache_gets", "Object cache lookups", labels=["cache", "result"])
        gets.add_metric(["nessie-objects", "hit"], stats.hits)
        gets.add_metric(["nessie-objects", "miss"], stats.misses)
        yield gets
        evictions = CounterMetricFamily(
            "lochkit_cache_evictions", "Object cache evictions", labels=["cache", "cause"]
        )
        # Caffeine's causes: SIZE, least recently used entries dropped to stay within the capacity;
        # EXPIRED, entries found past their type's or the reference TTL's deadline. Entries a write
        # invalidates are removals, not evictions (EXPLICIT in Caffeine, which counts none either).
        evictions.add_metric(["nessie-objects", "SIZE"], stats.evictions)
        evictions.add_metric(["nessie-objects", "EXPIRED"], stats.expirations)
        yield evictions
        weight = GaugeMetricFamily("lochkit_cache_weight_bytes", "Object cache weight", labels=["cache"])
        weight.add_metric(["nessie-objects"], stats.weight)
        yield weight


class MetricsServer:
    """The HTTP endpoint; :meth:`stop` closes it (and removes a multiprocess directory)."""

    def __init__(self, port: int, multiprocess: bool) -> None:
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        if multiprocess:
            # Must be set before prometheus_client is first imported here and in the workers.
            if "prometheus_client" in sys.modules and MULTIPROC_ENV not in os.environ:
                raise RuntimeError("prometheus_client was imported before multiprocess metrics were set up")
            self._dir = tempfile.TemporaryDirectory(prefix="lochkit-metrics-")
            os.environ[MULTIPROC_ENV] = self._dir.name
        from prometheus_client import CollectorRegistry, start_http_server
        from prometheus_client import multiprocess as mp

        self.registry = CollectorRegistry()
        if multiprocess:
            mp.MultiProcessCollector(self.registry)  # type: ignore[no-untyped-call]
            self.metrics = Metrics(CollectorRegistry())  # values go to files; the collector sums them
        else:
            self.metrics = Metrics(self.registry)
        self.registry.register(CacheCollector())
        self._server, self._thread = start_http_server(port, addr="127.0.0.1", registry=self.registry)
        self.port = int(self._server.server_port)
        print(f"Metrics: http://127.0.0.1:{self.port}/metrics", file=sys.stderr)

    def instrument(self, target: Target) -> None:
        self.metrics.instrument(target)

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._dir is not None:
            os.environ.pop(MULTIPROC_ENV, None)
            self._dir.cleanup()


def serve_metrics(port: int, *, multiprocess: bool = False) -> MetricsServer:
    """Serve ``/metrics`` on 127.0.0.1:``port`` (0: any free port, printed)."""
    return MetricsServer(port, multiprocess)


def worker_metrics() -> Metrics | None:
    """In a worker process whose parent serves multiprocess metrics: meters writing there."""
    if not os.environ.get(MULTIPROC_ENV):
        return None
    from prometheus_client import CollectorRegistry

    return Metrics(CollectorRegistry())
