"""What a run leaves behind: the ``--json`` document, reading such files back for ``--report``, and
the command line as snippets and documents publish it."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from conformance import snippets
from loadgen.pg_commit_cost.errors import CannotMeasure
from loadgen.pg_commit_cost.options import NAME, Options
from loadgen.pg_commit_cost.sample import Sample

if TYPE_CHECKING:
    from loadgen.pg_commit_cost.measure import Run


def document(result: Run, options: Options, command: Sequence[str]) -> dict[str, object]:
    """What ``--json`` writes: every sample, and what it was measured on."""
    return {
        "server": f"PostgreSQL {result.server_version}",
        "cpus": os.cpu_count(),
        "command": snippets.portable_command(shareable(command)),
        "machine": snippets.machine(),
        "options": asdict(options),
        "samples": [asdict(s) for s in result.samples],
    }


def load_saved(paths: Sequence[Path]) -> list[Sample]:
    """The samples of saved ``--json`` files, pooled."""
    samples: list[Sample] = []
    for path in paths:
        try:
            saved = json.loads(path.read_text())
            samples += [Sample(**{**s, "loadavg": tuple(s["loadavg"])}) for s in saved["samples"]]
        except FileNotFoundError:
            raise CannotMeasure(f"--report {path}: no such file") from None
        except (ValueError, KeyError, TypeError) as e:
            raise CannotMeasure(
                f"--report {path}: not a file {NAME} --json wrote ({type(e).__name__}: {e}); give one "
                "it wrote"
            ) from None
    return samples


def shareable(argv: Sequence[str]) -> list[str]:
    """``argv`` with each absolute path outside the current and the home directory reduced to its
    file name. :func:`conformance.snippets.portable_command` shortens the others; a snippet is
    published, and a directory of one machine means nothing on another."""
    roots = (str(Path.cwd()) + os.sep, str(Path.home()) + os.sep)
    words = []
    for word in argv:
        prefix, sep, value = word.partition("=") if word.startswith("--") else ("", "", word)
        if os.path.isabs(value) and not value.startswith(roots):
            value = Path(value).name
        words.append(prefix + sep + value)
    return words
