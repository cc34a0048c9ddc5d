"""The published figures of the asymmetric-commit experiment (a benchmark script, not a test).

For every backend and commit policy it runs ``lochkit experiment asymmetric`` with a 1-put and a
10-put writer, as threads and (where the backend allows several processes) as processes, then eight
1-put writers as threads; it prints the tables in Markdown and can keep the raw rows, with when and
where they were measured, and write the tables as a documentation snippet::

    python -m loadgen.experiments.figures --duration 10 --json figures.json
    python -m loadgen.experiments.figures --backends inmemory,postgres --policies nessie,group
    python -m loadgen.experiments.figures --from-json docs/asymmetric-figures.json \
        --markdown-out docs/generated/asymmetric-figures.md

Each backend's server is provisioned once (as the conformance plugin does it) and stopped at the
end. Wall-clock figures on a shared machine are noisy: compare rows of one run, side by side.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance import snippets
from loadgen.experiments.asymmetric import AsymmetricOptions, ExperimentResult, prepare, run
from persist_spi.versionstore.policies import POLICY_NAMES

BACKENDS = ("inmemory", "rocksdb", "postgres", "mariadb", "mongodb", "cassandra", "dynamodb", "bigtable")


def _target_args(backend: str) -> argparse.Namespace:
    return argparse.Namespace(
        backend=backend, url=None, provision="auto", nessie_uri=None, nessie_options=[], nessie_client="HTTP"
    )


def measure(
    backends: Sequence[str], policies: Sequence[str], duration_s: float, eight: int
) -> list[dict[str, Any]]:
    from loadgen.targets.opening import open_target

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="lochkit-figures-") as scratch:
        for backend in backends:
            with open_target(_target_args(backend), purpose="load") as target:
                modes = ["threads", "processes"] if target.connection is not None else ["threads"]
                for policy in policies:
                    if target.kind == "nessie" and policy not in ("nessie", "coordinated"):
                        continue
                    for mode in modes:
                        options = AsymmetricOptions(duration_s, (1, 10), policy, mode == "processes")
                        result = _run(target, options, Path(scratch))
                        for row in result.rows():
                            rows.append(
                                {"backend": backend, "policy": policy, "mode": mode, "table": "1+10", **row}
                            )
                        _progress(backend, policy, mode, result)
                    options = AsymmetricOptions(duration_s, (1,) * eight, policy, False)
                    result = _run(target, options, Path(scratch))
                    rows.append(
                        {"backend": backend, "policy": policy, "mode": "threads", "table": f"{eight}x1",
                         **result.total_row()}
                    )  # fmt: skip
                    _progress(backend, policy, f"{eight} writers", result)
    return rows


def _run(target: Any, options: AsymmetricOptions, scratch: Path) -> ExperimentResult:
    prepare(target, options, None)
    return run(target, options, None, scratch)


def _progress(backend: str, policy: str, mode: str, result: ExperimentResult) -> None:
    shares = ", ".join(f"{r['writer']} {r['commits_per_s']}/s" for r in result.rows())
    print(f"# {backend} {policy} {mode}: {shares}", file=sys.stderr, flush=True)


def tables(rows: list[dict[str, Any]]) -> str:
    """The two tables in Markdown: per writer, then the many-writer throughput."""
    out = [
        "A 1-put and a 10-put writer on one branch, per backend, policy and writer:",
        "",
        (
            "| backend | policy | writers as | writer | commits/s | share | attempts mean / max | timeouts | "
            "p50 / p99 ms |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["table"] != "1+10":
            continue
        out.append(
            f"| {r['backend']} | {r['policy']} | {r['mode']} | {r['puts_per_commit']} put"
            f"{'s' if r['puts_per_commit'] > 1 else ''} | {r['commits_per_s']:.1f} | "
            f"{r['share'] * 100:.1f} % | "
            f"{r['attempts_mean']:.2f} / {r['attempts_max']} | {r['timeouts']} | "
            f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f} |"
        )
    eight = [r for r in rows if r["table"] != "1+10"]
    if eight:
        policies = list(dict.fromkeys(r["policy"] for r in eight))
        writers = eight[0]["table"].removesuffix("x1")  # "8x1": eight 1-put writers
        out += [
            "",
            f"{writers} 1-put writers on one branch (threads), total commits/s (retry timeouts):",
            "",
            "| backend | " + " | ".join(policies) + " |",
            "|---|" + "---|" * len(policies),
        ]
        for backend in dict.fromkeys(r["backend"] for r in eight):
            cells = []
            for policy in policies:
                found = [r for r in eight if r["backend"] == backend and r["policy"] == policy]
                cells.append(
                    f"{found[0]['commits_per_s']:.1f} ({found[0]['timeouts']} timeouts)" if found else "—"
                )
            out.append(f"| {backend} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadgen.experiments.figures", description=__doc__)
    parser.add_argument(
        "--backends",
        help="comma-separated (default: every backend of "
        + ", ".join(BACKENDS)
        + " whose driver is installed; Bigtable's client is an extra of its own)",
    )
    parser.add_argument("--policies", default=",".join(POLICY_NAMES))
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per run (default 10)")
    parser.add_argument("--eight", type=int, default=8, help="writers of the throughput table (default 8)")
    parser.add_argument(
        "--json", type=Path, help="also keep every row as JSON, with when and where it was measured"
    )
    parser.add_argument("--from-json", type=Path, help="print the tables of a kept JSON file, run nothing")
    snippets.add_option(parser, "the tables")
    args = parser.parse_args(argv)
    snippets.refuse_unwritable(parser, args, "--markdown-out")
    command = snippets.invocation(["python", "-m", "loadgen.experiments.figures"], argv)
    if args.from_json is not None:
        measured, rows = read_kept(args.from_json)
    else:
        backends = [b for b in args.backends.split(",") if b] if args.backends else _installed(BACKENDS)
        policies = [p for p in args.policies.split(",") if p]
        unknown = sorted(set(policies) - set(POLICY_NAMES))
        if unknown:
            parser.error(f"unknown policies {unknown}; known: {', '.join(POLICY_NAMES)}")
        rows = measure(backends, policies, args.duration, args.eight)
        measured = {
            "command": snippets.portable_command(command),
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "machine": snippets.machine(),
        }
        if args.json is not None:
            args.json.write_text(json.dumps({"measured": measured, "rows": rows}, indent=2) + "\n")
    print(tables(rows))
    if args.markdown_out:
        source = f"measured by `{measured['command']}` on {measured['date']}, {measured['machine']}"
        snippets.write(args.markdown_out, tables(rows), command, source=source)
    return 0


def _installed(names: Sequence[str]) -> list[str]:
    """Those of ``names`` whose driver is installed; the others are named on stderr."""
    from persist_spi.registry import discover_backends

    entries = discover_backends()
    found = [n for n in names if n in entries and entries[n].installed]
    for name in sorted(set(names) - set(found)):
        print(f"# {name}: left out, its driver is not installed", file=sys.stderr)
    return found


def read_kept(path: Path) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The rows of a file ``--json`` wrote, and when and where they were measured."""
    kept = json.loads(path.read_text())
    if isinstance(kept, list):  # rows alone, as files written before the measurement was recorded
        return {"command": "unknown", "date": "unknown", "machine": "unknown"}, kept
    return kept["measured"], kept["rows"]


if __name__ == "__main__":
    raise SystemExit(main())
