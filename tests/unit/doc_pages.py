"""What the documentation tests share: where the pages are, their Markdown tables, and whether a
command accepts the options a page shows it with."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

from lochkit.cli import build_parsers

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def user_docs() -> list[Path]:
    """Every page a user reads: the README and the Markdown under docs/ (generated snippets too)."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def tables_without_separator(text: str) -> list[int]:
    """Line numbers (1-based) of tables whose second line is not a separator row (``|---|---|``):
    such a table renders as a paragraph of pipes. Code blocks are not looked at."""
    bad = []
    lines = text.splitlines()
    in_code = False
    previous = ""
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        # A table starts a block: a line of cells after a blank line (a line starting with a pipe
        # inside a paragraph is the paragraph's text).
        starts_table = line.lstrip().startswith("|") and not previous.strip()
        if not in_code and starts_table:
            following = lines[number] if number < len(lines) else ""
            if not re.fullmatch(r"\s*\|?(\s*:?-{3,}:?\s*\|)+\s*:?(-{3,}:?)?\s*", following):
                bad.append(number)
        previous = line if not in_code else "```"
    return bad


def _options_of(parser: argparse.ArgumentParser) -> set[str]:
    """Every option ``parser`` takes, its subcommands' included (``lochkit experiment asymmetric``)."""
    options: set[str] = set()
    for action in parser._actions:
        options.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                options |= _options_of(sub)
    return options


@cache
def _scenario_options() -> frozenset[str]:
    """``lochkit scenario`` hands its arguments to locust; lochkit's own are those its --help lists
    (asked in a subprocess: importing locust would monkey-patch this test process for gevent)."""
    script = "from lochkit.cli import main; main(['scenario', 'commit-to-branch', '--help'])"
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    # --web is read by the command itself; --sim-* stands for every scenario's own options.
    return frozenset(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", shown)) | {"--web", "--sim-"})


def options_not_accepted(command: str, usage: str) -> set[str]:
    """The options ``usage`` shows for ``lochkit COMMAND`` that the command does not take."""
    _, parsers = build_parsers(own_parsers=True)
    if command == "scenario":
        options = set(_scenario_options())
    else:
        options = _options_of(parsers[command]) if command in parsers else set()
    shown = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", usage.replace("\\|", " ")))
    return shown - options
