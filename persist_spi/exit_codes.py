"""The exit codes every lochkit command keeps to (``docs/cli.md``).

0 done; :data:`FAILED` the work failed (a failed commit, a failing test, inconsistent data, or a
bug); :data:`USAGE` a usage error (nothing was started or written); :data:`UNAVAILABLE` the
database or server could not be reached or opened. Commands with more outcomes (``check``: 3 and 4;
``conformance``: pytest's) document theirs. A command whose stdout is closed early (``| head``)
exits :data:`BROKEN_PIPE`, one stopped by Ctrl-C :data:`INTERRUPTED`.
"""

from __future__ import annotations

from typing import Final

FAILED: Final = 1
USAGE: Final = 2
UNAVAILABLE: Final = 5
INTERRUPTED: Final = 130
#: What a shell reports for a process SIGPIPE ended (128 + 13), as ``cat file | head`` gives.
BROKEN_PIPE: Final = 141
