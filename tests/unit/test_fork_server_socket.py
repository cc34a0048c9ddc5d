"""The campaign's writers start under any temporary directory: the fork server's Unix socket lives
there, and a long ``TMPDIR`` (a CI job's own directory holding pytest's) made every writer fail with
"AF_UNIX path too long" while the campaign reported only a failed part."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

_START_ONE_WRITER = textwrap.dedent(
    """
    import os, sys, tempfile
    from reliability import processes

    process = processes.start(os._exit, 7, "exits-with-7")
    process.join(120)
    assert tempfile.gettempdir() == os.environ["TMPDIR"], "the user's TMPDIR was changed for good"
    sys.exit(0 if process.exitcode == 7 else 1)
    """
)


def test_a_writer_starts_under_a_temporary_directory_too_long_for_a_unix_socket(tmp_path: Path) -> None:
    # At least 100 characters: with "/pymp-XXXXXXXX/listener-XXXXXXXX" the socket's path exceeds 107.
    temporary = tmp_path / ("d" * max(1, 100 - len(str(tmp_path))))
    temporary.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", _START_ONE_WRITER],
        env={**os.environ, "TMPDIR": str(temporary)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
