"""``lochkit backends``: installed backends, their drivers, capabilities and deviations."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

NAME = "backends"
HELP = "list installed backends and their capabilities"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from persist_spi.registry import discover_backends

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
            f"durable: {caps.durable}"
        )
        for capability in caps.missing():
            why = caps.capability_reasons.get(capability, "no reason declared")
            print(f"{'':<24} no {capability}: {why}")
        for test, reason in sorted(caps.deviations.items()):
            print(f"{'':<24} deviation {test}: {reason}")
    return 0
