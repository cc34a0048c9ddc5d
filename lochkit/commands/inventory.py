"""``lochkit inventory``: Parquet tables of one repository (objects, references, commits), read
through the Persist contract, for ``lochkit report``."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

NAME = "inventory"
HELP = "write Parquet tables of a repository's objects, references and commits"
DESCRIPTION = (
    "Scans one repository through the Persist contract and writes objects.parquet, "
    "references.parquet, commits.parquet, links.parquet and inventory.json into --out, for "
    "`lochkit report`. Nothing is written to the repository."
)

INVENTORIES_ROOT: Final = Path(".lochkit") / "inventories"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", required=True, help="backend name (see `lochkit backends`)")
    parser.add_argument(
        "--url",
        help="where the repository lives; rocksdb defaults to .lochkit/data/rocksdb, where the load "
        "commands keep it",
    )
    parser.add_argument(
        "--provision",
        default="external",
        choices=["auto", "external", "testcontainers", "local"],
        help="how to reach the database (default external: an inventory of a fresh server is empty)",
    )
    parser.add_argument("--repository-id", default="", help="repository id within the database")
    parser.add_argument(
        "--out", type=Path, help="output directory (default: a new one under .lochkit/inventories/)"
    )


def _fail(message: str) -> int:
    print(f"lochkit inventory: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace, passthrough: Sequence[str]) -> int:
    from conformance.provisioning import ProvisioningFailed, provision, redact
    from loadgen.runs.run_dir import default_run_dir
    from lochkit.targets import DATA_ROOT, PERSISTENT_EMBEDDED
    from persist_spi.adapter_persist import AdapterPersist
    from persist_spi.config import StoreConfig
    from persist_spi.errors import LochkitError
    from persist_spi.logic.repository_logic import RepositoryLogic
    from persist_spi.registry import UnknownBackend, backend_factory
    from reports.inventory import write_inventory

    if passthrough:
        return _fail(f"unexpected arguments after '--': {' '.join(passthrough)}")
    try:
        factory = backend_factory(args.backend)
    except UnknownBackend as e:
        return _fail(str(e))
    url = args.url
    if url is None and args.backend in PERSISTENT_EMBEDDED:
        data = DATA_ROOT / args.backend
        if not data.is_dir():
            return _fail(f"no {args.backend} repository at {data}; run a load command first or pass --url")
        url = str(data)
    if url is None and args.backend == "inmemory":
        return _fail("an inmemory repository lives for one command only; there is nothing to inventory")
    out = args.out or default_run_dir(args.backend, INVENTORIES_ROOT)
    if out.exists() and any(out.iterdir()):
        return _fail(f"{out} exists and is not empty; give a new --out directory")
    workdir = Path(tempfile.mkdtemp(prefix=f"lochkit-inventory-{args.backend}-"))
    provisioned = None
    try:
        provisioned = provision(
            args.backend,
            factory,
            urls={args.backend: url} if url else {},
            method=args.provision,
            workdir=workdir,
        )
        adapter = factory.create(provisioned.url)
        try:
            persist = AdapterPersist(adapter, StoreConfig(repository_id=args.repository_id))
            if not RepositoryLogic(persist).repository_exists():
                where = redact(provisioned.url) if provisioned.url else args.backend
                return _fail(
                    f"no repository '{args.repository_id}' at {where}; check --url and --repository-id"
                )
            source = {
                "backend": args.backend,
                "url": redact(provisioned.url) if provisioned.url else None,
                "provisioning": provisioned.method,
                "server_version": provisioned.server or adapter.server_version() or "",
            }
            summary = write_inventory(persist, out, source=source)
        finally:
            adapter.close()
    except (LochkitError, ProvisioningFailed, FileExistsError, OSError) as e:
        return _fail(str(e))
    finally:
        if provisioned is not None:
            provisioned.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(summary.describe())
    return 0
