"""Append-only JSON-lines files that survive SIGKILL of their writer.

Each record is one ``write(2)`` on a file opened with ``O_APPEND``: the kernel has it as soon as the
call returns, whatever happens to the process afterwards, and lines from several processes never
interleave. A record torn by a power cut (not a process kill) would be the last line; readers skip a
last line that does not parse.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def write(self, record: dict[str, Any]) -> None:
        os.write(self._fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())

    def close(self) -> None:
        os.close(self._fd)


def read_journal(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines):
        try:
            yield json.loads(line)
        except ValueError:
            if n != len(lines) - 1:
                raise ValueError(f"{path}: line {n + 1} is not JSON") from None
