"""What every conformance suite shares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import pytest


class ConformanceSuite:
    """Base of the suites. Subclass a suite in a ``Test*`` class to collect it (see
    :mod:`conformance.all`). Tests use the ``persist`` / ``persist_factory`` / ``lochkit_backend``
    fixtures from the plugin."""

    # The plugin's fixtures every suite test runs under: declared deviations and capability needs
    # (the gate), and threads that take turns inside the adapter. Only suite tests use them, so a
    # project that never runs a suite never sets them up.
    pytestmark: ClassVar = [pytest.mark.usefixtures("_lochkit_gate", "_lochkit_turns")]

    #: Area name used in summaries, reports and deviation declarations, e.g. ``persist.objects``.
    area: ClassVar[str] = "unspecified"


def deviation_reason(
    deviations: Mapping[str, str], suite: type[ConformanceSuite], test_name: str
) -> str | None:
    """A backend declares a deviation by test name, ``Suite::test_name``, suite name or area."""
    for candidate in (
        f"{_suite_name(suite)}::{test_name}",
        test_name,
        _suite_name(suite),
        f"area:{suite.area}",
    ):
        if candidate in deviations:
            return deviations[candidate]
    return None


def _suite_name(suite: type[ConformanceSuite]) -> str:
    # Test classes subclass the library's suites; declarations use the library's name.
    for cls in suite.__mro__:
        if cls.__module__.startswith("conformance.suites"):
            return cls.__name__
    return suite.__name__
