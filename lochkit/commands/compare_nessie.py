"""``lochkit compare-nessie``: the differential state machine, lochkit against a real Nessie server."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from lochkit.usage import positive_int

NAME = "compare-nessie"
HELP = "run random operations on lochkit and a real Nessie server, compared after every step"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "The differential state machine: the same random operations (commits, merges, transplants, "
        "reference changes, reads) on lochkit's version store in-process and on a Nessie server, "
        "compared after every step. Disagreements that a registered difference explains "
        "(docs/nessie-differences.md) are counted; any other fails the run with the shortest sequence "
        "of steps that shows it. Without --uri, lochkit starts Nessie itself (Java 21+ needed)."
    )
    parser.add_argument("-u", "--uri", help="a running Nessie server's REST API v2 URI (…/api/v2)")
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="--uri's bearer token, alone in FILE (or set NESSIE_AUTHENTICATION_TOKEN)",
    )
    parser.add_argument("--seed", type=int, default=13, help="Hypothesis seed (default 13)")
    parser.add_argument(
        "--examples", type=positive_int, default=200, help="fresh pairs of stores (default 200)"
    )
    parser.add_argument("--steps", type=positive_int, default=50, help="operations per example (default 50)")
    parser.add_argument("--no-shrink", action="store_true", help="report a disagreement as found, unshrunk")
    parser.add_argument("--json", metavar="FILE", help="also write the report as JSON")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from conformance.differential.machine import Report
    from conformance.differential.observe import Divergence
    from conformance.differential.runner import format_report, run_differential
    from conformance.differential.sides import lochkit_side, nessie_side
    from nessie_client import NessieRestClient, NessieUnreachable
    from nessie_client.credentials import token_options
    from persist_spi.errors import BackendAuthenticationFailed, InputError
    from persist_spi.exit_codes import UNAVAILABLE
    from provisioning.base import ProvisioningFailed

    stop = None
    uri = args.uri
    try:
        if uri is None:
            from provisioning.servers.nessie import PROVISIONER

            print("starting a Nessie server (first use downloads the 245 MB runner jar)...", flush=True)
            provisioned = PROVISIONER.local_process(
                "nessie", Path(tempfile.mkdtemp(prefix="lochkit-nessie-"))
            )
            stop, uri = provisioned.stop, provisioned.url or ""
            print(provisioned.describe(), flush=True)
        client = NessieRestClient(uri, options=token_options(args.token_file) if args.token_file else None)
        print(f"comparing with {client.server_version()} at {uri}", flush=True)
    except (ProvisioningFailed, NessieUnreachable, BackendAuthenticationFailed, InputError) as e:
        print(f"lochkit compare-nessie: {e}", file=sys.stderr)
        if args.uri is not None and isinstance(e, NessieUnreachable):
            print(
                "(leave out --uri and lochkit compare-nessie starts a Nessie server itself)", file=sys.stderr
            )
        if stop is not None:
            stop()
        return UNAVAILABLE if isinstance(e, NessieUnreachable) else 1
    report = Report()
    started = time.monotonic()
    status = 0
    try:
        run_differential(
            lochkit_side,
            lambda: nessie_side(client, uri),
            examples=args.examples,
            steps=args.steps,
            seed_value=args.seed,
            shrink=not args.no_shrink,
            report=report,
        )
    except Divergence as e:
        print(f"\nDISAGREEMENT no registered difference explains:\n{e}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        status = 130
    finally:
        client.close()
        if stop is not None:
            stop()
    elapsed = time.monotonic() - started
    print(format_report(report))
    print(f"{elapsed:.0f} s, {report.steps / elapsed if elapsed else 0:.1f} steps/s (seed {args.seed})")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "seed": args.seed,
                    "examples": report.examples,
                    "steps": report.steps,
                    "seconds": round(elapsed, 1),
                    "outcomes": {f"{k} {o}": n for (k, o), n in sorted(report.outcomes.items())},
                    "explained": dict(report.explained),
                    "agreed": status == 0,
                },
                indent=2,
            )
        )
    return status
