"""Every capability a built-in backend lacks carries its reason, so the skips it causes explain
themselves in every report."""

from __future__ import annotations

import pytest

from persist_spi.registry import discover_backends


@pytest.mark.parametrize("name", sorted(discover_backends()))
def test_every_missing_capability_has_a_reason(name: str) -> None:
    factory = discover_backends()[name].factory
    assert factory is not None, f"{name}'s entry point does not load"
    capabilities = factory.capabilities
    unexplained = [c for c in capabilities.missing() if not capabilities.capability_reasons.get(c)]
    assert unexplained == [], f"{name} lacks {unexplained} without saying why"


def test_missing_lists_absent_capabilities_only() -> None:
    from persist_spi.adapter import Capabilities

    everything = Capabilities(hard_object_size_limit=10, multi_process=True, lists_repositories=True)
    assert everything.missing() == []
    assert Capabilities(durable=False, scan=False).missing() == [
        "hard_object_size_limit",
        "multi_process",
        "durable",
        "scan",
        "lists_repositories",
    ]
