"""What every commit policy shares: the request, what a policy may ask of the store, and the
bounded retry loop with its errors translated into the version store's.

A policy decides *how* a commit lands on its branch (when to attempt, whether to sleep between
attempts, whether to wait for others, whether to chain several commits into one compare-and-swap).
It never decides *whether* a commit is correct: every policy ends in the same compare-and-swap of the
branch, which stays the only point of truth.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from mypy_extensions import mypyc_attr

from persist_spi.config import StoreConfig
from persist_spi.errors import RetryTimeout
from persist_spi.ids import ObjId
from persist_spi.logic.retry import DEFAULT_RETRY_CLOCK, RetryClock, commit_retry
from persist_spi.objs import CommitObj, Obj
from persist_spi.persist import Persist
from persist_spi.references import Reference
from persist_spi.versionstore.api import Validator
from persist_spi.versionstore.committing import CommitState
from persist_spi.versionstore.errors import ReferenceConflictError, ReferenceRetryFailureError
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Operation
from persist_spi.versionstore.refs import NamedRef
from persist_spi.versionstore.results import CommitResult

T = TypeVar("T")
V = TypeVar("V")


class PerKey(Generic[V]):
    """One value per key (a branch, a Persist and branch...), made on first use; thread-safe."""

    def __init__(self, make: Callable[[], V]) -> None:
        self._make = make
        self._values: dict[Any, V] = {}
        self._lock = threading.Lock()

    def __call__(self, key: Any) -> V:
        with self._lock:
            value = self._values.get(key)
            if value is None:
                value = self._values[key] = self._make()
            return value


class PerPersist(Generic[V]):
    """One value per Persist object, made on first use and forgotten when the Persist is
    collected. Keyed by identity: a Persist may be an unhashable dataclass."""

    def __init__(self, make: Callable[[Persist], V]) -> None:
        self._make = make
        self._values: dict[int, V] = {}
        self._lock = threading.Lock()

    def __call__(self, persist: Persist) -> V:
        key = id(persist)
        with self._lock:
            value = self._values.get(key)
            if value is None:
                value = self._values[key] = self._make(persist)
                # A Persist that is not weak-referenceable keeps its value for the process's life.
                with contextlib.suppress(TypeError):
                    weakref.finalize(persist, self._forget, key)
            return value

    def _forget(self, key: int) -> None:
        # No lock: the finalizer may run inside __call__ of this very thread, when creating the
        # next finalizer lets the garbage collector finish an older Persist; taking the lock there
        # deadlocks. A single dict.pop is atomic, and the key cannot be in use again yet: an
        # object's id is only reused after its finalizers ran.
        self._values.pop(key, None)


@dataclass(frozen=True, slots=True)
class CommitRequest:
    """One caller's commit, as given to :meth:`VersionStore.commit`."""

    branch: NamedRef
    expected_hash: ObjId | None
    meta: CommitMeta
    operations: Sequence[Operation]
    validator: Validator | None = None

    def __init__(
        self,
        branch: NamedRef,
        expected_hash: ObjId | None,
        meta: CommitMeta,
        operations: Sequence[Operation],
        validator: Validator | None = None,
    ) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        object.__setattr__(self, "branch", branch)
        object.__setattr__(self, "expected_hash", expected_hash)
        object.__setattr__(self, "meta", meta)
        object.__setattr__(self, "operations", operations)
        object.__setattr__(self, "validator", validator)


@dataclass(frozen=True, slots=True)
class BuiltCommit:
    """A commit built on a parent, stored with its content values unless built with
    ``store=False``; not yet on the branch."""

    commit: CommitObj
    result: CommitResult
    #: Built without storing: the objects the commit needs, still to be stored with it.
    objects: tuple[Obj, ...] = ()

    def __init__(self, commit: CommitObj, result: CommitResult, objects: tuple[Obj, ...] = ()) -> None:
        # Written out, not generated: see persist_spi.kernel (built by every commit).
        object.__setattr__(self, "commit", commit)
        object.__setattr__(self, "result", result)
        object.__setattr__(self, "objects", objects)


