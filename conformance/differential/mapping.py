"""Pairing of the ids two version stores give the same thing.

Commit ids differ between lochkit and Nessie (commit times differ) and so do content ids (random
UUIDs). A :class:`Pairing` learns which id on one side stands for which on the other as results and
listings are compared, and refuses a second partner for either: that is how a different history
shape or a content id kept on one side but not the other shows up. Each pair gets a label (``c3``,
``id5``) so texts mentioning ids can be compared after :meth:`Pairing.relabel`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

_HEX: Final = re.compile(r"\b[0-9a-f]{40,64}\b")
_UUID: Final = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


class PairingConflict(AssertionError):
    """An id already stands for something else on the other side."""


@dataclass
class Pairing:
    """A bijection between the two sides' ids of one kind (commits or contents)."""

    kind: str
    left: dict[str, str] = field(default_factory=dict)
    right: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def pair(self, lochkit: object, nessie: object) -> str:
        """Record that ``lochkit`` and ``nessie`` are the same; return their label."""
        a, b = str(lochkit), str(nessie)
        known_b, known_a = self.left.get(a), self.right.get(b)
        if known_b is None and known_a is None:
            self.left[a], self.right[b] = b, a
            label = f"{self.kind}{len(self.labels) + 1}"
            self.labels[a] = self.labels[b] = label
            return label
        if known_b != b or known_a != a:
            raise PairingConflict(
                f"{self.kind} {a} (lochkit) and {b} (nessie) are compared as the same, but lochkit's is "
                f"paired with {known_b} and nessie's with {known_a}"
            )
        return self.labels[a]

    def to_nessie(self, lochkit: object) -> str | None:
        return self.left.get(str(lochkit))

    def label(self, value: object) -> str:
        return self.labels.get(str(value), str(value))

    def relabel(self, text: str) -> str:
        """``text`` with every id this pairing knows replaced by its label."""
        pattern = _UUID if self.kind == "id" else _HEX
        return pattern.sub(lambda m: self.labels.get(m.group(0), m.group(0)), text)


def commit_pairing(empty: str) -> Pairing:
    """Commit ids, with the empty commit (the same id on both sides) already paired."""
    pairing = Pairing("c")
    pairing.pair(empty, empty)
    return pairing
