"""The Persist a version store runs on by default: the backend's, seen through the object cache.

Nessie's server always wraps its Persist in the object cache, and lochkit's version store, its
benchmark and its load tools do the same through :func:`open_persist`. Commits then find their
parent commit (written a moment before, by this process) in the cache instead of reading it back,
and reads of immutable objects stop at the cache. References are not cached unless the cache's
configuration says so (single-node only, see ``docs/cache.md``), so a commit still reads its
branch from the database and its compare-and-swap stays the only arbiter between writers.

``object_cache=False`` gives the plain Persist, for comparisons and for tests that must see every
read reach the database.
"""

from __future__ import annotations

from persist_spi.adapter import BackendAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.cache import CachingPersist, ObjectCache
from persist_spi.config import StoreConfig
from persist_spi.persist import Persist


def open_persist(
    adapter: BackendAdapter,
    config: StoreConfig | None = None,
    *,
    object_cache: bool = True,
    cache: ObjectCache | None = None,
) -> Persist:
    """A Persist on ``config.repository_id`` of ``adapter``: through ``cache`` (default: the
    process-wide object cache) unless ``object_cache`` is False."""
    persist: Persist = AdapterPersist(adapter, config)
    return CachingPersist(persist, cache) if object_cache else persist
