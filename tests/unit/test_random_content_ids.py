"""New content ids come from a per-thread buffer of OS randomness (one read per 64 ids, so a
writer thread does not queue for the GIL once per id): they must still be random version-4 UUIDs,
distinct across threads and across a fork."""

from __future__ import annotations

import os
import threading
import uuid

import pytest

from persist_spi.versionstore.sources import DEFAULT_SOURCES, random_content_id


def test_ids_are_version_4_rfc_4122_uuids_and_distinct() -> None:
    ids = [random_content_id() for _ in range(1000)]
    assert all(i.version == 4 and i.variant == uuid.RFC_4122 for i in ids)
    assert len(set(ids)) == len(ids)


def test_the_store_uses_them_by_default() -> None:
    assert DEFAULT_SOURCES.new_content_id is random_content_id


def test_threads_draw_distinct_ids() -> None:
    drawn: list[list[uuid.UUID]] = [[] for _ in range(4)]

    def draw(i: int) -> None:
        drawn[i] = [random_content_id() for _ in range(500)]

    threads = [threading.Thread(target=draw, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in drawn for i in ids]
    assert len(set(every)) == 2000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_does_not_repeat_the_parents_buffered_ids() -> None:
    random_content_id()  # the buffer now holds 63 more ids
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next ids and leave at once
        try:
            os.write(write, b"".join(random_content_id().bytes for _ in range(8)))
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 4096):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    child = {uuid.UUID(bytes=data[i : i + 16]) for i in range(0, len(data), 16)}
    parent = {random_content_id() for _ in range(8)}
    assert len(child) == 8
    assert not child & parent
