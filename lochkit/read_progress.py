"""A progress line for commands that read a whole repository (``lochkit check``, ``lochkit
inventory``): objects read so far, the rate and the time taken, redrawn in place on a terminal at
most five times a second, and nothing anywhere else (:class:`~loadgen.contentgen.progress.Progress`
draws it). The objects are counted where every read passes, the Persist the command reads through,
so the command's own logic stays as it is."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Generator, Iterator
from typing import Any, TextIO, TypeVar

from persist_spi.objs import Obj
from persist_spi.objtypes import ObjType
from persist_spi.persist import Persist
from reliability.intercept import InterceptingPersist

T = TypeVar("T")


class CountingPersist(InterceptingPersist):
    """Hands the number of objects each read returned to ``on_read``."""

    def __init__(self, delegate: Persist, on_read: Callable[[int], None]) -> None:
        super().__init__(delegate)
        self._on_read = on_read

    def intercept(self, method: str, args: tuple[Any, ...], call: Callable[[], T]) -> T:
        result = call()
        if method == "fetch_objs" and isinstance(result, list):
            self._on_read(sum(obj is not None for obj in result))
        return result

    def scan_all_objects(self, types: Collection[ObjType] | None = None) -> Generator[Obj, None, None]:
        with contextlib.closing(self.delegate.scan_all_objects(types)) as objects:
            for obj in objects:
                self._on_read(1)
                yield obj


@contextlib.contextmanager
def read_progress(
    persist: Persist, label: str, *, stream: TextIO | None = None, enabled: bool | None = None
) -> Iterator[Persist]:
    """``persist``, counted: the line shows while the block runs and ends with it. ``enabled``
    None: when ``stream`` (default stderr) is a terminal."""
    from loadgen.contentgen.progress import Progress

    progress = Progress(None, label, stream=stream, enabled=enabled, unit="objects read")
    try:
        yield CountingPersist(persist, progress.advance) if progress.enabled else persist
    finally:
        progress.close()
