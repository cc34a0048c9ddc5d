"""How an error says its fix: as options of the command the user is running.

The same problem has different fixes depending on how lochkit was started: a server address is
``--backend-url NAME=URL`` for ``pytest``, ``--url URL`` for ``lochkit conformance`` and
``lochkit bench``, and ``lochkit servers`` takes none at all. Messages ask this module for the words
(:func:`pass_url`, :func:`use_method`), and the entry point says once which command is running
(:func:`running`; the ``lochkit`` CLI does it for every subcommand from the options its parser
has), so every hint is something the user can paste into the command they ran.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final


def url_env_var(backend: str) -> str:
    """The environment variable that gives ``backend``'s server address, e.g. LOCHKIT_POSTGRES_URL."""
    return f"LOCHKIT_{backend.upper().replace('-', '_')}_URL"


@dataclass(frozen=True)
class CommandSyntax:
    """How one command takes the settings a fix may ask for."""

    #: The command as the user types it, e.g. "lochkit conformance".
    name: str
    #: "--url" (the command serves one backend) or "--backend-url" (it takes NAME=URL pairs); None
    #: if the command takes no address.
    url_option: str | None
    #: The option choosing how servers are obtained, or None if the command cannot choose.
    provision_option: str | None
    #: Whether the command reads ``LOCHKIT_<NAME>_URL``.
    reads_url_env: bool
    #: Whether the address option takes NAME=URL (a command over several backends) rather than URL.
    url_names_backend: bool = False
    #: The option that lets a test or load command write into a database holding someone's data.
    allow_existing_option: str | None = None

    def url_text(self, backend: str, url: str) -> str | None:
        """The option giving ``backend`` the address ``url``, quoted for a POSIX shell."""
        if self.url_option is None:
            return None
        names = self.url_names_backend or self.url_option == "--backend-url"
        value = f"{backend}={url}" if names else url
        return f"{self.url_option} {shlex.quote(value)}"


PYTEST: Final = CommandSyntax(
    "pytest",
    "--backend-url",
    "--provision",
    reads_url_env=True,
    allow_existing_option="--lochkit-allow-existing-data",
)
ALLOW_EXISTING_DATA: Final = "--allow-existing-data"


def for_command(name: str, options: Collection[str], *, url_names_backend: bool = False) -> CommandSyntax:
    """The syntax of a command that takes ``options``: its ``--url`` (one backend per run; such
    commands read LOCHKIT_<NAME>_URL too; with ``url_names_backend``, NAME=URL pairs for several
    backends) and ``--provision``, where it has them."""
    url = "--url" if "--url" in options else None
    provision = "--provision" if "--provision" in options else None
    return CommandSyntax(
        name,
        url,
        provision,
        reads_url_env=url is not None and not url_names_backend,
        url_names_backend=url_names_backend,
        allow_existing_option=ALLOW_EXISTING_DATA if ALLOW_EXISTING_DATA in options else None,
    )


#: The command that takes any backend's address; named when the running command takes none.
CONFORMANCE: Final = for_command("lochkit conformance", ("--url", "--provision"))

# pytest is the default: the conformance plugin is the entry point a library user meets first.
_running: CommandSyntax = PYTEST


def current() -> CommandSyntax:
    return _running


@contextmanager
def running(syntax: CommandSyntax) -> Iterator[None]:
    """Hints given inside this block name ``syntax``'s options."""
    global _running
    previous, _running = _running, syntax
    try:
        yield
    finally:
        _running = previous


def pass_url(backend: str, example: str) -> str:
    """How to give ``backend`` a server address, e.g. "pass --url 'postgresql://...'"."""
    option = _running.url_text(backend, example)
    if option is None:  # this command takes no address: name the one that does
        return f"run: lochkit conformance --backend {backend} {CONFORMANCE.url_text(backend, example)}"
    text = f"pass {option}"
    if _running.reads_url_env:
        text += f" (or set {url_env_var(backend)})"
    return text


def use_method(backend: str, method: str) -> str:
    """How to make the command obtain ``backend``'s server by ``method`` (e.g. "testcontainers")."""
    if _running.provision_option is None:
        return f"run: lochkit conformance --backend {backend} --provision {method}"
    return f"pass {_running.provision_option} {method}"
