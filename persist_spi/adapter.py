"""The backend adapter contract: what one database must do, and nothing more.

An adapter moves bytes and performs compare-and-swap. It never serialises objects, derives ids,
checks sizes or interprets reference semantics; :class:`~persist_spi.persist.AdapterPersist` does
that once for every backend. Every method takes the repository id first: rows of different
repositories live side by side in the same tables and must never mix.

Inputs are already cleaned by the core: id and name lists contain no ``None`` and no duplicates,
and the "empty" id is never asked for. Results are positional (same length and order as the input).
An adapter raises :class:`~persist_spi.errors.UnknownOperationResult` when the database cannot say
whether a write happened, and a :class:`~persist_spi.errors.BackendError` subclass for the errors a
user must fix (server down, bad credentials, missing permissions, schema of another version).
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, fields
from typing import Final, NamedTuple, Protocol

from persist_spi.errors import InputError
from persist_spi.layouts import LOCHKIT_LAYOUT, StorageLayout


class RefRow(NamedTuple):
    """A stored reference. ``previous_pointers`` is an opaque blob the core encodes."""

    name: str
    pointer: bytes
    deleted: bool
    created_at_micros: int
    extended_info: bytes | None
    previous_pointers: bytes

    def same_condition(self, other: RefRow) -> bool:
        """The compare-and-swap identity: everything but the name (already matched) and history."""
        return (
            self.pointer == other.pointer
            and self.deleted == other.deleted
            and self.created_at_micros == other.created_at_micros
            and self.extended_info == other.extended_info
        )


class InsertAndSwap(NamedTuple):
    """What :meth:`BackendAdapter.insert_objs_and_update_ref` did."""

    #: Per row, as :meth:`BackendAdapter.insert_objs` answers: True = inserted by this call.
    inserted: list[bool]
    #: True: the reference was swapped. False: it was not in the expected state (or did not
    #: exist), exactly when :meth:`BackendAdapter.update_ref` answers False. None: no swap was
    #: attempted, because the row the new pointer names existed already.
    swapped: bool | None


class ObjRow(NamedTuple):
    """A stored object. ``data`` is opaque; ``obj_type`` and ``version_token`` are kept in their own
    columns so that scans by type and conditional updates can be evaluated by the database."""

    obj_id: bytes
    obj_type: str
    version_token: str | None
    data: bytes
    #: µs timestamp of the last write.
    referenced: int


#: Fields of :class:`Capabilities` that say more about the capabilities and are none themselves.
_ABOUT_CAPABILITIES: Final = ("deviations", "capability_reasons")


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do, declared once, separate from the tests that depend on it. Every
    field but the last two is a capability a suite test may require (``lochkit_requires``)."""

    #: Largest object the database accepts, in serialised bytes; None means no practical limit.
    #: The core checks it before writing and halves it for the index size limits (DynamoDB: 400 KiB).
    hard_object_size_limit: int | None = None
    #: Several processes may open the same database at once (a server, not an embedded library).
    multi_process: bool = False
    #: Data survives closing and re-opening the backend (a conformance test closes and reopens it).
    durable: bool = True
    #: No longer a capability: ``scan_objs`` is part of the contract every adapter implements, and
    #: nothing consulted the flag. Still accepted, with a DeprecationWarning, from adapters written
    #: for earlier versions; it will be refused in a later one.
    scan: InitVar[bool | None] = None
    #: ``list_repositories`` is implemented: lochkit's test and load commands use it to tell whether
    #: a database holds data they did not write (without it, they refuse a database they did not
    #: start unless the user opts in).
    lists_repositories: bool = False
    #: Behaviours this backend knowingly does not meet: conformance test name -> reason. The
    #: conformance plugin turns each into a strict expected failure, so the deviation is visible in
    #: every report and a fixed deviation fails loudly until it is removed from this list.
    deviations: Mapping[str, str] = field(default_factory=dict)
    #: Why a capability is missing (capability name -> reason), shown in place of a generic
    #: "does not declare" when the tests that need it are skipped.
    capability_reasons: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self, scan: bool | None) -> None:
        if scan is not None:
            warnings.warn(
                "Capabilities: 'scan' is no longer a capability (every adapter implements scan_objs, "
                "and nothing consulted the flag); leave it out of the declaration",
                DeprecationWarning,
                stacklevel=3,  # the declaration, past the generated __init__
            )

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The capabilities, in declaration order."""
        return tuple(f.name for f in fields(cls) if f.name not in _ABOUT_CAPABILITIES)

    def declares(self, name: str) -> bool:
        """Whether this backend has capability ``name`` (a size limit counts when there is one)."""
        if name not in self.names():
            raise InputError(f"unknown capability '{name}'; the capabilities are {', '.join(self.names())}")
        value = getattr(self, name)
        return value is not None and value is not False

    def missing(self) -> list[str]:
        """The capabilities this backend does not declare, which a suite may require."""
        return [name for name in self.names() if not self.declares(name)]

    def describe(self) -> dict[str, object]:
        described: dict[str, object] = {name: getattr(self, name) for name in self.names()}
        return described | {
            "deviations": dict(self.deviations),
            "capability_reasons": dict(self.capability_reasons),
        }


class BackendAdapter(ABC):
    """One physical database, shared by any number of repositories and Persist instances."""

    #: Short name, e.g. ``rocksdb``.
    name: str = "unnamed"

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    @property
    def layout(self) -> StorageLayout:
        """How the core fills this adapter's rows (object codec, history encoding). Adapters that
        offer Nessie's layout (``layout=nessie`` in their URL) answer
        :data:`~persist_spi.layouts.NESSIE_LAYOUT` and switch their own tables and keys with it."""
        return LOCHKIT_LAYOUT

    def repository_id_problem(self, repo: str) -> str | None:
        """Why this adapter cannot keep repository ``repo`` apart from every other one, or None
        when it can (the default). Nessie's layouts for RocksDB and DynamoDB prefix every key
        with ``repo + ":"`` unescaped, so there ``a`` and ``a:b`` would share rows; those adapters
        refuse ids containing ``:``. :class:`~persist_spi.adapter_persist.AdapterPersist` asks
        before it binds a repository."""
        return None

    @property
    def address(self) -> str:
        """Where the data lives, for messages and reports; must never contain secrets."""
        return self.name

    def setup_schema(self) -> str:
        """Create tables if missing (idempotent) and check existing ones; returns a description."""
        return f"{self.name}: nothing to set up"

    def verify_schema(self) -> str:
        """Check, creating nothing, that lochkit's tables (or schema) exist here and are of this
        version; returns a description. Raises :class:`~persist_spi.errors.BackendStoreMissing` when
        they are missing and :class:`~persist_spi.errors.BackendSchemaMismatch` when they are of
        another version. Backends without a schema of their own have nothing to check."""
        return f"{self.name}: no schema to verify"

    def server_version(self) -> str | None:
        """The server's version, for reports; None for embedded backends without one."""
        return None

    def close(self) -> None:  # noqa: B027 (optional hook: embedded adapters may hold nothing)
        """Release connections, handles and locks. The adapter must not be used afterwards."""

    # --- references ------------------------------------------------------------------------------

    @abstractmethod
    def fetch_refs(self, repo: str, names: Sequence[str]) -> list[RefRow | None]:
        """Rows for the names, positionally; None where no row exists."""

    @abstractmethod
    def insert_ref(self, repo: str, row: RefRow) -> bool:
        """Insert if no row with that name exists; False (and no change) otherwise."""

    @abstractmethod
    def update_ref(self, repo: str, expected: RefRow, new: RefRow) -> bool:
        """Atomically replace the row if it exists and ``same_condition(expected)``; else False.
        ``expected`` also carries the history its caller holds, for an adapter whose stored form
        can only be compared whole (Bigtable in Nessie's layout)."""

    @abstractmethod
    def delete_ref(self, repo: str, expected: RefRow) -> bool:
        """Atomically delete the row if it exists and ``same_condition(expected)``; else False."""

    # --- objects ---------------------------------------------------------------------------------

    @abstractmethod
    def fetch_objs(self, repo: str, ids: Sequence[bytes]) -> list[ObjRow | None]:
        """Rows for the ids, positionally; None where missing. Chunk as the database requires."""

    @abstractmethod
    def insert_objs(self, repo: str, rows: Sequence[ObjRow]) -> list[bool]:
        """Insert each row unless its id exists (True = inserted). For an existing id keep the
        stored bytes but set its ``referenced`` to the new row's value. Per-row atomicity is
        enough: callers re-issue the whole call after a failure."""

    @abstractmethod
    def upsert_objs(self, repo: str, rows: Sequence[ObjRow]) -> None:
        """Insert or overwrite each row unconditionally."""

    @abstractmethod
    def delete_objs(self, repo: str, ids: Sequence[bytes]) -> None:
        """Delete unconditionally; missing ids are fine."""

    @abstractmethod
    def delete_obj_if_referenced(self, repo: str, obj_id: bytes, referenced: int) -> bool:
        """Delete only if the stored ``referenced`` equals the given value."""

    @abstractmethod
    def update_obj_if_version(self, repo: str, expected_type: str, expected_token: str, row: ObjRow) -> bool:
        """Replace the object ``row.obj_id`` only if it is stored with that type and version token."""

    @abstractmethod
    def delete_obj_if_version(
        self, repo: str, obj_id: bytes, expected_type: str, expected_token: str
    ) -> bool:
        """Delete only if stored with that type and version token."""

    @abstractmethod
    def scan_objs(self, repo: str, types: frozenset[str] | None) -> Iterator[ObjRow]:
        """Every object of the repository (optionally only those type codes), in no order.
        Must be a generator (or otherwise closeable) so a half-read scan releases its cursor."""

    @abstractmethod
    def erase_repositories(self, repos: Collection[str]) -> None:
        """Delete every reference and object of these repositories, and nothing else."""

    # --- optional --------------------------------------------------------------------------------

    def list_repositories(self) -> Iterator[str]:
        """The ids of the repositories that hold at least one reference, each once, in no order.
        Optional: an adapter that implements it declares ``Capabilities.lists_repositories``. Reads
        only the references (every initialised repository has some), so it stays cheap on a
        database with many objects. Must be a generator, like ``scan_objs``."""
        raise NotImplementedError(f"{self.name} does not list repositories")

    def insert_objs_and_update_ref(
        self, repo: str, rows: Sequence[ObjRow], expected: RefRow, new: RefRow
    ) -> InsertAndSwap:
        """Insert the rows as :meth:`insert_objs` does, then compare-and-swap the reference as
        :meth:`update_ref` does, but only when the row whose id is ``new.pointer`` (one of
        ``rows``) was inserted by this call. The commit path uses it to store a commit with the
        objects it needs and move its branch onto it.

        Optional: this default is exactly the two calls, one after the other. An adapter whose
        database can do both in one round trip (one statement, one transaction) overrides it; it
        must keep the contract of the two calls: the objects are durable before the reference can
        point at them; an object write error means no swap; a failed swap leaves the objects
        stored (unreferenced) and answers ``swapped=False``.

        Why the swap waits for the target row to be new: an existing row with that id is either
        the same commit written by an earlier attempt or a different object with a colliding id.
        Only the caller can tell (it reads the object and compares), so the call never points a
        reference at an object it did not write; the caller decides and swaps on its own."""
        return finish_store_and_swap(self, repo, rows, set(), expected, new)


