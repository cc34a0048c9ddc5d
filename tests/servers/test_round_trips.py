"""Round trips per commit on each server backend, counted on the wire.

A commit through the object cache, by the sole writer of its branch, needs no read: it stores the
new content values and the commit and compare-and-swaps the branch. Where the database can do both
in one request (``insert_objs_and_update_ref``), that is one round trip; elsewhere the stores and
the swap are separate requests. :data:`PINNED` holds what each adapter does today; a change that
adds a round trip to the commit path fails here, and one that removes one updates the figure.

The adapter under test talks to the session's server through a counting proxy
(:mod:`tests.servers.round_trip_proxy`). Drivers' own background traffic (MongoDB's server
monitoring, Cassandra's heartbeats) may add one now and then, hence the tolerance.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from conformance.harness import BackendUnderTest, PersistFactory
from persist_spi.cache_store import ObjectCache
from persist_spi.config import StoreConfig
from persist_spi.logic.repository_logic import RepositoryLogic
from persist_spi.opening import open_persist
from persist_spi.versionstore.content import ContentKey, IcebergTable, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from reliability.toxiproxy import host_port, via_proxy
from tests.servers.round_trip_proxy import RoundTripProxy, round_trip_proxy

BRANCH = branch("round-trips")
TABLES = 10
WARM_UP = 3
MEASURED = 20
#: A driver's background request (a monitor's hello, a heartbeat) in the measured window adds
#: 1 / MEASURED; one more round trip per commit adds 1.
TOLERANCE = 0.3


@dataclass(frozen=True)
class Pinned:
    """Round trips per update commit, by its number of puts: ``least`` to ``most``. They differ
    where a driver multiplexes concurrent requests on one connection: requests sent before the
    first answer arrives are one round trip, so the count lies between the dependent steps and
    the requests."""

    least: dict[int, int]
    most: dict[int, int]
    why: str


def _exactly(one: int, ten: int, why: str) -> Pinned:
    return Pinned({1: one, 10: ten}, {1: one, 10: ten}, why)


PINNED: dict[str, Pinned] = {
    "postgres": _exactly(1, 1, "one statement stores the objects and swaps the branch"),
    "mariadb": _exactly(1, 1, "one request of three statements: insert, keep its warning count, swap"),
    "mongodb": _exactly(2, 2, "one unordered insert of every object, then the swap"),
    "dynamodb": _exactly(1, 1, "one transaction: a conditional put per object and the swap"),
    "cassandra": Pinned(
        {1: 3, 10: 3},
        {1: 5, 10: 23},
        "directory batches, then a conditional insert per object, then the swap: three steps, "
        "each step's requests sent together",
    ),
    "bigtable": Pinned(
        {1: 2, 10: 2},
        {1: 4, 10: 13},
        "a conditional mutation per object, then the swap; gRPC's own frames (window updates) may add one",
    ),
}


@pytest.fixture
def proxied_store(
    lochkit_backend: BackendUnderTest, persist_factory: PersistFactory
) -> Iterator[tuple[VersionStore, RoundTripProxy]]:
    backend = lochkit_backend
    url = backend.provisioned.url
    if backend.factory.lives_in_process or url is None:
        pytest.skip(f"{backend.name} is embedded: there is no network round trip to count")
    if backend.name not in PINNED:
        pytest.skip(f"no round-trip figure is pinned for {backend.name}")
    persist_factory("round-trips")  # registered, so the run's clean-up erases it
    config = StoreConfig(repository_id=persist_factory.repository_id_for("round-trips"))
    with round_trip_proxy(*host_port(url)) as proxy:
        adapter = backend.factory.create(via_proxy(url, proxy.port), backend.provisioned.options)
        try:
            store = VersionStore(open_persist(adapter, config, object_cache=True, cache=ObjectCache()))
            yield store, proxy
        finally:
            adapter.close()


def _key(i: int) -> ContentKey:
    return ContentKey.of("ns", f"t{i}")


def _updates(store: VersionStore, content_ids: dict[ContentKey, str], puts: int, commits: int) -> None:
    for n in range(commits):
        ops = [
            # A new location every time: a value stored before would cost a referenced-time refresh.
            Put(_key(k), IcebergTable(id=content_ids[_key(k)], metadata_location=f"s3://{uuid.uuid4()}"))
            for k in range(puts)
        ]
        store.commit(BRANCH, None, CommitMeta(f"update {n}"), ops)


@pytest.mark.parametrize("puts", [1, 10])
def test_an_update_commit_costs_the_pinned_round_trips(
    proxied_store: tuple[VersionStore, RoundTripProxy], lochkit_backend: BackendUnderTest, puts: int
) -> None:
    store, proxy = proxied_store
    RepositoryLogic(store.persist).initialize("main")
    store.create_reference(BRANCH, store.reference(branch("main")).hash)
    store.commit(BRANCH, None, CommitMeta("ns"), [Put(ContentKey.of("ns"), Namespace(elements=("ns",)))])
    tables = [Put(_key(i), IcebergTable(metadata_location="s3://t/0")) for i in range(TABLES)]
    content_ids = store.commit(BRANCH, None, CommitMeta("tables"), tables).added_content_ids
    _updates(store, content_ids, puts, WARM_UP)  # connections opened, the branch's row remembered
    before = proxy.round_trips
    _updates(store, content_ids, puts, MEASURED)
    per_commit = (proxy.round_trips - before) / MEASURED
    pinned = PINNED[lochkit_backend.name]
    assert pinned.least[puts] - TOLERANCE <= per_commit <= pinned.most[puts] + TOLERANCE, pinned.why
