"""``lochkit inventory``: Parquet tables of one repository (objects, references, commits), read
through the Persist contract, for ``lochkit report``."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from persist_spi.adapter import BackendAdapter
    from provisioning.base import Provisioned

NAME = "inventory"
HELP = "write Parquet tables of a repository's objects, references and commits"
DESCRIPTION = (
    "Scans one repository through the Persist contract and writes objects.parquet, "
    "references.parquet, commits.parquet, links.parquet and inventory.json into --out, for "
    "lochkit report. The database is opened read-only: nothing is written to it and nothing is "
    "created there; on a terminal a progress line shows the objects read. Exit codes: 0 written, "
    "1 the scan or the writing failed, 2 usage error (also: no lochkit store or no such repository "
    "at that address), 5 the database cannot be reached or opened."
)

INVENTORIES_ROOT: Final = Path(".lochkit") / "inventories"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from lochkit.usage import add_deprecated_alias

    parser.add_argument(
        "--backend", metavar="NAME", required=True, help="backend name (see: lochkit backends)"
    )
    parser.add_argument(
        "--url",
        metavar="URL",
        help="where the repository lives; rocksdb defaults to .lochkit/data/rocksdb, where the load "
        "commands keep it",
    )
    parser.add_argument(
        "--provision",
        default="external",
        choices=["auto", "external", "testcontainers", "local"],
        help="how to reach the database (default external: an inventory of a fresh server is empty)",
    )
    parser.add_argument(
        "--repository",
        metavar="ID",
        default="",
        help="repository id within the database (default: the empty id)",
    )
    add_deprecated_alias(parser, "--repository-id", "--repository", "repository")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="output directory (default: a new one under .lochkit/inventories/)",
    )


def _fail(message: str, code: int = 2) -> int:
    print(f"lochkit inventory: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from loadgen.targets.opening import DATA_ROOT, PERSISTENT_EMBEDDED
    from persist_spi.errors import BackendStoreMissing, LochkitError, Unreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from persist_spi.registry import UnknownBackend, backend_factory, url_problem
    from provisioning.base import ProvisioningFailed
    from provisioning.registry import provision

    if passthrough:
        return _fail(f"unexpected arguments after '--': {' '.join(passthrough)}")
    problem = url_problem(args.backend, args.url)
    if problem:
        return _fail(problem)
    try:
        factory = backend_factory(args.backend)
    except UnknownBackend as e:
        return _fail(str(e))
    url = args.url
    if url is None and args.backend in PERSISTENT_EMBEDDED:
        url = str(DATA_ROOT / args.backend)
    if url is None and factory.lives_in_process:
        return _fail(
            f"an {args.backend} repository lives for one command only; there is nothing to inventory"
        )
    if args.out is not None and args.out.exists() and any(args.out.iterdir()):
        return _fail(f"{args.out} exists and is not empty; give a new --out directory")
    workdir = Path(tempfile.mkdtemp(prefix=f"lochkit-inventory-{args.backend}-"))
    provisioned = None
    try:
        try:
            provisioned = provision(
                args.backend,
                factory,
                urls={args.backend: url} if url else {},
                method=args.provision,
                workdir=workdir,
            )
            adapter = factory.open_existing(provisioned.url)
        except Unreachable as e:
            return _fail(str(e), UNAVAILABLE)
        except BackendStoreMissing as e:
            return _fail(f"no repository to inventory: {e}")
        except (LochkitError, ProvisioningFailed) as e:  # bad settings
            return _fail(str(e))
        try:
            return _inventory(args, adapter, provisioned)
        finally:
            adapter.close()
    finally:
        if provisioned is not None:
            provisioned.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _inventory(args: argparse.Namespace, adapter: BackendAdapter, provisioned: Provisioned) -> int:
    from loadgen.runs.run_dir import default_run_dir
    from lochkit.read_progress import read_progress
    from persist_spi.adapter_persist import AdapterPersist
    from persist_spi.config import StoreConfig
    from persist_spi.errors import LochkitError, Unreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from persist_spi.logic.repository_logic import RepositoryLogic
    from provisioning.base import redact
    from reports.inventory import write_inventory

    persist = AdapterPersist(adapter, StoreConfig(repository_id=args.repository))
    where = redact(provisioned.url) if provisioned.url else args.backend
    try:
        if not RepositoryLogic(persist).repository_exists():
            return _fail(f"no repository '{args.repository}' at {where}; check --url and --repository")
        source = {
            "backend": args.backend,
            "url": redact(provisioned.url) if provisioned.url else None,
            "provisioning": provisioned.method,
            "server_version": provisioned.server or adapter.server_version() or "",
            "layout": adapter.layout.name,
        }
        out = args.out or default_run_dir(args.backend, INVENTORIES_ROOT)
        with read_progress(persist, "lochkit inventory:") as counted:
            summary = write_inventory(counted, out, source=source, codec=adapter.layout.codec)
    except Unreachable as e:
        return _fail(str(e), UNAVAILABLE)
    except (LochkitError, OSError) as e:
        return _fail(str(e), 1)
    print(summary.describe())
    return 0
