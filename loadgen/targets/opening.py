"""Choosing and opening the target of a load command: one argument group, one function.

Every load command (``generate``, ``content-generator ...``, and the scenarios that follow) adds
:func:`add_target_arguments` to its parser and calls :func:`open_target`. A target is either:

- lochkit's version store in-process over a backend (``--backend NAME [--url URL]``), with the
  database provisioned the way the conformance plugin does it (``--provision``) and stopped
  afterwards, also on Ctrl-C;
- a Nessie server: one lochkit starts (``--backend nessie``), or an existing one
  (``-u/--uri/--nessie-uri URI``, Nessie's spelling).

Embedded backends keep their data between commands: RocksDB lives in ``.lochkit/data/rocksdb``
under the working directory unless ``--url`` says otherwise. ``inmemory`` lives for one command.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Final, Literal

from loadgen.targets import Target, TargetConnection
from persist_spi.errors import LochkitError
from persist_spi.sigterm import sigterm_interrupts
from persist_spi.versionstore.sources import DEFAULT_SOURCES, StoreSources

#: Where an embedded backend keeps its data between commands, relative to the working directory.
DATA_ROOT: Final = Path(".lochkit") / "data"
PERSISTENT_EMBEDDED: Final = ("rocksdb",)
NESSIE: Final = "nessie"


class TargetError(LochkitError):
    """The target could not be opened; the message says why and what to do."""


def add_target_arguments(
    parser: argparse.ArgumentParser,
    *,
    short_options: bool = True,
    nessie: bool = True,
    writes_test_data: bool = False,
) -> None:
    """The target options. ``short_options=False`` leaves out ``-u`` and ``-o`` (locust's parser,
    where ``-u`` is the number of users, takes only the long forms). ``nessie=False`` leaves out
    the Nessie server options (``--uri``, ``-o``, ``--nessie-client``), for a command that only
    opens lochkit backends (``lochkit serve``): its help then offers only what it accepts.
    ``writes_test_data``: a load command, which refuses a database holding someone's data unless
    given ``--allow-existing-data`` (see :mod:`persist_spi.logic.ownership`)."""
    embedded = (
        "rocksdb keeps its data in .lochkit/data/rocksdb between commands; inmemory lives for one "
        "command only"
    )
    if nessie:
        group = parser.add_argument_group(
            "target",
            "Where the load goes: lochkit's version store in-process over a backend (--backend), a "
            "Nessie server lochkit starts (--backend nessie), or an existing Nessie server (--uri). "
            "Without any, Nessie's default URI is used.",
        )
        backend_help = (
            "lochkit backend (inmemory, rocksdb, postgres, ...) or 'nessie' for a real Nessie server "
            f"started by lochkit. {embedded}"
        )
    else:
        group = parser.add_argument_group(
            "backend", "lochkit's version store over a backend (--backend), in this process."
        )
        backend_help = (
            f"lochkit backend (inmemory, rocksdb, postgres, ...; see 'lochkit backends'). {embedded}"
        )
    group.add_argument("--backend", metavar="NAME", help=backend_help)
    group.add_argument("--url", metavar="URL", help="address of the backend's database (or data directory)")
    group.add_argument(
        "--repository",
        default="",
        metavar="ID",
        help="lochkit backends: the repository to work in (default: the empty id, as in Nessie)",
    )
    if writes_test_data:
        group.add_argument(
            "--allow-existing-data",
            action="store_true",
            help="lochkit backends: write into a database that holds repositories lochkit's test and "
            "load commands did not create (refused otherwise, so a load run never mixes with your "
            "data); the load still goes only into --repository",
        )
    group.add_argument(
        "--no-object-cache",
        dest="object_cache",
        action="store_false",
        help="lochkit backends: read every object from the database instead of through the "
        "process-wide object cache (which is on by default, as in Nessie's server)",
    )
    group.add_argument(
        "--provision",
        default="auto",
        choices=["auto", "external", "testcontainers", "local"],
        help="how to obtain a server when no --url is given (default: auto)",
    )
    if nessie:
        _add_nessie_arguments(group, short_options=short_options)


def _add_nessie_arguments(group: argparse._ArgumentGroup, *, short_options: bool) -> None:
    group.add_argument(
        *(("-u",) if short_options else ()),
        "--uri",
        "--nessie-uri",
        dest="nessie_uri",
        metavar="URI",
        help="an existing Nessie server's REST API v2 endpoint, e.g. http://localhost:19120/api/v2",
    )
    group.add_argument(
        *(("-o",) if short_options else ()),
        "--nessie-option",
        dest="nessie_options",
        action="append",
        default=[],
        metavar="K=V[,K=V...]",
        help="Nessie client options (nessie.authentication.type=BEARER, nessie.authentication.token=...)",
    )
    group.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="a Nessie server's bearer token, alone in FILE (or set NESSIE_AUTHENTICATION_TOKEN); "
        "never give a token on the command line, where process listings show it",
    )
    group.add_argument(
        "--nessie-store",
        type=str.upper,
        metavar="TYPE",
        help="--backend nessie: the version store of the Nessie server lochkit starts, IN_MEMORY "
        "(default) or ROCKSDB (kept in the server's working directory until it stops)",
    )
    group.add_argument(
        "--nessie-client",
        default="HTTP",
        metavar="NAME",
        help="Nessie client to use; only HTTP (REST) is available (default: HTTP)",
    )


def add_policy_argument(parser: argparse.ArgumentParser, *, over_rest: bool) -> None:
    """``--policy``: the commit policy of the target's version store (default None: the target's,
    see :func:`loadgen.targets.policy.default_policy`). ``over_rest``: the command can also target
    a Nessie server, where only some policies apply."""
    from persist_spi.versionstore.policies import POLICY_NAMES

    where = (
        "; against a Nessie server, the server's own retries, and only nessie and coordinated apply"
        if over_rest
        else ""
    )
    parser.add_argument(
        "--policy",
        choices=POLICY_NAMES,
        help=f"commit policy (default: the version store's, nessie unless its config says otherwise{where})",
    )


def names_nessie_server(args: argparse.Namespace) -> bool:
    """Whether the target options name a Nessie server rather than a lochkit backend (what
    :func:`open_target` will open), so a command can refuse what does not apply before starting it."""
    backend = getattr(args, "backend", None)
    return bool(getattr(args, "nessie_uri", None)) or backend in (None, NESSIE)


def check_target_arguments(args: argparse.Namespace) -> None:
    """:class:`~persist_spi.errors.UsageError` for target options that cannot apply together, so a
    command refuses them before it opens, starts or writes anything (:func:`open_target` checks
    again, for callers that did not)."""
    from persist_spi.errors import UsageError
    from persist_spi.registry import url_problem

    backend = getattr(args, "backend", None)
    nessie_uri = getattr(args, "nessie_uri", None)  # absent where add_target_arguments(nessie=False)
    url = getattr(args, "url", None)
    if nessie_uri and backend not in (None, NESSIE):
        raise UsageError(
            f"--uri names a Nessie server and --backend {backend} a lochkit backend: give one of them"
        )
    if url and (backend is None or nessie_uri):
        raise UsageError(
            "--url is the address of --backend NAME's database (or, with --backend nessie, of the "
            "Nessie server lochkit starts); an existing Nessie server is given with --uri"
        )
    problem = url_problem(backend, url)
    if problem:
        raise UsageError(problem)
    nessie_server = names_nessie_server(args)
    if getattr(args, "nessie_options", None) and not nessie_server:
        raise UsageError(
            "-o/--nessie-option sets Nessie client options, for a Nessie server (--uri, or --backend "
            f"nessie); --backend {backend} is a lochkit backend in this process: leave it out"
        )
    if getattr(args, "token_file", None) and not nessie_server:
        raise UsageError(
            f"--token-file is a Nessie server's token (--uri, or --backend nessie); --backend {backend} "
            "is a lochkit backend in this process: leave it out"
        )
    if getattr(args, "object_cache", True) is False and nessie_server:
        raise UsageError(
            "--no-object-cache applies to lochkit backends (--backend NAME); a Nessie server has its "
            "own cache settings"
        )
    if nessie_server and str(getattr(args, "repository", "") or ""):
        raise UsageError(
            "--repository names a repository of a lochkit backend (--backend NAME); a Nessie server "
            "serves one repository of its own"
        )
    if nessie_server and getattr(args, "allow_existing_data", False):
        raise UsageError(
            "--allow-existing-data applies to lochkit backends (--backend NAME); against a Nessie "
            "server the load adds branches and commits to what it serves"
        )
    client = getattr(args, "nessie_client", "HTTP")
    if client.upper() not in ("HTTP", "REST"):
        raise UsageError(f"--nessie-client {client}: only the HTTP (REST) client is available")
    _check_nessie_store(getattr(args, "nessie_store", None), backend)
    _options(getattr(args, "nessie_options", []))


def _options(raw: list[str]) -> dict[str, str]:
    from persist_spi.errors import UsageError

    options: dict[str, str] = {}
    for chunk in raw:
        for item in chunk.split(","):
            if not item:
                continue
            name, sep, value = item.partition("=")
            if not sep:
                raise UsageError(f"Nessie option '{item}' is not of the form key=value")
            options[name.strip()] = value
    return options


#: Why a command opens a target, which decides what it may do to the repository:
#: ``load`` writes test data (guarded, see :mod:`persist_spi.logic.ownership`, and a repository it creates
#: is marked as a load repository); ``serve`` creates the repository when missing (the user's data);
#: ``existing`` reads or maintains a repository that must already exist (in a store the command
#: made itself, such as ``inmemory``, it starts empty, as on a fresh Nessie server).
Purpose = Literal["load", "serve", "existing"]


@contextlib.contextmanager
def open_target(
    args: argparse.Namespace, *, purpose: Purpose, sources: StoreSources = DEFAULT_SOURCES
) -> Iterator[Target]:
    """Open the target the arguments name; everything started for it is stopped on exit, also on
    Ctrl-C or SIGTERM. Raises :class:`TargetError` (or a LochkitError) with a user-facing message."""
    check_target_arguments(args)
    with sigterm_interrupts():  # so that the finally block below stops our servers
        target = _open(args, sources, purpose)
        try:
            yield target
        finally:
            target.close()


def _open(args: argparse.Namespace, sources: StoreSources, purpose: Purpose) -> Target:
    from loadgen.targets.nessie_rest import nessie_target

    options = _options(getattr(args, "nessie_options", []))
    if getattr(args, "token_file", None):
        from nessie_client.credentials import token_options

        options.update(token_options(args.token_file))
    backend = getattr(args, "backend", None)
    nessie_uri = getattr(args, "nessie_uri", None)  # absent where add_target_arguments(nessie=False)
    if nessie_uri or backend is None:
        from nessie_client import DEFAULT_URI

        uri = nessie_uri or DEFAULT_URI
        target = nessie_target(uri, provisioning="external", options=options)
        target.connection = TargetConnection(NESSIE, NESSIE, uri, options)
        return target
    if backend == NESSIE:
        return _provisioned_nessie(args, options)
    return _in_process(args, backend, sources, purpose)


def _check_nessie_store(store: str | None, backend: str | None) -> None:
    if store is None:
        return
    from persist_spi.errors import UsageError

    if backend != NESSIE:
        raise UsageError(
            "--nessie-store chooses the store of a Nessie server lochkit starts: give it with "
            "--backend nessie, or leave it out"
        )
    from provisioning.servers.nessie import STORE_TYPES

    if store not in STORE_TYPES:
        raise UsageError(f"--nessie-store {store}: use one of {', '.join(STORE_TYPES)}")


def _provisioned_nessie(args: argparse.Namespace, options: dict[str, str]) -> Target:
    from loadgen.targets.nessie_rest import nessie_target
    from provisioning.registry import provision
    from provisioning.workdir import make_workdir, remove_workdir

    workdir = make_workdir("nessie")
    urls = {NESSIE: args.url} if args.url else {}
    with _nessie_store(getattr(args, "nessie_store", None)):
        provisioned = provision(NESSIE, None, urls=urls, method=args.provision, workdir=workdir)
    try:
        target = nessie_target(
            provisioned.url or "",
            provisioning=provisioned.method,
            options=options,
            server_version=provisioned.server,
        )
    except BaseException:
        provisioned.stop()
        remove_workdir(workdir)
        raise
    target.connection = TargetConnection(NESSIE, NESSIE, provisioned.url, options)
    target.on_close(provisioned.stop)
    target.on_close(lambda: remove_workdir(workdir))
    return target


@contextlib.contextmanager
def _nessie_store(store: str | None) -> Iterator[None]:
    """The Nessie launcher takes its store type from LOCHKIT_NESSIE_STORE (so that every way of
    starting it, ``lochkit servers start`` included, has one switch); ``--nessie-store`` sets it
    for this one start and then puts the previous value back."""
    if store is None:
        yield
        return
    import os

    from provisioning.servers.nessie import STORE_ENV

    previous = os.environ.get(STORE_ENV)
    os.environ[STORE_ENV] = store
    try:
        yield
    finally:
        if previous is None:
            del os.environ[STORE_ENV]
        else:
            os.environ[STORE_ENV] = previous


def _in_process(args: argparse.Namespace, backend: str, sources: StoreSources, purpose: Purpose) -> Target:
    from loadgen.targets.in_process import in_process_target
    from persist_spi.config import StoreConfig
    from persist_spi.logic.ownership import guard_database, load_properties
    from persist_spi.registry import backend_factory
    from provisioning.base import redact
    from provisioning.registry import provision
    from provisioning.workdir import make_workdir, remove_workdir

    factory = backend_factory(backend)
    url = args.url
    how = None
    if url is None and backend in PERSISTENT_EMBEDDED:
        data = DATA_ROOT / backend
        data.mkdir(parents=True, exist_ok=True)
        url, how = str(data), "persistent-directory"
    workdir = make_workdir(backend)
    provisioned = provision(
        backend, factory, urls={backend: url} if url else {}, method=args.provision, workdir=workdir
    )
    repository = getattr(args, "repository", "") or ""
    try:
        adapter = factory.create(provisioned.url, provisioned.options)
        made_here = how is None and provisioned.started_here
        if purpose == "load" and not made_here:
            # A database that outlives the command may hold someone's data: look before writing.
            try:
                adapter.setup_schema()
                guard_database(
                    adapter,
                    allow_existing=bool(getattr(args, "allow_existing_data", False)),
                    writes_into=f"only into repository '{repository}'",
                )
            except BaseException:
                adapter.close()
                raise
        target = in_process_target(
            adapter,
            backend=backend,
            provisioning=how or provisioned.method,
            url=redact(provisioned.url) if provisioned.url else None,
            server_version=provisioned.server,
            sources=sources,
            config=StoreConfig(repository_id=repository),
            object_cache=getattr(args, "object_cache", True),
            # A store this command made itself holds nobody's data: like a fresh Nessie server, it
            # starts with an empty default branch even for commands that only read.
            repository_must_exist=purpose == "existing" and not made_here,
            new_repository_properties=load_properties() if purpose == "load" else None,
        )
    except BaseException:
        provisioned.stop()
        remove_workdir(workdir)
        raise
    if adapter.capabilities.multi_process:
        target.connection = TargetConnection(
            "lochkit", backend, provisioned.url, dict(provisioned.options), repository=repository
        )
    if how == "persistent-directory":
        target.notes.append(f"data kept in {url} between commands")
    elif backend == "inmemory":
        target.notes.append("inmemory: the data lives for this command only")
    target.on_close(provisioned.stop)
    target.on_close(lambda: remove_workdir(workdir))
    return target
