"""The object cache's Prometheus counters: evictions carry Caffeine's removal cause, as Nessie's
``cache_evictions_total{cause}`` does."""

from __future__ import annotations

from conformance.suites.cache import ManualClock
from loadgen.metrics import CacheCollector
from persist_spi.cache_config import CacheConfig
from persist_spi.cache_store import ObjectCache
from persist_spi.ids import random_obj_id
from persist_spi.references import Reference

REPO = "metrics"


def _scrape(cache: ObjectCache) -> str:
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry()
    registry.register(CacheCollector(cache))
    return generate_latest(registry).decode()


def test_evictions_are_counted_by_cause_size_or_expired() -> None:
    clock = ManualClock()
    # Room for two reference rows (about 440 bytes each); the overshoot admits a third, and the
    # least recently used row is then evicted to get back within the capacity.
    config = CacheConfig(capacity_bytes=1000, overshoot=0.5, reference_ttl_seconds=10, clock=clock)
    two_rows = ObjectCache(config)
    refs = [Reference(f"refs/heads/b{n}", random_obj_id()) for n in range(3)]
    for ref in refs:
        assert two_rows.put_ref(REPO, ref)
    clock.advance(11)
    assert two_rows.get_ref(REPO, refs[2].name) is None  # past the reference TTL
    assert two_rows.get_ref(REPO, refs[1].name) is None
    stats = two_rows.stats()
    assert (stats.evictions, stats.expirations) == (1, 2)

    text = _scrape(two_rows)
    assert 'lochkit_cache_evictions_total{cache="nessie-objects",cause="SIZE"} 1.0' in text
    assert 'lochkit_cache_evictions_total{cache="nessie-objects",cause="EXPIRED"} 2.0' in text
    assert 'lochkit_cache_gets_total{cache="nessie-objects",result="miss"} 2.0' in text
