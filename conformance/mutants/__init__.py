"""Broken adapters the conformance suite must catch, and the self-check that proves it does.

Each mutant is a copy of a correct adapter (the in-memory one or the toy SQLite one) with one bug
an adapter author could make. ``lochkit conformance --self-check`` runs the whole suite against
every one of them and prints the kill table: which tests catch which bug.
"""

from conformance.mutants.catalogue import (
    CONTROLS,
    GUARANTEES,
    MUTANTS,
    Mutant,
    UnknownMutant,
    factory_for,
    mutant_named,
)

__all__ = ["CONTROLS", "GUARANTEES", "MUTANTS", "Mutant", "UnknownMutant", "factory_for", "mutant_named"]
