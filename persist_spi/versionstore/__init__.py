"""Nessie's version-store model on lochkit's storage logic: content keys and types, commits with
strict validation, reads at any reference or commit, log, diff, merge and transplant."""

from persist_spi.versionstore.content import (
    Content,
    ContentKey,
    IcebergTable,
    IcebergView,
    Namespace,
)
from persist_spi.versionstore.errors import (
    InvalidOperation,
    MergeConflictError,
    ReferenceAlreadyExistsError,
    ReferenceConflictError,
    ReferenceNotFoundError,
    ReferenceRetryFailureError,
)
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import (
    Delete,
    MergeBehavior,
    MergeKeyBehavior,
    Operation,
    Put,
    Unchanged,
)
from persist_spi.versionstore.store import VersionStore

__all__ = [
    "CommitMeta",
    "Content",
    "ContentKey",
    "Delete",
    "IcebergTable",
    "IcebergView",
    "InvalidOperation",
    "MergeBehavior",
    "MergeConflictError",
    "MergeKeyBehavior",
    "Namespace",
    "Operation",
    "Put",
    "ReferenceAlreadyExistsError",
    "ReferenceConflictError",
    "ReferenceNotFoundError",
    "ReferenceRetryFailureError",
    "Unchanged",
    "VersionStore",
]
