"""``lochkit bench``: the commit-cost benchmark (it parses its own arguments)."""

from __future__ import annotations

from collections.abc import Sequence

NAME = "bench"
HELP = "commit-cost benchmark (arguments after 'bench' go to it; see --help)"
OWN_PARSER = True


def run_raw(argv: Sequence[str]) -> int:
    from loadgen.commit_bench import main as bench_main

    return bench_main(argv)
