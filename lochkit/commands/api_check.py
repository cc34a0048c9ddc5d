"""``lochkit api-check``: a Nessie REST API v2 server checked with schemathesis against Nessie's own
OpenAPI document (``conformance/api_check``), with figures of what was reached."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from lochkit.usage import positive_int

NAME = "api-check"
HELP = "check a Nessie REST API v2 server against Nessie's OpenAPI document (schemathesis)"
DESCRIPTION = (
    "Sends requests generated from Nessie's own OpenAPI document (fetched from Maven Central on "
    "first use) to a server and checks every answer: no 5xx, a status code, content type and body "
    "the document declares. Only the document's REST API v2 paths are used. The run first creates a "
    "small repository (branches, a tag, commits, tables) and generated requests mostly borrow its "
    "references, hashes and keys. Without --uri it checks lochkit serve over a fresh temporary "
    "repository (--backend rocksdb or inmemory); --backend nessie starts Nessie's own server (Java "
    "21+). A server given by --uri must hold nothing but its default branch. Exit codes: 0 no "
    "failures, 1 failures, 2 usage error, 5 server unreachable."
)
DEFAULT_SEED = 1
DEFAULT_EXAMPLES = 100


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    target = parser.add_mutually_exclusive_group()
    target.add_argument("-u", "--uri", help="a running server's REST API v2 URI (http://HOST:PORT/api/v2)")
    target.add_argument(
        "--backend",
        default="rocksdb",
        metavar="NAME",
        help="lochkit serve over a fresh repository on rocksdb (default) or inmemory; or 'nessie' "
        "for Nessie's own server, started by lochkit",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"Hypothesis seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--examples",
        type=positive_int,
        default=DEFAULT_EXAMPLES,
        help=f"generated requests per operation (default {DEFAULT_EXAMPLES})",
    )
    parser.add_argument("--markdown-out", metavar="FILE", help="also write the figures as a markdown page")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    try:
        from conformance.api_check.figures import format_markdown, format_text
        from conformance.api_check.runner import ApiCheck
    except ImportError as e:
        print(
            f"lochkit api-check: needs schemathesis ({e}); install the api-check extra: "
            "pip install 'lochkit[api-check]'",
            file=sys.stderr,
        )
        return 2
    from nessie_client import NessieUnreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from provisioning.base import ProvisioningFailed
    from provisioning.servers.nessie_openapi import nessie_openapi_document

    if args.uri is None and args.backend not in ("rocksdb", "inmemory", "nessie"):
        print(
            f"lochkit api-check: --backend {args.backend}: the check makes a fresh repository on "
            "rocksdb or inmemory, or starts Nessie (nessie); for another server give --uri",
            file=sys.stderr,
        )
        return 2
    try:
        document = nessie_openapi_document()
        with _target(args) as (uri, target):
            print(f"checking {target} at {uri} against Nessie's OpenAPI document", flush=True)
            check = ApiCheck(
                uri,
                document,
                seed=args.seed,
                examples=args.examples,
                target=target,
                progress=lambda label: print(f"  {label}", flush=True),
            )
            figures = check.run()
    except (NessieUnreachable, OSError) as e:
        print(f"lochkit api-check: {e}", file=sys.stderr)
        return UNAVAILABLE
    except (ProvisioningFailed, _HoldsData, ValueError) as e:
        print(f"lochkit api-check: {e}", file=sys.stderr)
        return 2 if isinstance(e, _HoldsData | ValueError) else 1
    except KeyboardInterrupt:  # a server started here was stopped on the way out
        print("lochkit api-check: interrupted", file=sys.stderr)
        return 130
    print(format_text(figures))
    if args.markdown_out:
        from conformance.snippets import invocation, portable_command, render

        source = f"seed {figures.seed}, {figures.requests} requests in {figures.seconds:.0f} s"
        command = portable_command(_without_json(invocation(["lochkit"])))
        Path(args.markdown_out).write_text(render(format_markdown(figures), command, source=source))
    if args.json:
        Path(args.json).write_text(json.dumps(_as_json(figures), indent=2) + "\n")
    return 0 if figures.ok() else 1


def _without_json(argv: list[str]) -> list[str]:
    """The command line less ``--json FILE``, which does not change the page (and names a file of
    one machine)."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word == "--json":
            skip = True
        elif not word.startswith("--json="):
            kept.append(word)
    return kept


class _HoldsData(Exception):
    pass


@contextlib.contextmanager
def _target(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    """(REST API v2 URI, what it is) of the server to check, started here when not given."""
    if args.uri:
        _refuse_data(args.uri)
        yield args.uri, "the server"
    elif args.backend == "nessie":
        from provisioning.servers.nessie import PROVISIONER
        from provisioning.workdir import make_workdir, remove_workdir

        where = make_workdir("api-check-nessie")
        provisioned = PROVISIONER.local_process("nessie", where)
        try:
            yield provisioned.url or "", provisioned.server or "Nessie"
        finally:
            provisioned.stop()
            remove_workdir(where)
    else:
        with served_fresh(args.backend) as uri:
            yield uri, f"lochkit serve on {args.backend} (a fresh repository)"


def _refuse_data(uri: str) -> None:
    from conformance.rest_harness import holds_data
    from nessie_client import NessieRestClient

    with NessieRestClient(uri) as client:
        held = holds_data(client)
    if held:
        raise _HoldsData(
            f"refusing to check {uri}: it holds {held}, and the check creates, changes and deletes "
            "references there. Give a server with an empty repository (only its default branch)."
        )


@contextlib.contextmanager
def served_fresh(backend: str) -> Iterator[str]:
    """The REST API v2 URI of lochkit serve on a background thread, over a new repository on
    ``backend`` (rocksdb: a temporary directory, removed afterwards)."""
    from loadgen.targets.in_process import in_process_target
    from persist_spi.registry import backend_factory
    from rest_server import BackgroundServer, create_app

    adapter = backend_factory(backend).create()
    with in_process_target(adapter, backend=backend, provisioning="embedded", url=None) as target:
        api = target.api
        with BackgroundServer(create_app(lambda: api)) as server:
            yield server.uri


def _as_json(figures: object) -> dict[str, object]:
    from conformance.api_check.figures import RunFigures

    assert isinstance(figures, RunFigures)
    reached, documented = figures.documented_codes()
    return {
        "target": figures.target,
        "seed": figures.seed,
        "examples": figures.examples,
        "seconds": round(figures.seconds, 1),
        "requests": figures.requests,
        "failures": dict(figures.failures()),
        "explained": dict(figures.explained()),
        "status_codes_reached": reached,
        "status_codes_documented": documented,
        "operations": {
            op.label: {
                "requests": op.requests,
                "statuses": {str(s): n for s, n in sorted(op.statuses.items())},
                "documented": list(op.documented),
                "not_reached": op.unreached(),
                "failures": dict(op.failures),
                "kinds": {f"{check}: {kind}": n for (check, kind), n in sorted(op.kinds.items())},
            }
            for op in figures.operations.values()
        },
    }
