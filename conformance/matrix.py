"""Render a conformance report (``--lochkit-report`` JSON) as the backend x suite matrix.

``python -m conformance.matrix report.json [--markdown] [--markdown-out FILE]``. The documentation's
matrix (``docs/generated/conformance-matrix.md``) is the snippet ``--markdown-out`` writes from the
report kept in ``tests/unit/data`` (a unit test keeps the two equal).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TypeGuard

from conformance import snippets
from persist_spi.columns import columns
from persist_spi.errors import InputError

#: Suite groups in the order a reader meets them: the contract, the logic above it, Nessie's
#: model, the cache. Groups not listed here follow in alphabetical order.
GROUP_ORDER: Final = ("persist", "logic", "versionstore", "cache")
#: How each outcome other than "passed" is marked in a cell ("475 + 3s").
MARKS: Final = (("failed", "F"), ("error", "E"), ("xfailed", "x"), ("xpassed", "X"), ("skipped", "s"))
#: The "how" column, by provisioning method.
HOW: Final = {
    "embedded": "embedded",
    "local-process": "local process",
    "testcontainers": "container",
    "external": "external",
    "default-address": "default address",
}
LEGEND: Final = (
    "A cell shows passed tests, then F failed, E errors, x declared deviations (expected failures), "
    "X deviations that passed, s skipped; — where no test of that group ran."
)


class ReportError(InputError):
    """The file is not a conformance report; the message says what is wrong with it."""


def cell(counts: dict[str, int]) -> str:
    if not any(counts.values()):
        return "—"  # no test of this group ran here (REST targets run the version-store suites only)
    text = str(counts.get("passed", 0))
    for outcome, mark in MARKS:
        if counts.get(outcome):
            text += f" + {counts[outcome]}{mark}"
    return text


def groups(report: dict[str, Any]) -> list[str]:
    """Suite groups (the part of an area name before the dot) present in the report, in order."""
    present = {area.split(".")[0] for data in report.values() for area in data["areas"]}
    known = [g for g in GROUP_ORDER if g in present]
    return known + sorted(present - set(known))


def server_and_how(provisioning: dict[str, Any]) -> tuple[str, str]:
    """A short server label (the text before its first comma: what, not how it was tuned) and how
    it was obtained."""
    method = provisioning.get("method", "")
    if method == "none":
        description = str(provisioning.get("description", ""))
        state = "not available here" if "not available here" in description else "could not be set up"
        return state, "—"
    server = str(provisioning.get("server") or "").split(", ")[0]
    return server or "—", HOW.get(method, method or "—")


def rows(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    order = groups(report)
    header = ["backend", "server", "how", *order, "total"]
    body = []
    for backend, data in sorted(report.items()):
        per_group: dict[str, dict[str, int]] = {g: {} for g in order}
        overall: dict[str, int] = {}
        for area, entry in data["areas"].items():
            group = per_group[area.split(".")[0]]
            for outcome, n in entry["counts"].items():
                group[outcome] = group.get(outcome, 0) + n
                overall[outcome] = overall.get(outcome, 0) + n
        server, how = server_and_how(data.get("provisioning", {}))
        body.append([f"`{backend}`", server, how, *(cell(per_group[g]) for g in order), cell(overall)])
    return header, body


def render(report: dict[str, Any], markdown: bool) -> str:
    header, body = rows(report)
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)
    plain = [[c.strip("`") for c in r] for r in body]
    return "\n".join([*columns(header, plain), "", LEGEND])


def reduced(report: dict[str, Any]) -> dict[str, Any]:
    """What the matrix shows of ``report``, and nothing else: per backend, how it was obtained (the
    server's short label, never its paths or settings) and the non-zero counts per area. The
    documentation's matrix is rendered from such a reduced report kept in the repository."""
    small: dict[str, Any] = {}
    for backend, data in report.items():
        provisioning = data.get("provisioning", {})
        kept: dict[str, Any] = {"method": provisioning.get("method", "")}
        if kept["method"] == "none":
            kept["description"], _ = server_and_how(provisioning)
            kept["description"] = "is " + kept["description"]
        elif provisioning.get("server"):
            kept["server"] = str(provisioning["server"]).split(", ")[0]
        areas = {
            area: {"counts": {o: n for o, n in entry["counts"].items() if n}}
            for area, entry in data["areas"].items()
        }
        small[backend] = {"areas": areas, "provisioning": kept}
    return small


def is_report(doc: object) -> TypeGuard[dict[str, Any]]:
    """Whether parsed JSON has a conformance report's shape: {backend: {areas: {...}}}."""
    return isinstance(doc, dict) and all(
        isinstance(data, dict) and isinstance(data.get("areas"), dict) for data in doc.values()
    )


def load(path: Path) -> dict[str, Any]:
    """The report in ``path``, or a :class:`ReportError` saying why it is not one."""
    try:
        report = json.loads(path.read_text())
    except OSError as e:
        raise ReportError(f"cannot read {path}: {e.strerror or e}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReportError(f"{path} is not JSON ({e}); pass the file written by --lochkit-report") from None
    if is_report(report):
        return report
    raise ReportError(
        f"{path} is JSON but not a conformance report (expected {{backend: {{areas: ...}}}}); pass "
        "the file written by --lochkit-report"
    )


def load_all(paths: Sequence[Path]) -> dict[str, Any]:
    """The reports in ``paths`` as one; a backend in two of them is a :class:`ReportError` (one
    run's counts would silently replace the other's)."""
    merged: dict[str, Any] = {}
    came_from: dict[str, Path] = {}
    for path in paths:
        for backend, data in load(path).items():
            if backend in came_from:
                raise ReportError(
                    f"{backend} is in {came_from[backend]} and in {path}; pass each backend's report once"
                )
            merged[backend], came_from[backend] = data, path
    return merged


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.matrix",
        description="Render a conformance report (the JSON --lochkit-report writes) as the backend x "
        "suite matrix.",
    )
    parser.add_argument(
        "report",
        type=Path,
        nargs="+",
        help="the report file; several make one matrix (e.g. CI's report and a backend run apart), "
        "each backend in one of them only",
    )
    parser.add_argument("--markdown", action="store_true", help="a Markdown table, as in the documentation")
    snippets.add_option(parser, "the Markdown table and its legend")
    parser.add_argument(
        "--keep-report",
        metavar="FILE",
        help="also write the report reduced to what the matrix shows to FILE (the input the "
        "documentation's matrix is rendered from)",
    )
    args = parser.parse_args(argv)
    snippets.refuse_unwritable(parser, args, "--markdown-out", "--keep-report")
    try:
        report = load_all(args.report)
    except ReportError as e:
        parser.error(str(e))
    print(render(report, args.markdown))
    if args.keep_report:
        Path(args.keep_report).write_text(json.dumps(reduced(report), indent=2, sort_keys=True) + "\n")
    if args.markdown_out:
        command = snippets.invocation(["python", "-m", "conformance.matrix"], argv)
        inputs = ", ".join(map(str, args.report))
        snippets.write(args.markdown_out, snippet(report), command, source=f"input: {inputs}")
    return 0


def snippet(report: dict[str, Any]) -> str:
    """The documentation snippet's Markdown: the matrix, then its legend."""
    return render(report, markdown=True) + "\n\n" + LEGEND


if __name__ == "__main__":
    sys.exit(main())
