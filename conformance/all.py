"""Every conformance suite as a collectable test class.

``from conformance.all import *`` in a test module runs the whole suite against the backend chosen
by ``--backend`` (or by your ``lochkit_backend_factory`` fixture).

Suites are discovered: every :class:`~conformance.suites.base.ConformanceSuite` subclass defined in
a module of :mod:`conformance.suites` gets a ``Test<Name>`` class here, so adding a suite never
means editing this file.
"""

from __future__ import annotations

import importlib
import pkgutil

import conformance.suites
from conformance.suites.base import ConformanceSuite


def _discover() -> dict[str, type]:
    found: dict[str, type] = {}
    for module_info in sorted(pkgutil.iter_modules(conformance.suites.__path__), key=lambda m: m.name):
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


globals().update(_discover())
__all__ = sorted(name for name in globals() if name.startswith("Test"))
