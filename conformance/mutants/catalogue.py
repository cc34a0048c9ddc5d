"""The catalogue: every broken adapter, and the correct adapters they derive from.

A mutant is one broken adapter class (see :mod:`.inmemory_bugs` and :mod:`.sqlite_bugs`). The
catalogue covers every method of :class:`~persist_spi.adapter.BackendAdapter` and every guarantee
the suites check (docs/conformance.md); ``tests/unit/test_mutants.py`` keeps it that way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import conformance.mutants.inmemory_bugs as inmemory_bugs
import conformance.mutants.sqlite_bugs as sqlite_bugs
from backends.inmemory import InMemoryBackendFactory
from conformance.examples.toy_sqlite import ToySqliteFactory
from conformance.mutants.base import Broken
from persist_spi.adapter import BackendAdapter, Capabilities
from persist_spi.errors import InputError
from persist_spi.registry import BackendFactory

#: The guarantees the suites check for every adapter; each has at least one mutant.
GUARANTEES: Final = (
    "atomic compare-and-swap",
    "insert-if-absent",
    "positional bulk calls",
    "repository isolation",
    "size limits",
    "conditional updates",
    "the referenced timestamp",
    "erase",
    "scans",
    "history",
    "mark-deleted",
    "upserts",
    "deletes",
    "calls return",
    "durability",
)


class MutantFactory(BackendFactory):
    """Opens one broken adapter class; what the suite sees as the backend under test."""

    def __init__(self, adapter_class: type[Broken]) -> None:
        self.adapter_class = adapter_class
        self.name = adapter_class.mutant
        self.description = _first_line(adapter_class.__doc__)

    @property
    def capabilities(self) -> Capabilities:
        return self.adapter_class.CAPABILITIES

    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> BackendAdapter:
        return self.adapter_class.open(url)

    def store_url_in(self, directory: Path) -> str | None:
        return self.adapter_class.store_url_in(directory)


@dataclass(frozen=True)
class Mutant:
    name: str
    base: str
    method: str
    guarantee: str
    racy: bool
    bug: str
    adapter_class: type[Broken]

    @classmethod
    def of(cls, adapter_class: type[Broken]) -> Mutant:
        return cls(
            name=adapter_class.mutant,
            base=adapter_class.base_name(),
            method=adapter_class.method,
            guarantee=adapter_class.guarantee,
            racy=adapter_class.racy,
            bug=" ".join((adapter_class.__doc__ or "").split()),
            adapter_class=adapter_class,
        )

    def factory(self) -> BackendFactory:
        return MutantFactory(self.adapter_class)


def _collect(*modules: ModuleType) -> tuple[Mutant, ...]:
    found = [
        Mutant.of(value)
        for module in modules
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Broken)
        and value.__module__ == module.__name__
        and "mutant" in vars(value)
    ]
    return tuple(found)


MUTANTS: Final = _collect(inmemory_bugs, sqlite_bugs)

#: The correct adapters the mutants derive from: the self-check runs them first, as controls.
CONTROLS: Final[Mapping[str, type[BackendFactory]]] = {
    "inmemory": InMemoryBackendFactory,
    "toy-sqlite": ToySqliteFactory,
}


class UnknownMutant(InputError):
    pass


def mutant_named(name: str) -> Mutant:
    for mutant in MUTANTS:
        if mutant.name == name:
            return mutant
    raise UnknownMutant(
        f"No broken adapter named '{name}' in the catalogue; known: {', '.join(m.name for m in MUTANTS)}"
    )


def factory_for(name: str) -> BackendFactory:
    """The factory the self-check hands to the suite: a control's or a mutant's."""
    control = CONTROLS.get(name)
    return control() if control is not None else mutant_named(name).factory()


def _first_line(text: str | None) -> str:
    return " ".join((text or "").split()).split(". ")[0]
