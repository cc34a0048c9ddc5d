"""Finding backends: every adapter registers a factory under the ``lochkit.backends`` entry point.

A third-party adapter declares, in its own ``pyproject.toml``::

    [project.entry-points."lochkit.backends"]
    mydb = "mypackage.backend:MyDbBackendFactory"

and is then listed by ``lochkit backends`` and usable as ``--backend mydb``, without editing lochkit.
"""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Final, TypeVar

from persist_spi.adapter import BackendAdapter, Capabilities
from persist_spi.errors import InputError

ENTRY_POINT_GROUP: Final = "lochkit.backends"


class BackendFactory(ABC):
    """Creates adapters for one kind of database. Importing it must not need the database driver."""

    #: The name users pass to ``--backend``.
    name: str
    #: One line for ``lochkit backends``.
    description: str = ""
    #: Python modules the adapter needs; missing ones make the backend "not installed".
    required_modules: tuple[str, ...] = ()
    #: The ``pip install`` extra that brings them.
    extra: str | None = None
    #: Used when no URL is given; None when the backend needs an address.
    default_url: str | None = None
    #: The data lives in the memory of the process that opens it (``inmemory``): no other process,
    #: and no later command, can address it, so a command-line ``--url`` cannot apply.
    lives_in_process: bool = False

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities:
        """Declared without connecting, so capabilities can be listed and tests selected up front."""

    @abstractmethod
    def create(self, url: str | None = None, options: Mapping[str, Any] | None = None) -> BackendAdapter:
        """Connect (or open) and return an adapter. Raises a BackendError a user can act on."""

    def open_existing(
        self, url: str | None = None, options: Mapping[str, Any] | None = None, *, read_only: bool = True
    ) -> BackendAdapter:
        """Open a database that already holds lochkit's data, creating nothing there: no directory,
        file, table or schema (what ``lochkit check`` and ``lochkit inventory`` need). Raises
        :class:`~persist_spi.errors.BackendStoreMissing` when there is no lochkit store at ``url``.
        ``read_only`` (the default): the database refuses writes where it can be told to, and an
        embedded store another process holds open can still be read.

        This default suits backends whose :meth:`create` only connects (tables are created by
        ``setup_schema()``): it connects and verifies the schema. A backend whose ``create`` makes
        something (a directory, a file) or that can open read-only overrides it."""
        return verified(self.create(url, options))

    def store_url_in(self, directory: Path) -> str | None:
        """The URL of a store of this backend kept in ``directory`` (which exists and is empty), for
        a backend whose data lives in files: the conformance suites open such a store, close it and
        open it again, to prove that a backend declaring ``durable`` keeps its data. None (the
        default) for a backend whose data lives elsewhere (in memory, or on a server, where the
        suites open a second connection to the server under test instead)."""
        return None

    def missing_modules(self) -> list[str]:
        return [m for m in self.required_modules if not _importable(m)]

    def install_hint(self) -> str:
        return f"pip install 'lochkit[{self.extra}]'" if self.extra else "see the backend's documentation"


A = TypeVar("A", bound=BackendAdapter)


def verified(adapter: A) -> A:
    """``adapter`` once its schema is verified (:meth:`BackendAdapter.verify_schema`); closed when
    that fails, and the error raised."""
    try:
        adapter.verify_schema()
    except BaseException:
        adapter.close()
        raise
    return adapter


@dataclass(frozen=True)
class BackendEntry:
    name: str
    source: str  # "module:attr" of the entry point
    factory: BackendFactory | None
    load_error: str | None

    @property
    def installed(self) -> bool:
        return self.factory is not None and not self.factory.missing_modules()


class UnknownBackend(InputError):
    pass


def discover_backends() -> dict[str, BackendEntry]:
    """Every registered backend, loadable or not, by name."""
    found: dict[str, BackendEntry] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            loaded = ep.load()
            factory = loaded() if isinstance(loaded, type) else loaded
            if not isinstance(factory, BackendFactory):
                raise TypeError(f"{ep.value} is not a BackendFactory")
            found[ep.name] = BackendEntry(ep.name, ep.value, factory, None)
        except Exception as e:  # a broken third-party plugin must not hide the others
            found[ep.name] = BackendEntry(ep.name, ep.value, None, f"{type(e).__name__}: {e}")
    return dict(sorted(found.items()))


def backend_factory(name: str) -> BackendFactory:
    """The factory registered as ``name``, or an error naming the known backends and the fix."""
    entries = discover_backends()
    entry = entries.get(name)
    if entry is None:
        known = ", ".join(entries) or "none"
        raise UnknownBackend(
            f"No backend named '{name}' is registered (known: {known}). A backend registers under "
            f"the '{ENTRY_POINT_GROUP}' entry point group; is its package installed?"
        )
    if entry.factory is None:
        raise UnknownBackend(f"Backend '{name}' ({entry.source}) failed to load: {entry.load_error}")
    missing = entry.factory.missing_modules()
    if missing:
        raise UnknownBackend(
            f"Backend '{name}' needs the Python module(s) {', '.join(missing)}; "
            f"install them with: {entry.factory.install_hint()}"
        )
    return entry.factory


def url_problem(backend: str | None, url: str | None) -> str | None:
    """Why ``--url`` cannot apply to ``--backend backend`` (its data lives in the memory of the
    command's own process, which nothing else can address), or None."""
    if not url or not backend:
        return None
    try:
        factory = backend_factory(backend)
    except UnknownBackend:  # the command reports the unknown name itself
        return None
    if not factory.lives_in_process:
        return None
    return (
        f"--url does not apply to --backend {backend}: its data lives in this command's own memory "
        "and has no address; leave --url out"
    )


def _importable(module: str) -> bool:
    """Whether ``module`` can be found, without importing it. A dotted name whose parent package is
    missing (``google.cloud.x`` without ``google``) is not importable: ``find_spec`` raises for it
    rather than answering None."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False
