"""Settings of the object cache: its byte budget, admission overshoot, clock and reference TTLs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from persist_spi.clock import Clock, SystemClock
from persist_spi.errors import InputError

MIB: Final = 1024 * 1024

#: Default budget: 64 MiB of entry weight (see ``docs/cache.md``). Nessie takes 60% of the JVM's
#: maximum heap (at least 64 MB); CPython has no maximum heap to take a fraction of, and a fraction
#: of the machine's memory would over-commit as soon as several worker processes each hold a cache.
#: A fixed budget keeps the process size predictable; raise it for servers with memory to spare.
DEFAULT_CAPACITY_BYTES: Final = 64 * MIB

#: How far above the capacity an admission may reach before a put is rejected (Nessie's default).
DEFAULT_OVERSHOOT: Final = 0.1


@dataclass(frozen=True, slots=True)
class CacheConfig:
    """How an :class:`~persist_spi.cache_store.ObjectCache` behaves.

    Reference caching is off unless ``reference_ttl_seconds`` is set. It is only safe when every
    writer of the repositories goes through the same cache (one process, one node): another writer's
    change stays invisible to :meth:`fetch_references` until the TTL runs out.
    """

    capacity_bytes: int = DEFAULT_CAPACITY_BYTES
    overshoot: float = DEFAULT_OVERSHOOT
    #: How long a cached reference row is served; None (the default) disables reference caching.
    reference_ttl_seconds: float | None = None
    #: How long "this reference does not exist" is served; needs ``reference_ttl_seconds``.
    reference_negative_ttl_seconds: float | None = None
    #: Time source for entry expiry (µs since the epoch); tests inject a manual clock.
    clock: Clock = field(default_factory=SystemClock, compare=False)

    def __post_init__(self) -> None:
        if self.capacity_bytes < 0:
            raise InputError(f"Cache capacity is {self.capacity_bytes} bytes; it must not be negative")
        if not 0.0 <= self.overshoot <= 1.0:
            raise InputError(f"Cache overshoot is {self.overshoot}; it must be between 0 and 1")
        ttl = self.reference_ttl_seconds
        if ttl is not None and not ttl > 0:
            raise InputError(f"Cache reference TTL is {ttl} s; when set it must be positive")
        negative = self.reference_negative_ttl_seconds
        if negative is not None and (ttl is None or not negative > 0):
            raise InputError(
                f"Cache reference negative TTL is {negative} s; it must be positive and needs a "
                "positive reference TTL as well"
            )

    @property
    def admit_limit(self) -> int:
        """A put is rejected when the cache's weight plus the entry's would reach this."""
        return self.capacity_bytes + int(self.capacity_bytes * self.overshoot)

    @property
    def caches_references(self) -> bool:
        return self.reference_ttl_seconds is not None

    @property
    def reference_ttl_micros(self) -> int:
        return 0 if self.reference_ttl_seconds is None else int(self.reference_ttl_seconds * 1_000_000)

    @property
    def reference_negative_ttl_micros(self) -> int:
        seconds = self.reference_negative_ttl_seconds
        return 0 if seconds is None else int(seconds * 1_000_000)
