"""``lochkit servers``: install or run a local database server the way the suites provision it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

NAME = "servers"
HELP = "install or start a local database server (no Docker needed)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "install", "start"])
    parser.add_argument("name", nargs="?", default="", help="backend name, e.g. postgres")
    parser.add_argument("--show-secrets", action="store_true", help="print the URL with its password")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
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
