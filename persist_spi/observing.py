"""Timing every Persist call and every version-store request, for metrics.

:class:`ObservingPersist` wraps any Persist (typically the cached one, as Nessie does, so the
timings include cache hits) and reports each call of the contract to an :data:`Observer`:
``observer(layer, class name, method, seconds, exception name or None)``.
:func:`observing_api` does the same for a :class:`~persist_spi.versionstore.api.VersionStoreApi`,
under Nessie's method names (``commit``, ``getValues``, ``getCommits``...); a listing is timed
until it is read to its end. Nothing here knows Prometheus: ``loadgen.metrics`` turns the
observations into ``lochkit_nessie_storage_persist_seconds`` and
``lochkit_nessie_versionstore_request_seconds``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any, Final, TypeVar, cast

from persist_spi.forwarding import ForwardingPersist
from persist_spi.objs import Obj
from persist_spi.persist import Persist

T = TypeVar("T")
#: (layer "persist" or "versionstore", class name, method, seconds, exception name or None)
Observer = Callable[[str, str, str, float, str | None], None]

#: VersionStoreApi method -> Nessie's ObservingVersionStore method name.
VERSION_STORE_METHODS: Final = {
    "commit": "commit",
    "merge": "merge",
    "transplant": "transplant",
    "create_reference": "create",
    "assign": "assign",
    "delete_reference": "delete",
    "named_ref": "getNamedRef",
    "reference": "getNamedRef",
    "list_references": "getNamedRefs",
    "get_commits": "getCommits",
    "get_entries": "getKeys",
    "get_values": "getValues",
    "get_value": "getValue",
    "get_contents": "getValues",
    "get_diffs": "getDiffs",
    "hash_on_reference": "hashOnReference",
}


class ObservingPersist(ForwardingPersist):
    """Delegates every call to ``delegate`` and reports how long it took, under Nessie's name of
    the method (``fetchTypedObjsIfExist``...); a scan is timed until it is read to its end."""

    def __init__(self, delegate: Persist, observer: Observer) -> None:
        super().__init__(delegate)
        self._observer = observer
        self._class = type(delegate).__name__

    def _call(self, method: str, call: Callable[..., T], *args: Any) -> T:
        name = _nessie_name(method)
        start = time.perf_counter()
        try:
            result = call(*args)
        except Exception as e:
            self._observer("persist", self._class, name, time.perf_counter() - start, type(e).__name__)
            raise
        if isinstance(result, Generator):  # a scan: timed until it is read to its end
            return cast(T, self._timed_scan(result, name, start))
        self._observer("persist", self._class, name, time.perf_counter() - start, None)
        return result

    def _timed_scan(
        self, objs: Generator[Obj, None, None], name: str, start: float
    ) -> Generator[Obj, None, None]:
        error: str | None = None
        try:
            yield from objs
        except Exception as e:
            error = type(e).__name__
            raise
        finally:
            self._observer("persist", self._class, name, time.perf_counter() - start, error)


@functools.cache
def _nessie_name(method: str) -> str:
    """``fetch_typed_objs_if_exist`` -> ``fetchTypedObjsIfExist``."""
    first, *rest = method.split("_")
    return first + "".join(part.capitalize() for part in rest)


class _ObservingApi:
    """A VersionStoreApi proxy timing the calls named in :data:`VERSION_STORE_METHODS`."""

    def __init__(self, api: Any, observer: Observer) -> None:
        self._api = api
        self._observer = observer
        self._class = type(api).__name__

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._api, name)
        method = VERSION_STORE_METHODS.get(name)
        if method is None or not callable(target):
            return target

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                result = target(*args, **kwargs)
            except Exception as e:
                self._observer(
                    "versionstore", self._class, method, time.perf_counter() - start, type(e).__name__
                )
                raise
            if isinstance(result, Iterator):
                return self._timed_listing(result, method, start)
            self._observer("versionstore", self._class, method, time.perf_counter() - start, None)
            return result

        return timed

    def _timed_listing(self, items: Iterator[Any], method: str, start: float) -> Iterator[Any]:
        error: str | None = None
        try:
            yield from items
        except Exception as e:
            error = type(e).__name__
            raise
        finally:
            self._observer("versionstore", self._class, method, time.perf_counter() - start, error)


def observing_api(api: T, observer: Observer) -> T:
    """``api`` with every version-store request timed (typed as the api it wraps)."""
    return _ObservingApi(api, observer)  # type: ignore[return-value]
