"""``lochkit conformance``: every conformance suite against one backend, with a per-area summary;
or, with ``--self-check``, against every broken adapter of the catalogue, with the kill table."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from conformance import snippets
from lochkit.usage import suite_target

NAME = "conformance"
HELP = "run the conformance suites against one backend (or --self-check: against broken adapters)"
DESCRIPTION = (
    "Runs every conformance suite against BACKEND, prints a per-area summary and exits non-zero on "
    "any failure. Arguments after '--' go to pytest. With --self-check, runs the suite against every "
    "deliberately broken adapter of lochkit's catalogue instead, prints which tests catch which bug, "
    "and exits non-zero if one survives or a correct adapter fails."
)
#: Plugins of other tools that pytest would load for nothing: locust's serves locust's pytest-style
#: load tests (a --host/-H option, session/fastsession fixtures). Not blocked by the conformance
#: plugin itself, which is active in every pytest run of an environment with lochkit, locust's too.
UNUSED_PLUGINS = ("locust",)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        type=suite_target,
        metavar="NAME",
        help="backend name (see: lochkit backends), serve:NAME (the version-store suites through "
        "lochkit serve over NAME) or nessie (a real Nessie server); required unless --self-check",
    )
    parser.add_argument(
        "--url", metavar="URL", help="address of an already running server (default: obtain one)"
    )
    parser.add_argument(
        "--provision",
        default="auto",
        choices=["auto", "external", "testcontainers", "local"],
        help="how to obtain the server when no --url is given: auto tries testcontainers when a "
        "Docker engine answers, else a local process; external needs --url",
    )
    parser.add_argument(
        "--allow-existing-data",
        action="store_true",
        help="run in the database at --url even when it holds repositories lochkit's test and load "
        "commands did not create (refused otherwise); the suites still write only into scratch "
        "repositories of their own, and erase only those",
    )
    parser.add_argument(
        "--layout",
        choices=["lochkit", "nessie"],
        default="lochkit",
        help="the storage layout to test the backend in: lochkit's own (the default) or a Nessie "
        "server's (the backend's URL option layout=nessie)",
    )
    parser.add_argument("--report", metavar="FILE", help="write per-area results as JSON to FILE")
    parser.add_argument("-k", "--keyword", help="only tests matching this pytest -k expression")
    parser.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    check = parser.add_argument_group("self-check (what the suite can catch)")
    check.add_argument(
        "--self-check",
        action="store_true",
        help="run the suite against every broken adapter of the catalogue and print the kill table",
    )
    check.add_argument(
        "--list",
        action="store_true",
        help="list the broken adapters (name, the guarantee each breaks, where its bug is) and run none",
    )
    check.add_argument(
        "--mutant", action="append", metavar="NAME", help="only this broken adapter (repeatable)"
    )
    check.add_argument(
        "--repeat",
        type=int,
        default=3,
        metavar="N",
        help="runs of each racy broken adapter; it counts as caught only if every run catches it (default 3)",
    )
    check.add_argument(
        "--every-test",
        action="store_true",
        help="also run the whole suite against each broken adapter, to count the tests that catch it",
    )
    check.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="adapters checked at once (default 1)"
    )
    check.add_argument("--markdown", action="store_true", help="print the kill table as Markdown")
    check.add_argument(
        "--markdown-out",
        metavar="FILE",
        help="also write the results to FILE as a documentation snippet: the backend's row of the "
        "conformance matrix, or with --self-check the kill table and its summary",
    )
    check.add_argument(
        "--json", metavar="FILE", help="also write every result (each catching test, when counted) as JSON"
    )


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from conformance.suite_targets import parse_target
    from persist_spi.registry import url_problem

    if args.self_check:
        return _self_check(args)
    if not args.backend:
        print(
            "lochkit conformance: give --backend NAME (see: lochkit backends), or --self-check",
            file=sys.stderr,
        )
        return 2
    # serve:NAME drives NAME's server: the address is NAME's (--backend was checked already).
    backend = parse_target(args.backend).backend or args.backend
    problem = url_problem(backend, args.url)
    if args.list:
        problem = "--list lists the broken adapters of --self-check: give it with --self-check"
    if problem:
        print(f"lochkit conformance: {problem}", file=sys.stderr)
        return 2
    try:
        import pytest
    except ImportError:
        print(
            "lochkit conformance: needs pytest and hypothesis; install them with: "
            "pip install 'lochkit[conformance]'",
            file=sys.stderr,
        )
        return 1
    pytest_args = ["--pyargs", "conformance.all", "-p", "no:cacheprovider", "-q"]
    for plugin in UNUSED_PLUGINS:
        pytest_args += ["-p", f"no:{plugin}"]
    pytest_args += ["--backend", args.backend, "--provision", args.provision]
    if args.url:
        pytest_args += ["--backend-url", f"{backend}={args.url}"]
    if args.allow_existing_data:
        pytest_args.append("--lochkit-allow-existing-data")
    pytest_args += ["--lochkit-layout", args.layout]
    problem = snippets.out_problem("--markdown-out", args.markdown_out)
    if problem:
        print(f"lochkit conformance: {problem}", file=sys.stderr)
        return 2
    if args.keyword:
        pytest_args += ["-k", args.keyword]
    if args.exitfirst:
        pytest_args.append("-x")
    with tempfile.TemporaryDirectory(prefix="lochkit-conformance-") as scratch:
        # The snippet is rendered from the run's report: a scratch one when --report names none.
        report = args.report or (str(Path(scratch) / "report.json") if args.markdown_out else None)
        if report:
            pytest_args += ["--lochkit-report", report]
        code = int(pytest.main([*pytest_args, *passthrough]))
        if code == pytest.ExitCode.NO_TESTS_COLLECTED:
            print("lochkit: no conformance test was selected; check --keyword", file=sys.stderr)
        elif args.markdown_out and report and Path(report).is_file():
            _write_matrix_snippet(args, Path(report))
    return code


def _write_matrix_snippet(args: argparse.Namespace, report: Path) -> None:
    from conformance.matrix import load, snippet

    source = f"backend {args.backend}" + (f", -k {args.keyword!r}" if args.keyword else "")
    snippets.write(args.markdown_out, snippet(load(report)), snippets.invocation(["lochkit"]), source=source)


def _self_check(args: argparse.Namespace) -> int:
    from conformance.mutants import MUTANTS, UnknownMutant, mutant_named
    from conformance.mutants.kill_table import catalogue_lines, markdown_table, summary, text_table, to_json
    from conformance.mutants.self_check import self_check

    ignored = [flag for flag, value in (("--backend", args.backend), ("--url", args.url)) if value]
    if ignored or args.keyword or args.report:
        print(
            "lochkit conformance: --self-check runs the catalogue's own adapters; "
            "--backend, --url, --keyword and --report do not apply to it",
            file=sys.stderr,
        )
        return 2
    if args.json and not Path(args.json).resolve().parent.is_dir():
        print(f"lochkit conformance: --json {args.json}: its directory does not exist", file=sys.stderr)
        return 2
    problem = snippets.out_problem("--markdown-out", args.markdown_out)
    if problem:
        print(f"lochkit conformance: {problem}", file=sys.stderr)
        return 2
    if args.repeat < 1 or args.jobs < 1:
        print("lochkit conformance: --repeat and --jobs take a number of at least 1", file=sys.stderr)
        return 2
    try:
        mutants = [mutant_named(n) for n in args.mutant] if args.mutant else list(MUTANTS)
    except UnknownMutant as e:
        print(f"lochkit conformance: {e}", file=sys.stderr)
        return 2
    if args.list:
        for line in catalogue_lines(mutants):
            print(line)
        return 0
    print(f"self-check: the conformance suite against {len(mutants)} broken adapters", flush=True)
    result = self_check(
        mutants,
        repeat=args.repeat,
        every_test=args.every_test,
        jobs=args.jobs,
        progress=lambda line: print(f"  {line}", flush=True),
    )
    print()
    for line in markdown_table(result) if args.markdown else text_table(result):
        print(line)
    print()
    for line in summary(result):
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(to_json(result), indent=2) + "\n")
        print(f"results written to {args.json}")
    if args.markdown_out:
        text = "\n".join([*markdown_table(result), "", *(f"- {line}" for line in summary(result))])
        source = f"--repeat {args.repeat}, --jobs {args.jobs}" + (", --every-test" if args.every_test else "")
        snippets.write(args.markdown_out, text, snippets.invocation(["lochkit"]), source=source)
    return 0 if result.ok else 1
