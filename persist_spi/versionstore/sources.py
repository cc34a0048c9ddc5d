"""Where the version store takes the time of a commit and the ids of new content from.

Both enter a commit's id: the commit time is a header, and new content ids are hashed with each
put. By default they come from the system clock and random UUIDs. A seeded source gives the same
sequence every run, which is what makes a seeded load run reproduce its commit ids exactly.
"""

from __future__ import annotations

import datetime
import os
import random
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

#: Where a seeded clock starts (far enough in the past to never be mistaken for a real run).
SEEDED_EPOCH: Final = datetime.datetime(2001, 1, 1, tzinfo=datetime.UTC)


def system_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class _BufferedRandomUuids:
    """Random (version 4) UUIDs, as ``uuid.uuid4`` makes them, from ``os.urandom`` read 64 ids at a
    time per thread.

    ``uuid4`` reads the OS's random source once per id, and the read releases the GIL: a writer
    thread committing 10 new tables then queued for the GIL 10 times per commit behind a busy
    writer thread (up to the 5 ms switch interval each) and starved beside it. The buffer is
    dropped in a forked child, so parent and child never hand out the same bytes."""

    _IDS_PER_READ: Final = 64

    def __init__(self) -> None:
        self._local = threading.local()
        self._generation = 0
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        self._generation += 1

    def __call__(self) -> uuid.UUID:
        local = self._local
        buffer: bytes | None = getattr(local, "buffer", None)
        if buffer is None or local.at >= len(buffer) or local.generation != self._generation:
            buffer = local.buffer = os.urandom(16 * self._IDS_PER_READ)
            local.at, local.generation = 0, self._generation
        at = local.at
        local.at = at + 16
        return uuid.UUID(bytes=buffer[at : at + 16], version=4)


#: New content ids by default.
random_content_id: Final[Callable[[], uuid.UUID]] = _BufferedRandomUuids()


@dataclass(frozen=True)
class StoreSources:
    """The time source for commit headers and the generator of new content ids."""

    now: Callable[[], datetime.datetime] = system_now
    new_content_id: Callable[[], uuid.UUID] = random_content_id


class _SeededClock:
    """A clock that starts at a time derived from the seed and advances 1 ms per reading, so
    readings are distinct and the same seed always gives the same readings."""

    def __init__(self, seed: int) -> None:
        self._next = SEEDED_EPOCH + datetime.timedelta(seconds=seed % 1_000_000_000)
        self._lock = threading.Lock()

    def __call__(self) -> datetime.datetime:
        with self._lock:
            now = self._next
            self._next = now + datetime.timedelta(milliseconds=1)
            return now


class _SeededIds:
    def __init__(self, seed: int) -> None:
        # A separate stream from any caller's random generator, so adding a draw elsewhere does
        # not shift the content ids.
        self._rng = random.Random(f"lochkit-content-ids-{seed}")
        self._lock = threading.Lock()

    def __call__(self) -> uuid.UUID:
        with self._lock:
            return uuid.UUID(int=self._rng.getrandbits(128), version=4)


def seeded_sources(seed: int) -> StoreSources:
    """Sources whose readings depend only on ``seed`` and on how often they were read."""
    return StoreSources(now=_SeededClock(seed), new_content_id=_SeededIds(seed))


DEFAULT_SOURCES: Final = StoreSources()