def finish_store_and_swap(
    adapter: BackendAdapter,
    repo: str,
    rows: Sequence[ObjRow],
    inserted: set[bytes],
    expected: RefRow,
    new: RefRow,
) -> InsertAndSwap:
    """The two steps of :meth:`BackendAdapter.insert_objs_and_update_ref` for the rows a first
    attempt did not insert (its ids are ``inserted``; none at all for the default).

    An adapter that stores and swaps in one request swaps nothing when some row existed; it ends
    here: ``insert_objs`` for the rest (an existing row gets its ``referenced`` refreshed, one deleted
    meanwhile is inserted again), then ``update_ref`` if the target row is among the inserted."""
    target = target_row(rows, new.pointer)  # before writing: a call without its target is refused
    rest = [r for r in rows if r.obj_id not in inserted]
    answers = adapter.insert_objs(repo, rest) if rest else []
    fresh = inserted | {r.obj_id for r, now in zip(rest, answers, strict=True) if now}
    stored = [r.obj_id in fresh for r in rows]
    if not stored[target]:
        return InsertAndSwap(stored, None)
    return InsertAndSwap(stored, adapter.update_ref(repo, expected, new))


class IdentifiedRow(Protocol):
    """What :func:`target_row` reads of a row: its id (an ``ObjRow`` or a kept live object)."""

    @property
    def obj_id(self) -> bytes: ...


def target_row(rows: Sequence[IdentifiedRow], pointer: bytes) -> int:
    """The position of the row ``pointer`` names (the swap's target); an InputError without one."""
    for i, row in enumerate(rows):
        if row.obj_id == pointer:
            return i
    raise InputError(
        "insert_objs_and_update_ref: the new pointer must be the id of one of the rows stored with it"
    )


#: Methods an adapter may leave out; each is paired with the capability that declares it.
OPTIONAL_METHODS: Final = {"list_repositories": "lists_repositories"}
