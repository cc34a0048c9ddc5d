"""The reliability campaign's writers fork from a server that has imported every adapter a writer
process may open: one that imports its driver itself spends seconds starting on a loaded machine,
while the campaign is already killing writers (on Bigtable the lease's holder was killed before the
other writers had made a call, and the branch stood still past the allowed stall)."""

from __future__ import annotations

from persist_spi.registry import discover_backends
from reliability.processes import PRELOAD


def test_the_fork_server_preloads_the_adapter_of_every_backend_a_writer_process_opens() -> None:
    packages = set()
    for entry in discover_backends().values():
        factory = entry.factory
        module = type(factory).__module__
        if factory is None or factory.lives_in_process or not module.startswith("backends."):
            continue  # in-memory data cannot be shared with a writer process; others' adapters are theirs
        packages.add(module.split(".")[1])
    assert {"postgres", "bigtable", "mariadb"} <= packages  # the loop found the built-in ones
    missing = sorted(f"backends.{p}.adapter" for p in packages if f"backends.{p}.adapter" not in PRELOAD)
    assert missing == []
