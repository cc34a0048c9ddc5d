"""What every broken adapter of the catalogue shares: its name, the guarantee it breaks, and how the
self-check opens one."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import ClassVar

from backends.inmemory import adapter as inmemory
from backends.inmemory.capabilities import CAPABILITIES as INMEMORY_CAPABILITIES
from conformance.examples import toy_sqlite
from persist_spi.adapter import BackendAdapter, Capabilities


class Broken(BackendAdapter):
    """A correct adapter with exactly one bug an adapter author could make. The class docstring
    says what the bug is; the conformance suite must fail on it."""

    #: Kebab-case name, shown in the kill table and accepted by ``--self-check --mutant``.
    mutant: ClassVar[str]
    #: The guarantee it breaks, as the documentation names it (insert-if-absent, compare-and-swap, ...).
    guarantee: ClassVar[str]
    #: The contract method the bug lives in.
    method: ClassVar[str]
    #: True when the bug shows only under concurrency; the self-check repeats those.
    racy: ClassVar[bool] = False
    #: What the broken adapter declares (the size-limit bugs declare a limit the database breaks).
    CAPABILITIES: ClassVar[Capabilities]

    @property
    def capabilities(self) -> Capabilities:
        return type(self).CAPABILITIES

    @classmethod
    def open(cls, url: str | None = None) -> BackendAdapter:
        """The store at ``url`` (see :meth:`store_url_in`), or a fresh, empty one."""
        raise NotImplementedError(f"{cls.__name__} must say how it is opened")

    @classmethod
    def store_url_in(cls, directory: Path) -> str | None:
        """As its base's factory says (:meth:`~persist_spi.registry.BackendFactory.store_url_in`)."""
        return None

    @classmethod
    def base_name(cls) -> str:
        return next(
            c.name for c in cls.__mro__ if c.__module__ in _BASE_MODULES and issubclass(c, BackendAdapter)
        )


_BASE_MODULES = (inmemory.__name__, toy_sqlite.__name__)


class BrokenInMemory(Broken, inmemory.InMemoryAdapter):
    """Derived from the in-memory adapter: dicts behind one lock."""

    CAPABILITIES = INMEMORY_CAPABILITIES

    @classmethod
    def open(cls, url: str | None = None) -> BackendAdapter:
        return cls(f"mutant-{cls.mutant}")  # in memory: there is nothing a URL could name


class BrokenToySqlite(Broken, toy_sqlite.ToySqliteAdapter):
    """Derived from the toy SQLite adapter: one connection, SQL statements per call."""

    CAPABILITIES = toy_sqlite.CAPABILITIES

    @classmethod
    def open(cls, url: str | None = None) -> BackendAdapter:
        if url:
            return cls(Path(url))
        # A scratch directory of its own, removed on close: run outside the self-check (which
        # gives every run a temporary directory of its own), it would otherwise stay behind.
        scratch = Path(tempfile.mkdtemp(prefix=f"lochkit-mutant-{cls.mutant}-"))
        return cls(scratch / "db.sqlite", scratch)

    @classmethod
    def store_url_in(cls, directory: Path) -> str | None:
        return toy_sqlite.ToySqliteFactory().store_url_in(directory)
