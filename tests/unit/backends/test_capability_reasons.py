"""Every capability a built-in backend lacks carries its reason, so the skips it causes explain
themselves in every report."""

from __future__ import annotations

import dataclasses

import pytest

from persist_spi.adapter import Capabilities
from persist_spi.registry import discover_backends


@pytest.mark.parametrize("name", sorted(discover_backends()))
def test_every_missing_capability_has_a_reason(name: str) -> None:
    factory = discover_backends()[name].factory
    assert factory is not None, f"{name}'s entry point does not load"
    capabilities = factory.capabilities
    unexplained = [c for c in capabilities.missing() if not capabilities.capability_reasons.get(c)]
    assert unexplained == [], f"{name} lacks {unexplained} without saying why"


def test_missing_lists_absent_capabilities_only() -> None:
    everything = Capabilities(hard_object_size_limit=10, multi_process=True, lists_repositories=True)
    assert everything.missing() == []
    assert Capabilities(durable=False).missing() == [
        "hard_object_size_limit",
        "multi_process",
        "durable",
        "lists_repositories",
    ]


def test_the_capability_names_are_the_declaration_fields() -> None:
    """A capability added to the declaration is listed, described and missed without a second list
    to keep up to date."""
    about = {"deviations", "capability_reasons"}
    names = [f.name for f in dataclasses.fields(Capabilities) if f.name not in about]
    assert Capabilities.names() == tuple(names)
    nothing = Capabilities(durable=False)
    assert list(nothing.describe()) == [*names, "deviations", "capability_reasons"]
    assert set(nothing.missing()) <= set(names)


def test_scan_is_not_a_capability_and_declaring_it_only_warns() -> None:
    """Every adapter implements scan_objs (it is part of the contract) and nothing consulted the
    flag; an adapter written for an earlier version that still passes it keeps working."""
    with pytest.warns(DeprecationWarning, match="'scan' is no longer a capability"):
        declared = Capabilities(scan=False, durable=False)
    assert declared == Capabilities(durable=False)
    assert "scan" not in Capabilities.names()
    assert "scan" not in declared.describe()
