"""A backend whose driver is missing is reported as not installed, also when the driver's parent
package is missing altogether (a dotted module name under an absent namespace package)."""

from __future__ import annotations

from backends.inmemory import InMemoryBackendFactory
from persist_spi.registry import BackendFactory


def _needing(*modules: str) -> BackendFactory:
    factory = InMemoryBackendFactory()
    factory.required_modules = modules
    return factory


def test_a_module_under_a_missing_parent_package_is_missing() -> None:
    factory = _needing("json", "lochkit_no_such_parent.child.grandchild", "lochkit_no_such_module")
    assert factory.missing_modules() == ["lochkit_no_such_parent.child.grandchild", "lochkit_no_such_module"]


def test_present_modules_are_not_missing() -> None:
    assert _needing("json", "importlib.util").missing_modules() == []
