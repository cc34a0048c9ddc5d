"""``lochkit content-generator SUBCOMMAND``: Nessie's ``nessie-content-generator``, against a lochkit
backend in-process or any Nessie server (see ``loadgen/targets/opening.py`` for choosing one).

Exit codes: 0 done, 1 an error was recorded (a failed commit, an unknown reference), 2 a usage error
(a bad option or key pattern), 5 the target cannot be reached or opened (a server that does not
answer, a RocksDB store another process holds locked). Nessie's generator exits 1 for the last too;
lochkit keeps one code for it in every command (docs/cli.md)."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from persist_spi.errors import InputError, UsageError

NAME = "content-generator"
HELP = "Nessie's content generator: generate commits, read and maintain content (see --help)"
DESCRIPTION = (
    "Nessie's content generator (nessie-content-generator) against a lochkit backend in-process or "
    "any Nessie server. 'lochkit generate' is 'lochkit content-generator generate'."
)
SUBCOMMANDS = (
    "generate",
    "entries",
    "commits",
    "refs",
    "content",
    "content-refresh",
    "delete",
    "copy",
    "create-missing-namespaces",
)
USAGE_ERROR = 2


@dataclass(frozen=True)
class Seed:
    """A run's seed and whether it was drawn (no --seed given) rather than given."""

    value: int | None
    drawn: bool


def _default_author() -> str | None:
    try:
        return os.environ.get("USER") or getpass.getuser()
    except Exception:  # no user name in this environment: commits carry no author, as in Nessie
        return None


def _common(parser: argparse.ArgumentParser, *, writes_test_data: bool = False) -> None:
    from loadgen.targets.opening import add_target_arguments

    add_target_arguments(parser, writes_test_data=writes_test_data)
    parser.add_argument("-v", "--verbose", action="store_true", help="Produce verbose output (if possible)")


def _committing(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--author",
        default=_default_author(),
        help="Commit author for changes made by this command (default: the USER environment variable)",
    )


def _run_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="run directory for run.json and events.parquet (default: a new one under .lochkit/runs/)",
    )


