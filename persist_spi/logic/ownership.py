"""Whose data a repository holds, and the guard that keeps lochkit's test and load commands away
from anyone else's.

Many repositories share one database (every adapter keys its rows by repository id), so a test run
pointed at a user's database must never write into, or erase, a repository it did not make:

- **Scratch repositories** belong to test commands (the conformance suite, the benchmarks,
  ``torture``): their ids start with :data:`SCRATCH_PREFIX`, each run makes fresh ones and erases
  only those.
- **Load repositories** belong to the load commands (``generate``, the scenarios, the asymmetric
  experiment): one named repository (the empty id unless the user names another), marked as theirs
  in its repository description (:data:`OWNER_PROPERTY`) when a load command creates it, so later
  load runs may add to it.
- **Every other repository** is someone's data (``lochkit serve`` wrote it, or another tool).

:func:`guard_database` refuses a database that holds someone's data unless the user opted in; even
then the commands write only into their own repositories. A database the command started itself
(a fresh server, a temporary directory) holds nobody's data and needs no guard.
"""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass, field
from typing import Final

from persist_spi import hints
from persist_spi.adapter import BackendAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.errors import LochkitError, UsageError
from persist_spi.logic.repository_logic import RepositoryLogic

#: Every scratch repository id starts with this.
SCRATCH_PREFIX: Final = "lochkit-scratch-"
#: The repository-description property that marks a repository a load command created.
OWNER_PROPERTY: Final = "lochkit.owner"
#: Its value for load repositories.
LOAD_OWNER: Final = "lochkit-load"
#: Someone's repositories named in a refusal (a database may hold thousands).
_NAMED: Final = 5


def new_scratch_id(purpose: str) -> str:
    """A fresh scratch repository id, e.g. ``lochkit-scratch-bench-20261127T004423-1a2b3c4d``: what
    made it and when are readable in listings, the random part keeps concurrent runs apart."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    return f"{SCRATCH_PREFIX}{purpose}-{stamp}-{uuid.uuid4().hex[:8]}"


def is_scratch(repository_id: str) -> bool:
    return repository_id.startswith(SCRATCH_PREFIX)


def load_properties() -> dict[str, str]:
    """The repository-description properties a load command writes when it creates a repository."""
    return {OWNER_PROPERTY: LOAD_OWNER}


@dataclass
class Survey:
    """The repositories of one database, by owner. ``others`` stops growing after a few names
    (enough for a message); ``complete`` says whether the listing reached the end."""

    scratch: list[str] = field(default_factory=list)
    load: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    complete: bool = True


def survey(adapter: BackendAdapter, *, limit: int = _NAMED) -> Survey:
    """Who owns each repository of ``adapter``'s database (the adapter must declare
    ``lists_repositories``). Stops once ``limit`` repositories of someone else are found."""
    result = Survey()
    listing = adapter.list_repositories()
    try:
        for repo in listing:
            if is_scratch(repo):
                result.scratch.append(repo)
            elif _owner(adapter, repo) == LOAD_OWNER:
                result.load.append(repo)
            else:
                result.others.append(repo)
                if len(result.others) >= limit:
                    result.complete = False
                    break
    finally:
        close = getattr(listing, "close", None)
        if close is not None:
            close()  # a half-read listing releases its cursor
    return result


def _owner(adapter: BackendAdapter, repository_id: str) -> str | None:
    """The owner property of a repository's description; None when it has none or cannot be read
    (then it is not ours to touch)."""
    try:
        persist = AdapterPersist(adapter, StoreConfig(repository_id=repository_id))
        description = RepositoryLogic(persist).fetch_repository_description()
    except (LochkitError, ValueError):
        return None
    return None if description is None else description.properties.get(OWNER_PROPERTY)


class ExistingDataRefused(UsageError):
    """A test or load command was pointed at a database that holds someone else's data. Nothing
    was written. A usage error: the user fixes it with options (exit code 2)."""


def guard_database(adapter: BackendAdapter, *, allow_existing: bool, writes_into: str) -> Survey | None:
    """Refuse (raise :class:`ExistingDataRefused`) a database holding repositories that neither
    lochkit's test nor its load commands made, unless ``allow_existing``. ``writes_into`` says
    where the command writes when allowed ("only scratch repositories of its own"). Returns the
    survey, or None when the adapter cannot list repositories and the user opted in."""
    if not adapter.capabilities.lists_repositories:
        if allow_existing:
            return None
        raise ExistingDataRefused(
            f"refusing to write test data to {adapter.address}: the {adapter.name} adapter cannot "
            "list the repositories a database holds, so there is no telling whether this one holds "
            f"someone's data. {_opt_in(writes_into)}, or give it a database of its own"
        )
    found = survey(adapter)
    if found.others and not allow_existing:
        more = " and more" if not found.complete else ""
        names = ", ".join(repr(r) for r in found.others) + more
        raise ExistingDataRefused(
            f"refusing to write test data to {adapter.address}: it holds repositories that lochkit's "
            f"test and load commands did not create ({names}; 'lochkit serve' writes such data). "
            f"{_opt_in(writes_into)}, or give it another database or directory"
        )
    return found


def _opt_in(writes_into: str) -> str:
    option = hints.current().allow_existing_option
    how = f"pass {option}" if option else "opt in"
    return f"To run there anyway, {how} (it then writes {writes_into})"
