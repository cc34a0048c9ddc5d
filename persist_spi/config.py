"""Store configuration with Nessie's defaults (and Nessie's kebab-case key names)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from persist_spi.errors import InputError

INT_MAX = 2**31 - 1
#: Longest repository id, in UTF-8 bytes: it is part of every row key (see references.py).
MAX_REPOSITORY_ID_BYTES = 256


@dataclass(frozen=True, slots=True)
class StoreConfig:
    repository_id: str = ""
    parents_per_commit: int = 20
    commit_timeout_millis: int = 5000
    commit_retries: int = INT_MAX
    retry_initial_sleep_millis_lower: int = 5
    retry_initial_sleep_millis_upper: int = 25
    retry_max_sleep_millis: int = 250
    max_incremental_index_size: int = 50 * 1024
    max_serialized_index_size: int = 200 * 1024
    max_reference_stripes_per_commit: int = 50
    assumed_wall_clock_drift_micros: int = 5_000_000
    namespace_validation: bool = True
    ref_previous_head_count: int = 20
    ref_previous_head_time_span_seconds: int = 300
    #: lochkit only: how commits land on a branch (nessie, immediate, fair, coordinated, group;
    #: see persist_spi.versionstore.policies).
    commit_policy: str = "nessie"
    #: lochkit only, ``coordinated``: a commit-target lease whose holder shows no progress for this
    #: long is taken over by the next waiter; 0 turns the cross-process lease off.
    commit_lease_millis: int = 1000
    #: lochkit only, ``group``: most commits chained into one compare-and-swap.
    group_max_commits: int = 64

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, int) and not isinstance(value, bool) and value < 0:
                raise InputError(f"Store config '{_kebab(f.name)}' is {value}; it must not be negative")
        if self.retry_initial_sleep_millis_lower > self.retry_initial_sleep_millis_upper:
            raise InputError(
                "Store config 'retry-initial-sleep-millis-lower' "
                f"({self.retry_initial_sleep_millis_lower}) is above "
                f"'retry-initial-sleep-millis-upper' ({self.retry_initial_sleep_millis_upper})"
            )
        if self.parents_per_commit < 1:
            raise InputError("Store config 'parents-per-commit' must be at least 1")
        if self.group_max_commits < 1:
            raise InputError("Store config 'group-max-commits' must be at least 1")
        _check_repository_id(self.repository_id)

    def with_changes(self, **changes: Any) -> StoreConfig:
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> StoreConfig:
        """Build from Nessie-style keys (``max-incremental-index-size``) or Python names."""
        known = {f.name: f for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, raw in values.items():
            name = key.replace("-", "_")
            if name not in known:
                raise InputError(
                    f"Unknown store config '{key}'; known keys: "
                    + ", ".join(sorted(_kebab(n) for n in known))
                )
            kwargs[name] = _coerce(known[name].type, raw, key)
        return cls(**kwargs)


def _check_repository_id(repository_id: object) -> None:
    if not isinstance(repository_id, str):
        raise InputError(f"Store config 'repository-id' must be a string, got {type(repository_id).__name__}")
    try:
        size = len(repository_id.encode("utf-8"))
    except UnicodeEncodeError:
        raise InputError("Store config 'repository-id' contains an unpaired surrogate") from None
    if size > MAX_REPOSITORY_ID_BYTES:
        raise InputError(
            f"Store config 'repository-id' is {size} bytes long in UTF-8; the longest allowed is "
            f"{MAX_REPOSITORY_ID_BYTES} bytes"
        )


def _kebab(name: str) -> str:
    return name.replace("_", "-")


def _coerce(declared: Any, raw: Any, key: str) -> Any:
    kind = declared if isinstance(declared, str) else getattr(declared, "__name__", str(declared))
    if kind == "str":
        return str(raw)
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no"):
            return False
        raise InputError(f"Store config '{key}' must be true or false, got '{raw}'")
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise InputError(f"Store config '{key}' must be an integer, got '{raw}'") from None
