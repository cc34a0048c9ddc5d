"""Concurrent writers: compare-and-swap and insert-if-absent must each have exactly one winner.

Threads share one adapter; for backends that allow it, separate processes open their own
connections, which is how several servers share one database in production.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.harness import BackendUnderTest, PersistFactory
from conformance.suites.base import ConformanceSuite
from conformance.suites.cache import skip_if_references_cached
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.errors import RefAlreadyExists, RefConditionFailed
from persist_spi.ids import ObjId, random_obj_id
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.registry import BackendFactory

REF_NAME = "refs/heads/contended"


@dataclass
class RaceLog:
    """What one writer saw: (expected pointer, new pointer) of acknowledged and of refused updates."""

    acknowledged: list[tuple[bytes, bytes]]
    refused: list[bytes]


def race_pointer_updates(persist: Persist, attempts: int) -> RaceLog:
    log = RaceLog([], [])
    for _ in range(attempts):
        current = persist.fetch_reference(REF_NAME)
        assert current is not None
        proposal = random_obj_id()
        try:
            persist.update_reference_pointer(current, proposal)
            log.acknowledged.append((bytes(current.pointer), bytes(proposal)))
        except RefConditionFailed:
            log.refused.append(bytes(proposal))
    return log


def _process_worker(
    factory: BackendFactory, url: str | None, options: dict[str, str], repo: str, attempts: int, start: Any
) -> RaceLog:
    adapter = factory.create(url, options)
    try:
        persist = AdapterPersist(adapter, StoreConfig(repository_id=repo))
        start.wait(timeout=60)
        return race_pointer_updates(persist, attempts)
    finally:
        adapter.close()


def _run_process(args: tuple[BackendFactory, str | None, dict[str, str], str, int, Any]) -> RaceLog:
    return _process_worker(*args)


def check_single_chain(initial: bytes, final: bytes, logs: list[RaceLog]) -> int:
    """Every acknowledged update appears exactly once on the chain from ``initial`` to ``final``,
    and no refused proposal appears at all. Returns the chain length."""
    successors: dict[bytes, bytes] = {}
    for log in logs:
        for expected, new in log.acknowledged:
            assert expected not in successors, (
                f"two updates were both acknowledged from pointer {expected.hex()}: a lost update"
            )
            successors[expected] = new
    chain = []
    pointer = initial
    while pointer in successors:
        pointer = successors.pop(pointer)
        chain.append(pointer)
    assert not successors, f"{len(successors)} acknowledged updates are not on the final chain"
    assert pointer == final, "the stored pointer is not the end of the acknowledged chain"
    refused = {p for log in logs for p in log.refused}
    assert refused.isdisjoint(chain), "a refused update is on the chain"
    return len(chain)


class PersistConcurrencySuite(ConformanceSuite):
    area = "persist.concurrency"
    writers = 8
    attempts = 25

    def test_racing_pointer_updates_from_threads_form_one_chain(self, persist: Persist) -> None:
        initial = persist.add_reference(Reference(REF_NAME, random_obj_id()))
        barrier = threading.Barrier(self.writers)

        def writer() -> RaceLog:
            barrier.wait(timeout=60)
            return race_pointer_updates(persist, self.attempts)

        with ThreadPoolExecutor(self.writers) as pool:
            logs = list(pool.map(lambda _: writer(), range(self.writers)))
        final = persist.fetch_reference(REF_NAME)
        assert final is not None
        length = check_single_chain(bytes(initial.pointer), bytes(final.pointer), logs)
        assert length >= self.attempts  # at least one writer wins every round

    @pytest.mark.lochkit_requires("multi_process")
    def test_racing_pointer_updates_from_processes_form_one_chain(
        self, lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
    ) -> None:
        persist = persist_factory()
        skip_if_references_cached(persist, "other processes move the reference")
        initial = persist.add_reference(Reference(REF_NAME, random_obj_id()))
        processes = min(4, max(2, os.cpu_count() or 2))
        context = multiprocessing.get_context("spawn")
        manager = context.Manager()
        try:
            barrier = manager.Barrier(processes)
            provisioned = lochkit_backend.provisioned
            args = [
                (
                    lochkit_backend.factory,
                    provisioned.url,
                    dict(provisioned.options),
                    persist.repository_id,
                    self.attempts,
                    barrier,
                )
                for _ in range(processes)
            ]
            with context.Pool(processes) as pool:
                logs = pool.map(_run_process, args)
        finally:
            manager.shutdown()
        final = persist.fetch_reference(REF_NAME)
        assert final is not None
        check_single_chain(bytes(initial.pointer), bytes(final.pointer), logs)

    def test_racing_inserts_of_one_object_have_one_winner(self, persist: Persist) -> None:
        """Claiming a content id relies on this: only the first store of an id returns True."""
        from persist_spi.objs import unique_id_for_uuid

        claims = [unique_id_for_uuid("content-id", uuid.uuid4()) for _ in range(20)]
        barrier = threading.Barrier(6)

        def claimer() -> list[bool]:
            barrier.wait(timeout=60)
            return [persist.store_obj(c) for c in claims]

        with ThreadPoolExecutor(6) as pool:
            results = list(pool.map(lambda _: claimer(), range(6)))
        for i in range(len(claims)):
            assert sum(r[i] for r in results) == 1, f"claim {i} was won {sum(r[i] for r in results)} times"

    def test_racing_reference_creations_have_one_winner(self, persist: Persist) -> None:
        barrier = threading.Barrier(6)
        names = [f"refs/heads/race-{i}" for i in range(15)]

        reported: list[tuple[ObjId, Reference | None]] = []  # (refused pointer, row the error carried)

        def creator() -> list[ObjId | None]:
            barrier.wait(timeout=60)
            won: list[ObjId | None] = []
            for name in names:
                mine = random_obj_id()
                try:
                    persist.add_reference(Reference(name, mine))
                    won.append(mine)
                except RefAlreadyExists as e:
                    reported.append((mine, e.reference))
                    won.append(None)
            return won

        with ThreadPoolExecutor(6) as pool:
            results = list(pool.map(lambda _: creator(), range(6)))
        stored = persist.fetch_references(names)
        for i, ref in enumerate(stored):
            winners = [r[i] for r in results if r[i] is not None]
            assert len(winners) == 1
            assert ref is not None
            assert ref.pointer == winners[0]
        for refused, existing in reported:
            assert existing is not None, "RefAlreadyExists must carry the stored row"
            assert existing.pointer != refused
