"""``lochkit servers``: list, install or run a local database server the way the suites provision it."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from provisioning.base import LocalServerStatus, Provisioned, ServerProvisioner

NAME = "servers"
HELP = "list, install or start a local database server (no Docker needed)"
DESCRIPTION = (
    "list: every server lochkit can run locally, whether it is installed, its version and what it "
    "needs. install NAME: download or build it into the cache (~/.cache/lochkit, or $LOCHKIT_CACHE). "
    "start NAME: run it until Ctrl-C, and print its URL and an environment file that points "
    "lochkit conformance and pytest at it."
)
ENV_FILE = "lochkit.env"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list", "install", "start"], help="what to do")
    parser.add_argument(
        "name", nargs="?", help="server, by backend name (e.g. postgres); see: lochkit servers list"
    )
    parser.add_argument(
        "--show-secrets",
        action="store_true",
        help="start: print URLs with their passwords (by default a URL with a password is shown "
        "masked, and the environment file holds the real one)",
    )
    parser.set_defaults(_usage_error=parser.error)


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from provisioning.base import ProvisioningFailed
    from provisioning.registry import provisioners

    known = provisioners()
    if args.action != "list" and not args.name:
        args._usage_error(f"'{args.action}' needs a server name: one of {', '.join(sorted(known))}")
    if args.action != "list" and args.name not in known:
        args._usage_error(f"no local server for '{args.name}'; known: {', '.join(sorted(known))}")
    try:
        if args.action == "list":
            return _list(known)
        if args.action == "install":
            return _install(args.name)
        return _start(args.name, args.show_secrets)
    except ProvisioningFailed as e:
        print(f"lochkit servers: {e}", file=sys.stderr)
        return 1


def _list(known: Mapping[str, ServerProvisioner]) -> int:
    for name in sorted(known):
        for line in _status_lines(known[name].local_status(name)):
            print(line)
    return 0


def _status_lines(status: LocalServerStatus) -> list[str]:
    pad = " " * 13
    if status.impossible:
        return [f"{status.backend:<12} cannot run locally: {status.impossible}"]
    lines = [
        f"{status.backend:<12} {'installed: ' + status.installed if status.installed else 'not installed'}"
    ]
    for need in status.needs:
        state = f"found: {need.found}" if need.found else f"MISSING: {need.how}"
        lines.append(f"{pad}needs {need.what} ({state})")
    return lines


def _install(name: str) -> int:
    from provisioning.base import ProvisioningFailed
    from provisioning.registry import install_local, provisioners

    status = provisioners()[name].local_status(name)
    if status.impossible:
        raise ProvisioningFailed(f"{name}: {status.impossible}")
    print(install_local(name))
    return 0


def _start(name: str, show_secrets: bool) -> int:
    import signal
    import threading

    from provisioning.registry import start_local
    from provisioning.workdir import workdir

    with workdir(name) as where:
        provisioned = start_local(name, where)
        try:
            for line in _started_lines(provisioned, where, show_secrets):
                print(line)
            print("Press Ctrl-C to stop it.", flush=True)
            stop = threading.Event()
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            with contextlib.suppress(KeyboardInterrupt):
                stop.wait()
        finally:
            provisioned.stop()
    kept = f"kept {where}" if where.exists() else f"removed {where}"
    print(f"{name}: stopped; {kept}", flush=True)
    return 0


def _started_lines(provisioned: Provisioned, where: Path, show_secrets: bool) -> list[str]:
    from persist_spi.hints import url_env_var
    from provisioning.base import redact

    url = provisioned.url or ""
    variable = url_env_var(provisioned.backend)
    env_file = where / ENV_FILE
    env_file.touch(mode=0o600)
    env_file.write_text(f"export {variable}={shlex.quote(url)}\n")
    shown = url if show_secrets else (provisioned.printable_url or redact(url))
    lines = [provisioned.describe(), f"URL: {shown}"]
    if shown == url or shown == provisioned.printable_url:  # nothing masked: it works as printed
        lines.append(f"  lochkit conformance --backend {provisioned.backend} --url {shlex.quote(shown)}")
    lines.append(
        f"  or: . {shlex.quote(str(env_file))}   (sets {variable}, which lochkit conformance, "
        "lochkit bench and pytest use)"
    )
    return lines