class Committer(Protocol):
    """What a policy may ask of the version store."""

    @property
    def persist(self) -> Persist: ...

    def read_branch(self, branch: NamedRef) -> Reference:
        """The branch's row, read from the database (never from a cache)."""
        ...

    def known_branch(self, branch: NamedRef) -> Reference | None:
        """The branch's row as this process last read or moved it, when it may be built on
        without reading it again (a lost compare-and-swap tells when it was stale)."""
        ...

    def build_on(
        self,
        request: CommitRequest,
        state: CommitState,
        head: Reference,
        *,
        parent: CommitObj | None = None,
        store: bool = True,
    ) -> BuiltCommit:
        """Validate ``request`` and store its commit on ``parent`` (default: the head ``head`` points
        at). ``head`` is the branch as read; the request's expected hash must be in its history.
        With ``store=False`` nothing is written (the caller stores ``objects`` and the commit).
        Raises ReferenceConflictError, ValueError (InvalidOperation) or ReferenceNotFoundError."""
        ...

    def move_branch(self, ref: Reference, new_head: ObjId) -> None:
        """Compare-and-swap the branch from ``ref`` to ``new_head``; RetryNeeded when it lost."""
        ...

    def store_and_move_branch(self, ref: Reference, built: BuiltCommit, state: CommitState) -> None:
        """Store a commit built with ``store=False`` (and its objects), then compare-and-swap the
        branch from ``ref`` onto it, in one round trip where the database allows it; RetryNeeded
        when it lost."""
        ...

    def prepare_values(self, request: CommitRequest, state: CommitState) -> None:
        """Claim new content ids and store content values ahead of the build (into ``state``)."""
        ...


# Compiled in the kernel; subclassed by interpreted classes (adapters' wrappers, tests).
@mypyc_attr(allow_interpreted_subclasses=True)
class CommitPolicy(ABC):
    """How commits land on a branch. A policy object may hold per-process state (queues, locks):
    share one object between the stores whose commits should coordinate."""

    #: The name a user chooses the policy by (``--policy``, ``commit-policy`` in the store config).
    NAME: ClassVar[str]

    @property
    def name(self) -> str:
        return self.NAME

    @abstractmethod
    def commit(self, store: Committer, request: CommitRequest) -> CommitResult:
        """Land ``request`` on its branch, or raise the version store's error."""


def with_retries(
    config: StoreConfig,
    attempt: Callable[[Any], T],
    clock: RetryClock[Any] = DEFAULT_RETRY_CLOCK,
    before_attempt: Callable[[int], None] | None = None,
) -> T:
    """The bounded retry loop, with a lost race's timeout raised as ReferenceRetryFailureError.
    The number of attempts is recorded on the result (CommitResult) or on the error, and each
    attempt's duration on the result, so load tools count retries and time first attempts and
    retries apart without a hook. ``before_attempt(retries)`` runs before every attempt."""
    retries = 0
    durations: list[int] = []

    def count(n: int, _: BaseException) -> None:
        nonlocal retries
        retries = n

    body = attempt
    if before_attempt is not None:

        def body(state: Any) -> T:
            before_attempt(retries)
            return attempt(state)

    try:
        result = commit_retry(config, body, clock, on_retry=count, on_attempt=durations.append)
    except RetryTimeout as e:
        raise retry_failure(e) from e
    except ReferenceConflictError as e:
        e.attempts = retries + 1
        raise
    if isinstance(result, CommitResult):
        if type(result) is CommitResult:  # built directly: dataclasses.replace costs more, every commit
            attempts, nanos = retries + 1, tuple(durations)
            return cast(
                T, CommitResult(result.hash, result.parent, result.added_content_ids, attempts, nanos)
            )
        return dataclasses.replace(result, attempts=retries + 1, attempt_nanos=tuple(durations))
    return result


def retry_failure(e: RetryTimeout) -> ReferenceRetryFailureError:
    error = ReferenceRetryFailureError(
        f"The commit operation could not be performed after {e.retries} retries within the "
        f"configured commit timeout after {e.elapsed_nanos // 1_000_000} ms"
    )
    error.attempts = e.retries + 1
    return error
