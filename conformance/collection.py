"""Collecting the conformance suites in this process, for commands that count their tests."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence


def collect(plugin: object, args: Sequence[str]) -> None:
    """Collect ``conformance.all`` with ``args`` (``--backend ...``, ``-k ...``), running nothing;
    ``plugin``'s hooks (``pytest_collection_modifyitems``) see the collected tests. Collecting asks
    no database for anything."""
    import pytest

    every = ["--pyargs", "conformance.all", *args, "--collect-only", "-q"]
    every += ["-p", "no:cacheprovider", "-p", "no:locust"]
    with contextlib.redirect_stdout(io.StringIO()) as said:  # pytest lists every test it collects
        code = pytest.main(every, plugins=[plugin])
    if code != pytest.ExitCode.OK:
        raise RuntimeError(
            f"collecting the suites failed (pytest exit code {int(code)}):\n{said.getvalue()[-3000:]}"
        )
