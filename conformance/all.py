"""Every conformance suite as a collectable test class.

``from conformance.all import *`` in a test module runs the whole suite against the backend chosen
by ``--backend`` (or by your ``lochkit_backend_factory`` fixture).

Suites are discovered: every :class:`~conformance.suites.base.ConformanceSuite` subclass defined in
a module of :mod:`conformance.suites` gets a ``Test<Name>`` class here, so adding a suite never
means editing this file. They run bottom-up (the Persist contract, then the storage logic, the
version store and the cache): a broken adapter then fails first at the most specific test.
"""

from __future__ import annotations

import importlib
import pkgutil

import conformance.suites
from conformance.suites.base import ConformanceSuite

#: Module name prefixes in the order their suites run; anything else runs last.
_LAYERS = ("persist_", "logic_", "versionstore_")


def _layer_then_name(module_name: str) -> tuple[int, str]:
    layer = next((i for i, prefix in enumerate(_LAYERS) if module_name.startswith(prefix)), len(_LAYERS))
    return layer, module_name


def _discover() -> dict[str, type]:
    found: dict[str, type] = {}
    modules = sorted(
        pkgutil.iter_modules(conformance.suites.__path__), key=lambda m: _layer_then_name(m.name)
    )
    for module_info in modules:
        module = importlib.import_module(f"conformance.suites.{module_info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, ConformanceSuite)
                and value is not ConformanceSuite
                and value.__module__ == module.__name__
                and not getattr(value, "abstract", False)
            ):
                name = "Test" + value.__name__.removesuffix("Suite")
                found[name] = type(name, (value,), {"__module__": __name__, "__doc__": value.__doc__})
    return found


_SUITES = _discover()
globals().update(_SUITES)
__all__ = list(_SUITES)  # in running order: ``import *`` keeps it
