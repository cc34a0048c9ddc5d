"""What a conformance run drives, named like a backend in ``--backend``:

- ``rocksdb`` (any backend name): lochkit's version store in-process over that backend;
- ``serve:rocksdb``: the same store behind lochkit's REST server (``lochkit serve``), driven through
  lochkit's Nessie REST API v2 client over real HTTP on loopback;
- ``nessie``: a real Nessie server (provisioned like the database servers, or external with
  ``--backend-url nessie=URI``), driven through the same client.

Only the version-store suites (``versionstore.*``) run over REST: the others drive the storage layer
(Persist) directly, which a REST server does not expose. A version-store test that needs more than
the version-store API says so with ``lochkit_requires(...)`` and one of the target capabilities
below; a target without it skips the test with the reason given here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Final

from conformance.nessie_differences import suite_deviations
from persist_spi.errors import InputError

if TYPE_CHECKING:
    from persist_spi.adapter import Capabilities

IN_PROCESS: Final = "in-process"
LOCHKIT_SERVE: Final = "lochkit-serve"
NESSIE: Final = "nessie"
SERVE_PREFIX: Final = "serve:"


@dataclass(frozen=True)
class SuiteTarget:
    #: As written in ``--backend`` and shown in reports: "rocksdb", "serve:rocksdb", "nessie".
    name: str
    #: The lochkit backend under the store; None for a Nessie server.
    backend: str | None
    transport: str

    @property
    def over_rest(self) -> bool:
        return self.transport != IN_PROCESS


def parse_target(name: str) -> SuiteTarget:
    if name == NESSIE:
        return SuiteTarget(name, None, NESSIE)
    if name.startswith(SERVE_PREFIX):
        backend = name[len(SERVE_PREFIX) :]
        if not backend or backend == NESSIE or backend.startswith(SERVE_PREFIX):
            raise InputError(f"'{name}': write serve:BACKEND with a lochkit backend, e.g. serve:rocksdb")
        return SuiteTarget(name, backend, LOCHKIT_SERVE)
    return SuiteTarget(name, name, IN_PROCESS)


def serve_name(backend: str) -> str:
    return SERVE_PREFIX + backend


@dataclass(frozen=True)
class TargetCapabilities:
    """What a version-store test may use besides the version-store API."""

    #: Read the Persist under the store (e.g. to prove an operation wrote nothing).
    storage_access: bool = True
    #: Build its own store over a fault-injecting Persist (injected races, unknown outcomes).
    injected_faults: bool = True
    #: Create tags carrying a message, headers or a signature.
    tag_metadata: bool = True
    #: Run with a per-test StoreConfig (retries, namespace validation).
    store_config: bool = True
    reasons: Mapping[str, str] = field(default_factory=dict)


#: The names of the capabilities above, as ``lochkit_requires`` takes them.
TARGET_CAPABILITIES: Final = frozenset(f.name for f in fields(TargetCapabilities) if f.name != "reasons")

_OVER_REST_FAULTS: Final = (
    "the store runs behind the REST server: a test that builds its own store over a fault-injecting "
    "Persist would not go through REST at all"
)
_TAGS: Final = "Nessie's REST API v2 has no fields for a tag's message, headers or signature"

CAPABILITIES: Final[Mapping[str, TargetCapabilities]] = {
    IN_PROCESS: TargetCapabilities(),
    # The harness serves the test's own repository, so storage and per-test config stay reachable.
    LOCHKIT_SERVE: TargetCapabilities(
        injected_faults=False,
        tag_metadata=False,
        reasons={"injected_faults": _OVER_REST_FAULTS, "tag_metadata": _TAGS},
    ),
    NESSIE: TargetCapabilities(
        storage_access=False,
        injected_faults=False,
        tag_metadata=False,
        store_config=False,
        reasons={
            "storage_access": "a Nessie server's storage is not reachable from the tests",
            "injected_faults": "faults cannot be injected into a Nessie server's storage",
            "tag_metadata": _TAGS,
            "store_config": "a Nessie server's store configuration is fixed when it starts",
        },
    ),
}

#: The real Nessie server's declared differences from the suites: test name (or
#: ``Suite::test_name``) -> reason. Each becomes a strict expected failure on the ``nessie`` target.
#: They are exactly the suite tests named in conformance/nessie_differences.py, the list the
#: documentation shows (a unit test keeps both equal).
NESSIE_DEVIATIONS: Final[dict[str, str]] = suite_deviations()

#: Differences of ``lochkit serve`` from the in-process store, on every backend (none declared).
SERVE_DEVIATIONS: Final[dict[str, str]] = {}

STORAGE_ONLY_REASON: Final = (
    "this suite drives the storage layer (Persist) directly; over REST only the version-store suites run"
)


def missing_target_capability(target: SuiteTarget, needed: Iterable[str]) -> str | None:
    """Why ``target`` skips a test that needs ``needed`` (``lochkit_requires`` arguments), if it does."""
    caps = CAPABILITIES[target.transport]
    for capability in needed:
        if capability in TARGET_CAPABILITIES and not getattr(caps, capability):
            why = caps.reasons.get(capability, "")
            return f"{target.name} does not declare capability '{capability}': {why}"
    return None


def missing_backend_capability(backend: str, caps: Capabilities, needed: Iterable[str]) -> str | None:
    """Why ``backend`` (declaring ``caps``) skips a test that needs ``needed``, if it does."""
    for capability in needed:
        if capability not in TARGET_CAPABILITIES and not caps.declares(capability):
            because = caps.capability_reasons.get(capability)
            detail = f": {because}" if because else ""
            return f"{backend} does not declare capability '{capability}'{detail}"
    return None


__all__ = [
    "CAPABILITIES",
    "IN_PROCESS",
    "LOCHKIT_SERVE",
    "NESSIE",
    "NESSIE_DEVIATIONS",
    "SERVE_DEVIATIONS",
    "SERVE_PREFIX",
    "STORAGE_ONLY_REASON",
    "TARGET_CAPABILITIES",
    "SuiteTarget",
    "TargetCapabilities",
    "missing_backend_capability",
    "missing_target_capability",
    "parse_target",
    "serve_name",
]
