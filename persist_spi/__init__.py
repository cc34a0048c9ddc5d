"""lochkit's Persist contract: the object model, ids, the adapter SPI and the Persist core.

Backend implementers start at :class:`persist_spi.adapter.BackendAdapter` and
:class:`persist_spi.registry.BackendFactory`; logic code uses :class:`persist_spi.persist.Persist`.
"""

from persist_spi.adapter import BackendAdapter, Capabilities, ObjRow, RefRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.clock import DEFAULT_CLOCK, UniqueMicrosClock
from persist_spi.config import StoreConfig
from persist_spi.errors import (
    BackendAuthenticationFailed,
    BackendConfigError,
    BackendError,
    BackendPermissionDenied,
    BackendSchemaMismatch,
    BackendUnavailable,
    LochkitError,
    ObjNotFound,
    ObjTooLarge,
    RefAlreadyExists,
    RefConditionFailed,
    RefNotFound,
    RetryTimeout,
    UnknownOperationResult,
)
from persist_spi.headers import EMPTY_COMMIT_HEADERS, CommitHeaders
from persist_spi.ids import EMPTY_OBJ_ID, ObjId, random_obj_id
from persist_spi.objs import (
    CommitObj,
    CommitType,
    Compression,
    ContentValueObj,
    GenericObj,
    IndexObj,
    IndexSegmentsObj,
    IndexStripe,
    Obj,
    RefObj,
    StringObj,
    TagObj,
    UniqueIdObj,
    UpdateableObj,
    content_value,
    index_obj,
    index_segments,
    ref_obj,
    string_data,
    tag_obj,
    unique_id,
    unique_id_for_uuid,
)
from persist_spi.objtypes import OBJ_TYPES, ObjType, register_obj_type
from persist_spi.persist import Persist
from persist_spi.references import PreviousPointer, Reference
from persist_spi.registry import BackendFactory, backend_factory, discover_backends

__all__ = [
    "DEFAULT_CLOCK",
    "EMPTY_COMMIT_HEADERS",
    "EMPTY_OBJ_ID",
    "OBJ_TYPES",
    "AdapterPersist",
    "BackendAdapter",
    "BackendAuthenticationFailed",
    "BackendConfigError",
    "BackendError",
    "BackendFactory",
    "BackendPermissionDenied",
    "BackendSchemaMismatch",
    "BackendUnavailable",
    "Capabilities",
    "CommitHeaders",
    "CommitObj",
    "CommitType",
    "Compression",
    "ContentValueObj",
    "GenericObj",
    "IndexObj",
    "IndexSegmentsObj",
    "IndexStripe",
    "LochkitError",
    "Obj",
    "ObjId",
    "ObjNotFound",
    "ObjRow",
    "ObjTooLarge",
    "ObjType",
    "Persist",
    "PreviousPointer",
    "RefAlreadyExists",
    "RefConditionFailed",
    "RefNotFound",
    "RefObj",
    "RefRow",
    "Reference",
    "RetryTimeout",
    "StoreConfig",
    "StringObj",
    "TagObj",
    "UniqueIdObj",
    "UniqueMicrosClock",
    "UnknownOperationResult",
    "UpdateableObj",
    "backend_factory",
    "content_value",
    "discover_backends",
    "index_obj",
    "index_segments",
    "random_obj_id",
    "ref_obj",
    "register_obj_type",
    "string_data",
    "tag_obj",
    "unique_id",
    "unique_id_for_uuid",
]