def _branch_option(parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> None:
    parser.add_argument(
        "-r",
        "--ref",
        "--branch",
        dest="ref",
        metavar="REF",
        help="Branch name (defaults to the default branch).",
    )


def add_generate_arguments(parser: argparse.ArgumentParser) -> None:
    from loadgen.durations import FORMS
    from loadgen.targets.opening import add_policy_argument

    _common(parser, writes_test_data=True)
    _committing(parser)
    _run_output(parser)
    add_policy_argument(parser, over_rest=True)
    parser.add_argument(
        "--inventory",
        action="store_true",
        help="lochkit backends only: after the run, write a storage inventory (lochkit inventory) into "
        "the run directory's inventory/, for lochkit report.",
    )
    parser.add_argument(
        "-n", "--num-commits", type=int, default=100, help="Number of commits to create (default 100)."
    )
    parser.add_argument(
        "-b", "--num-branches", type=int, default=1, help="Number of branches to use (default 1)."
    )
    parser.add_argument(
        "-D",
        "--default-branch",
        help="Name of the default branch, uses the server's default branch if not specified; created "
        "from the server's default branch when missing.",
    )
    parser.add_argument(
        "-t",
        "--num-tables",
        type=int,
        default=1,
        help="Number of table names, each commit chooses a random table (content-key) (default 1).",
    )
    parser.add_argument(
        "--puts-per-commit",
        type=int,
        default=1,
        help="Keys drawn (with replacement, then de-duplicated) from the table names per commit (default 1).",
    )
    parser.add_argument(
        "--key-pattern",
        help="Key pattern for the table names, e.g. 'db_${every,10,uuid}.tbl_${seq,0}' "
        "(functions uuid, int,B, string,L, seq,O, every,N,F..., prob,P,F...; $$ is a literal $).",
    )
    parser.add_argument(
        "--type",
        default="ICEBERG_TABLE",
        help="Content-types to generate. Defaults to ICEBERG_TABLE. Possible values: ICEBERG_TABLE, "
        "ICEBERG_VIEW, DELTA_LAKE_TABLE, UDF",
    )
    parser.add_argument(
        "-T",
        "--tag-probability",
        type=float,
        default=0.0,
        help="Probability to create a new tag off the last commit.",
    )
    parser.add_argument(
        "-d",
        "--duration",
        help=f"Runtime duration, equally distributed among the number of commits to create ({FORMS}).",
    )
    parser.add_argument(
        "--continue-on-error", action="store_true", help="On a commit conflict, print it and continue."
    )
    parser.add_argument("-m", "--message", help="Commit message (auto-generated if not set).")
    parser.add_argument(
        "--seed",
        type=int,
        help="lochkit only: make the run reproducible (keys, contents, draws; on the in-process target "
        "also commit times and content ids, hence commit ids). Without it a seed is drawn for the "
        "draws and recorded in run.json, so --seed SEED replays them.",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")
    add_generate_arguments(
        sub.add_parser("generate", help="Generate commits", description="Generate commits")
    )

    p = sub.add_parser(
        "entries",
        help="List entries (keys) with the associated object type, ID and (optionally) content.",
    )
    _common(p)
    p.add_argument(
        "-r", "--ref", default="main", help="Name of the branch/tag to read content from, defaults to 'main'"
    )
    p.add_argument(
        "-H", "--hash", help="Hash of the commit to read content from, defaults to HEAD (~N, ^N accepted)."
    )
    p.add_argument("-C", "--with-content", action="store_true", help="Include content for each entry.")
    p.add_argument("-L", "--limit", type=int, default=0, help="Maximum number of entries (<=0: all).")

    p = sub.add_parser("commits", help="Read commits")
    _common(p)
    p.add_argument(
        "-r",
        "--ref",
        default="main",
        help="Name of the branch/tag to read the commit log from, defaults to 'main'",
    )
    p.add_argument("-H", "--hash", help="Hash of the commit to start at, defaults to HEAD (~N, ^N accepted).")
    p.add_argument("-L", "--limit", type=int, default=0, help="Maximum number of commits (<=0: all).")

    p = sub.add_parser("refs", help="Read references")
    _common(p)
    p.add_argument("-L", "--limit", type=int, default=0, help="Maximum number of references (<=0: all).")

    p = sub.add_parser("content", help="Read content objects")
    _common(p)
    p.add_argument(
        "-r", "--ref", default="main", help="Name of the branch/tag to read content from, defaults to 'main'"
    )
    p.add_argument(
        "-H", "--hash", help="Hash of the commit to read content from, defaults to HEAD (~N, ^N accepted)."
    )
    p.add_argument(
        "-k",
        "--key",
        action="append",
        required=True,
        metavar="KEY_ELEMENT",
        help="Content key element (repeat for each element)",
    )

    for name, text in (
        ("content-refresh", "Get and Put content objects without changes to refresh their storage model"),
        ("delete", "Delete content objects"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        _common(p)
        _committing(p)
        _run_output(p)
        branches = p.add_mutually_exclusive_group()
        branches.add_argument(
            "--all", action="store_true", help="Process all branches (ignored when --input is set)."
        )
        _branch_option(branches)
        p.add_argument(
            "-k",
            "--key",
            action="append",
            default=[],
            metavar="KEY_ELEMENT",
            help="Elements of a single content key to process (all keys when not given).",
        )
        p.add_argument(
            "-R", "--recursive", action="store_true", help="Also process all keys nested under --key."
        )
        p.add_argument("-f", "--input", type=Path, help="Input file (see --format).")
        p.add_argument(
            "-F", "--format", choices=["CSV_KEYS", "CONTENT_INFO_JSON"], help="The input file's format."
        )
        p.add_argument(
            "-S", "--separator", help="Key element separator for CSV_KEYS (else each line is a path string)."
        )
        p.add_argument("-B", "--batch", type=int, default=100, help="Keys per read and commit (default 100).")
        p.add_argument("-m", "--message", help="Commit message (auto-generated if not set).")

    p = sub.add_parser("copy", help="Repeatedly copy content")
    _common(p)
    _committing(p)
    _run_output(p)
    _branch_option(p)
    p.add_argument(
        "-n", "--num-copies", type=int, default=10000, help="Number of copies to make (default 10000)."
    )
    p.add_argument(
        "-k",
        "--from",
        dest="from_key",
        action="append",
        required=True,
        help="Key element of the content to copy.",
    )
    p.add_argument(
        "-t",
        "--to",
        action="append",
        required=True,
        help="Key element pattern of the copies; may contain one %%d, replaced by the copy counter.",
    )

    p = sub.add_parser(
        "create-missing-namespaces", help="Creates missing namespaces for content keys at branch HEADs."
    )
    _common(p)
    _committing(p)
    _run_output(p)
    p.add_argument(
        "-r",
        "--branch",
        action="append",
        default=[],
        metavar="REF",
        help="Branch(es) to process, defaults to all branches.",
    )


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    return execute(args.subcommand, args)


def execute(subcommand: str, args: argparse.Namespace, command: str | None = None) -> int:
    """Run one subcommand; user mistakes and unreachable targets become one line and an exit code,
    starting with the command as the user typed it (``command``, e.g. ``lochkit generate``)."""
    command = command or f"lochkit content-generator {subcommand}"
    from loadgen.targets.opening import TargetError
    from persist_spi.errors import LochkitError, Unreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from persist_spi.registry import UnknownBackend
    from persist_spi.versionstore.errors import ReferenceConflictError
    from provisioning.base import ProvisioningFailed

    try:
        return _execute(subcommand, args)
    except ReferenceConflictError as e:
        # Before ValueError: a Put the store refuses outright (InvalidOperation, e.g. a content type
        # change) is both, and it is a failed commit, not a usage error.
        print(f"{command}: {e}", file=sys.stderr)
        return 1
    except (InputError, UnknownBackend) as e:
        print(f"{command}: {e}", file=sys.stderr)
        return USAGE_ERROR
    except Unreachable as e:
        print(f"{command}: {e}", file=sys.stderr)
        return UNAVAILABLE
    except (LochkitError, TargetError, ProvisioningFailed, OSError) as e:
        print(f"{command}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130


def _out(verbose_lines: bool) -> Any:
    return (lambda line: print(line, flush=True)) if verbose_lines else (lambda line: None)


def _err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _execute(subcommand: str, args: argparse.Namespace) -> int:
    from loadgen.contentgen import maintenance as m
    from loadgen.targets.opening import names_nessie_server, open_target
    from loadgen.targets.policy import apply_policy, rest_policy_problem
    from persist_spi.versionstore.content import ContentKey
    from persist_spi.versionstore.sources import DEFAULT_SOURCES, seeded_sources

    out = _out(True)
    check_usage(subcommand, args)
    if subcommand == "generate":
        from loadgen.contentgen.generate import draw_seed

        options = _generate_options(args, drawn_seed=None if args.seed is not None else draw_seed())
        options.validate()
        # Refused before a Nessie server is started or reached, as apply_policy would refuse it after.
        problem = rest_policy_problem(args.policy) if names_nessie_server(args) else None
        if problem is not None:
            raise UsageError(problem)
        sources = seeded_sources(args.seed) if args.seed is not None else DEFAULT_SOURCES
        with open_target(args, purpose="load", sources=sources) as target:
            if getattr(args, "inventory", False) and target.kind != "lochkit":
                raise UsageError("--inventory needs a lochkit backend (--backend NAME), not a Nessie server")
            args.policy = apply_policy(target, args.policy)  # the run directory records the one applied
            seed = Seed(options.draws_seed, drawn=args.seed is None)
            return _recorded(subcommand, args, target, _generate_body(args, options), seed)
    with open_target(args, purpose="existing") as target:
        api = target.api
        if subcommand == "commits":
            m.read_commits(api, args.ref, args.hash, args.limit, args.verbose, out)
        elif subcommand == "refs":
            m.read_refs(api, args.limit, out)
        elif subcommand == "entries":
            m.read_entries(api, args.ref, args.hash, args.with_content, args.limit, args.verbose, out)
        elif subcommand == "content":
            m.read_content(api, args.ref, args.hash, ContentKey(tuple(args.key)), args.verbose, out)
        else:
            return _recorded(subcommand, args, target, _bulk_body(subcommand, args))
    return 0


def check_usage(subcommand: str, args: argparse.Namespace) -> None:
    """ValueError for option combinations that cannot work, before any target is opened or run
    directory made (a user's mistake leaves nothing behind)."""
    from loadgen.contentgen.maintenance import check_input

    if subcommand in ("content-refresh", "delete"):
        if args.input is not None and args.format is None:
            raise UsageError("--input needs --format CSV_KEYS or CONTENT_INFO_JSON")
        if args.input is not None and (args.key or args.all):
            raise UsageError("--input cannot be combined with --key or --all")
        if args.input is not None and not args.input.is_file():
            raise UsageError(f"--input {args.input}: no such file; give the path of a {args.format} file")
        if args.input is not None:
            check_input(_selection(args))
        if args.recursive and not args.key:
            raise UsageError("--recursive needs --key")
        if args.batch < 1:
            raise UsageError("--batch must be at least 1")
    if subcommand == "copy" and args.num_copies < 1:
        raise UsageError("--num-copies must be positive")


def _selection(args: argparse.Namespace) -> Any:
    from loadgen.contentgen.maintenance import Selection

    return Selection(
        all_branches=args.all,
        ref=args.ref,
        key=tuple(args.key),
        recursive=args.recursive,
        input_file=args.input,
        input_format=args.format,
        separator=args.separator,
        batch=args.batch,
    )


def _generate_options(args: argparse.Namespace, drawn_seed: int | None) -> Any:
    from loadgen.contentgen.generate import GenerateOptions
    from loadgen.durations import parse_duration

    return GenerateOptions(
        num_commits=args.num_commits,
        num_branches=args.num_branches,
        default_branch=args.default_branch,
        num_tables=args.num_tables,
        puts_per_commit=args.puts_per_commit,
        key_pattern=args.key_pattern,
        content_type=args.type,
        tag_probability=args.tag_probability,
        duration_s=None if args.duration is None else parse_duration(args.duration),
        continue_on_error=args.continue_on_error,
        author=args.author,
        message=args.message,
        seed=args.seed,
        drawn_seed=drawn_seed,
    )


def _generate_body(args: argparse.Namespace, options: Any) -> Any:
    from loadgen.contentgen.generate import Generator
    from loadgen.contentgen.progress import Progress

    def body(api: Any, recorder: Any) -> int:
        progress = Progress(options.num_commits, "generate")
        lines = args.verbose or not progress.enabled  # on a terminal the bar replaces the step lines
        try:
            return Generator(api, options, recorder, _out(lines), _err, progress).run()
        finally:
            progress.close()

    return body


def _bulk_body(subcommand: str, args: argparse.Namespace) -> Any:
    from loadgen.contentgen import maintenance as m
    from loadgen.contentgen.progress import Progress
    from persist_spi.versionstore.content import ContentKey

    def body(api: Any, recorder: Any) -> int:
        if subcommand == "create-missing-namespaces":  # one commit per branch: no bar
            return m.create_missing_namespaces(
                api, args.branch, args.author, args.verbose, recorder, _out(True), _err
            )
        # How many keys a delete or refresh will see is known only once it has listed them.
        progress = (
            Progress(args.num_copies, subcommand, unit="copies")
            if subcommand == "copy"
            else Progress(None, subcommand, unit="keys")
        )
        out = _out(args.verbose or not progress.enabled)  # on a terminal the bar replaces the lines
        try:
            if subcommand == "copy":
                source = ContentKey(tuple(args.from_key))
                m.copy(api, args.ref, args.num_copies, source, args.to, args.author, recorder, out, progress)
                return 0
            action = m.refresh if subcommand == "content-refresh" else m.delete
            action(api, _selection(args), args.message, args.author, recorder, out, progress)
            return 0
        finally:
            progress.close()

    return body


def _recorded(
    subcommand: str, args: argparse.Namespace, target: Any, body: Any, seed: Seed | None = None
) -> int:
    """Run a load-writing subcommand inside a run directory (see
    :func:`loadgen.contentgen.recorded_run.recorded_run`), then write its inventory if asked."""
    from loadgen.contentgen.recorded_run import recorded_run
    from loadgen.runs import default_run_dir

    parameters = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "func"}
    path = args.out or default_run_dir(subcommand)
    code = recorded_run(
        subcommand,
        target=target,
        body=body,
        path=Path(path),
        parameters=parameters,
        seed=seed.value if seed else None,
        seed_drawn=bool(seed and seed.drawn),
    )
    if getattr(args, "inventory", False):
        from reports.inventory import write_inventory

        print(write_inventory(target.api.persist, Path(path) / "inventory", source=target.facts()).describe())
    return code
