"""``lochkit``: one command, one subcommand per job."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from persist_spi.registry import discover_backends


def cmd_backends(args: argparse.Namespace) -> int:
    entries = discover_backends()
    if args.json:
        out = {}
        for name, entry in entries.items():
            factory = entry.factory
            out[name] = {
                "source": entry.source,
                "installed": entry.installed,
                "load_error": entry.load_error,
                "description": factory.description if factory else None,
                "missing_modules": factory.missing_modules() if factory else None,
                "install": factory.install_hint() if factory else None,
                "capabilities": factory.capabilities.describe() if factory else None,
            }
        print(json.dumps(out, indent=2))
        return 0
    for name, entry in entries.items():
        factory = entry.factory
        if factory is None:
            print(f"{name:<12} BROKEN      {entry.source}: {entry.load_error}")
            continue
        missing = factory.missing_modules()
        state = "installed" if not missing else "missing"
        print(f"{name:<12} {state:<11} {factory.description}")
        if missing:
            print(f"{'':<24} needs {', '.join(missing)}: {factory.install_hint()}")
        caps = factory.capabilities
        limit = "none" if caps.hard_object_size_limit is None else f"{caps.hard_object_size_limit} bytes"
        print(
            f"{'':<24} object size limit: {limit}; multi-process: {caps.multi_process}; "
            f"durable: {caps.durable}; scan: {caps.scan}"
        )
        for capability in caps.missing():
            why = caps.capability_reasons.get(capability, "no reason declared")
            print(f"{'':<24} no {capability}: {why}")
        for test, reason in sorted(caps.deviations.items()):
            print(f"{'':<24} deviation {test}: {reason}")
    return 0


def cmd_conformance(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    import pytest

    pytest_args = [
        "--pyargs",
        "conformance.all",
        "-p",
        "no:cacheprovider",
        "-q",
        "--backend",
        args.backend,
        "--provision",
        args.provision,
    ]
    if args.url:
        pytest_args += ["--backend-url", f"{args.backend}={args.url}"]
    if args.report:
        pytest_args += ["--lochkit-report", args.report]
    if args.keyword:
        pytest_args += ["-k", args.keyword]
    if args.exitfirst:
        pytest_args.append("-x")
    code = int(pytest.main([*pytest_args, *passthrough]))
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print("lochkit: no conformance test was selected; check --keyword", file=sys.stderr)
    return code


def cmd_bench(passthrough: Sequence[str]) -> int:
    from loadgen.commit_bench import main as bench_main

    return bench_main(passthrough)


def cmd_servers(args: argparse.Namespace) -> int:
    """Install or run a local server the way the conformance provisioning does."""
    import signal
    import tempfile
    import threading
    from pathlib import Path

    from conformance.provisioning import ProvisioningFailed, provisioners, redact

    known = provisioners()
    if args.action == "list":
        for name, each in sorted(known.items()):
            print(f"{name:<12} {type(each).__module__}")
        return 0
    provisioner = known.get(args.name)
    if provisioner is None:
        print(
            f"lochkit: no provisioner for '{args.name}'; known: {', '.join(sorted(known))}", file=sys.stderr
        )
        return 2
    try:
        if args.action == "install":
            print(provisioner.install(args.name))
            return 0
        workdir = Path(tempfile.mkdtemp(prefix=f"lochkit-{args.name}-"))
        provisioned = provisioner.local_process(args.name, workdir)
    except ProvisioningFailed as e:
        print(f"lochkit: {e}", file=sys.stderr)
        return 1
    print(f"{provisioned.describe()}")
    print(f"URL: {provisioned.url}" if args.show_secrets else f"URL: {redact(provisioned.url or '')}")
    print("Press Ctrl-C to stop it.", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        provisioned.stop()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lochkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    backends = sub.add_parser("backends", help="list installed backends and their capabilities")
    backends.add_argument("--json", action="store_true", help="machine-readable output")

    conf = sub.add_parser(
        "conformance",
        help="run the conformance suites against one backend",
        description="Runs every conformance suite against BACKEND, prints a per-area summary and "
        "exits non-zero on any failure. Arguments after '--' go to pytest.",
    )
    conf.add_argument("--backend", required=True, help="backend name (see `lochkit backends`)")
    conf.add_argument("--url", help="address of an already running server (otherwise provisioned)")
    conf.add_argument("--provision", default="auto", choices=["auto", "external", "testcontainers", "local"])
    conf.add_argument("--report", help="write per-area results as JSON to this file")
    conf.add_argument("-k", "--keyword", help="only tests matching this pytest -k expression")
    conf.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")

    sub.add_parser(
        "bench", help="commit-cost benchmark (arguments after 'bench' go to it; see --help)", add_help=False
    )

    servers = sub.add_parser("servers", help="install or start a local database server (no Docker needed)")
    servers.add_argument("action", choices=["list", "install", "start"])
    servers.add_argument("name", nargs="?", default="", help="backend name, e.g. postgres")
    servers.add_argument("--show-secrets", action="store_true", help="print the URL with its password")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, passthrough = argv[:at], argv[at + 1 :]
    if argv[:1] == ["bench"]:
        return cmd_bench(argv[1:] + passthrough)
    args = build_parser().parse_args(argv)
    if args.command == "backends":
        return cmd_backends(args)
    if args.command == "conformance":
        return cmd_conformance(args, passthrough)
    if args.command == "servers":
        return cmd_servers(args)
    raise AssertionError(args.command)
