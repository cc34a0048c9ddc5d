"""Nessie's version-store model on lochkit's storage logic: content keys and types, commits with
strict validation, reads at any reference or commit, log, diff, merge and transplant.

:class:`~persist_spi.versionstore.api.VersionStoreApi` is the contract a client of the model
drives; :class:`VersionStore` (in-process) satisfies it, and so does lochkit's Nessie REST client."""

from persist_spi.versionstore.content import (
    UDF,
    Content,
    ContentKey,
    DeltaLakeTable,
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
    "UDF",
    "CommitMeta",
    "Content",
    "ContentKey",
    "Delete",
    "DeltaLakeTable",
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
