"""``lochkit bench``: the commit-cost benchmark, and with ``--compare-nessie`` the side-by-side
comparison with Nessie's own implementation (it parses its own arguments; see ``--help``).

Database servers are obtained the way the conformance suite obtains them when no ``--url`` is
given (``LOCHKIT_<NAME>_URL``, Docker, or a local process), and stopped afterwards.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from persist_spi import kernel

if TYPE_CHECKING:
    import argparse

    from persist_spi.adapter import BackendAdapter

NAME = "bench"
HELP = "commit-cost benchmark, or side by side with Nessie (arguments after 'bench' go to it; see --help)"
OWN_PARSER = True


def own_parser() -> argparse.ArgumentParser:
    from loadgen.commit_bench import build_parser
    from lochkit.help_format import HelpFormatter

    parser = build_parser()
    parser.formatter_class = HelpFormatter  # every lochkit --help shows the defaults
    return parser


def run_raw(argv: Sequence[str]) -> int:
    from conformance import snippets
    from loadgen.commit_bench import validate
    from loadgen.nessie_jvm import NessieSideError
    from persist_spi.errors import LochkitError, Unreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from persist_spi.logic.ownership import ExistingDataRefused
    from persist_spi.registry import UnknownBackend, backend_factory

    parser = own_parser()
    args = parser.parse_args(argv)
    validate(parser, args)
    problem = snippets.out_problem("--markdown-out", args.markdown_out)
    if problem:
        parser.error(problem)
    args.command_line = snippets.invocation(["lochkit", "bench"], argv)  # for the snippet's provenance
    for name in args.backend:
        try:
            backend_factory(name)
        except UnknownBackend as e:
            parser.error(str(e))
    try:
        if args.compare_nessie:
            return _compare(args)
        if args.instructions:
            return _instructions(args)
        return _bench(args)
    except ExistingDataRefused as e:
        print(f"lochkit bench: {e}", file=sys.stderr)
        return 2
    except Unreachable as e:
        print(f"lochkit bench: {e}", file=sys.stderr)
        return UNAVAILABLE
    except (LochkitError, NessieSideError) as e:
        print(f"lochkit bench: {e}", file=sys.stderr)
        return 1


@contextlib.contextmanager
def _opened(
    name: str, args: argparse.Namespace, workdir: Path
) -> Iterator[tuple[BackendAdapter, str | None]]:
    """The backend's adapter (tables set up) and its URL, provisioning a server if needed; the
    server is stopped and the adapter closed on exit."""
    from persist_spi.logic.ownership import guard_database
    from persist_spi.registry import backend_factory
    from provisioning.registry import provision

    factory = backend_factory(name)
    urls = {name: args.url} if args.url else {}
    provisioned = provision(name, factory, urls=urls, method=args.provision, workdir=workdir / name)
    try:
        adapter = factory.create(provisioned.url)
        try:
            adapter.setup_schema()
            if not provisioned.started_here:
                guard_database(
                    adapter,
                    allow_existing=args.allow_existing_data,
                    writes_into="only into scratch repositories of its own, and erases them",
                )
            yield adapter, provisioned.url
        finally:
            adapter.close()
    finally:
        provisioned.stop()


def _bench(args: argparse.Namespace) -> int:
    from loadgen.commit_bench import CACHE_CHOICES, Bench, markdown, new_repository_id, run

    name = args.backend[0]
    workdir = Path(tempfile.mkdtemp(prefix="lochkit-bench-"))
    try:
        with _opened(name, args, workdir) as (adapter, url):
            print(
                f"lochkit commit benchmark on {name} ({adapter.address}); {args.commits} commits per "
                f"scenario; object cache: {args.object_cache}; lochkit {kernel.describe()}",
                flush=True,
            )
            bench = Bench(adapter, new_repository_id())
            try:
                results = run(
                    bench,
                    commits=args.commits,
                    deep=args.deep,
                    key_counts=args.key_counts,
                    caches=CACHE_CHOICES[args.object_cache],
                    log=lambda line: print(line, flush=True),
                    url=url,
                )
            finally:
                bench.erase()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        _write_json(args.json, results.document(name))
    if args.markdown_out:
        source = f"backend {name}, {args.commits} commits per scenario, lochkit {kernel.describe()}"
        _write_snippet(args, markdown(name, results), source)
    return 0


def _instructions(args: argparse.Namespace) -> int:
    from loadgen import instructions

    name = args.backend[0]
    print(
        f"lochkit instructions per commit on {name}, counted by callgrind: runs of {args.commits} and "
        f"{2 * args.commits} commits through the object cache, subtracted; lochkit {kernel.describe()}",
        flush=True,
    )
    counts = [instructions.count(name, puts, args.commits) for puts in instructions.PUTS]
    if args.json:
        document = {"backend": name, "kernel": kernel.describe(), "instructions": [vars(c) for c in counts]}
        _write_json(args.json, document)
    if args.markdown_out:
        runs = f"runs of {args.commits} and {2 * args.commits} commits"
        source = f"backend {name}, {runs}, lochkit {kernel.describe()}"
        _write_snippet(args, instructions.markdown(counts), source)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from loadgen.commit_bench import CACHE_CHOICES
    from loadgen.nessie_compare import Comparison, compare_backend, floor_ratios, notes, table, warmup_seconds
    from loadgen.nessie_jvm import NESSIE_BACKENDS, build

    comparison = Comparison(rounds=args.rounds, seconds=args.seconds)
    classpath = None
    if any(b in NESSIE_BACKENDS for b in args.backend):
        print("Building Nessie's side (Maven; the first build downloads Nessie's jars)...", flush=True)
        classpath = build()
    workdir = Path(tempfile.mkdtemp(prefix="lochkit-compare-"))
    try:
        for name in args.backend:
            with _opened(name, args, workdir) as (adapter, url):
                print(f"{name}: {adapter.address}; lochkit {kernel.describe()}", flush=True)
                compare_backend(
                    comparison,
                    name,
                    adapter,
                    url,
                    classpath=classpath,
                    scratch=workdir / name,
                    rounds=args.rounds,
                    seconds=args.seconds,
                    warmup=warmup_seconds(args.warmup),
                    caches=CACHE_CHOICES[args.object_cache],
                    log=lambda line: print(line, flush=True),
                )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print()
    text = table(comparison) + "\n\n" + notes(comparison) + "\n\n" + floor_ratios(comparison)
    print(text)
    if args.markdown_out:
        _write_snippet(args, text, f"backends: {', '.join(args.backend)}, lochkit {kernel.describe()}")
    if args.json:
        _write_json(
            args.json,
            {
                "nessie": comparison.nessie_version,
                "storage": comparison.storage,
                "rounds": comparison.rounds,
                "seconds": comparison.seconds,
                "warmup": comparison.warmup,
                "rows": [r.as_dict() for r in comparison.rows],
                "floors": {b: f.as_dict() for b, f in comparison.floors.items()},
            },
        )
    return 0


def _write_snippet(args: argparse.Namespace, text: str, source: str) -> None:
    from conformance import snippets

    snippets.write(args.markdown_out, text, args.command_line, source=source)


def _write_json(path: str, document: dict[str, Any]) -> None:
    with open(path, "w") as out:
        json.dump(document, out, indent=2)
