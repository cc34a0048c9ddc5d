"""``lochkit generate``: the content generator's ``generate`` (synthetic commit load), the same as
``lochkit content-generator generate``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

NAME = "generate"
HELP = "generate commits like Nessie's content generator, against a lochkit backend or a Nessie server"
DESCRIPTION = (
    "Generate commits (Nessie's content generator 'generate') against lochkit's version store "
    "in-process (--backend NAME) or a Nessie server (--backend nessie, or --uri URI). Leaves a run "
    "directory with run.json and events.parquet."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from lochkit.commands.content_generator import add_generate_arguments

    add_generate_arguments(parser)


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from lochkit.commands.content_generator import execute

    return execute("generate", args, command="lochkit generate")
