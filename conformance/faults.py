"""A Persist that delegates to the real backend but lets a test inject trouble: a concurrent
change right before a write, or an "unknown outcome" error before or after the real write.

It is not a fake: every call still reaches the backend under test; it only adds events a real
deployment sees (races, timeouts) at exactly the moment a test needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from persist_spi.errors import UnknownOperationResult
from persist_spi.forwarding import ForwardingPersist
from persist_spi.ids import ObjId
from persist_spi.objs import Obj
from persist_spi.persist import Persist, StoredAndMoved
from persist_spi.references import Reference

T = TypeVar("T")


@dataclass
class Fault:
    """Raise ``UnknownOperationResult`` on the next ``times`` calls of ``method``; with
    ``after_write`` the real write happens first (the caller just never hears about it)."""

    method: str
    after_write: bool = False
    times: int = 1


#: The writes a test may inject faults into (and whose calls are counted); reads pass untouched.
FAULTABLE: Final = frozenset(
    {
        "store_objs",
        "upsert_objs",
        "delete_objs",
        "delete_with_referenced",
        "update_conditional",
        "delete_conditional",
        "add_reference",
        "mark_reference_as_deleted",
        "purge_reference",
        "update_reference_pointer",
        "store_objs_and_update_reference",
    }
)


@dataclass
class FaultInjectingPersist(ForwardingPersist):
    delegate: Persist
    faults: list[Fault] = field(default_factory=list)
    #: Called before every update_reference_pointer, e.g. to commit concurrently.
    before_pointer_update: Callable[[Reference, ObjId], None] | None = None
    calls: dict[str, int] = field(default_factory=dict)

    def _call(self, method: str, call: Callable[..., T], *args: Any) -> T:
        if method not in FAULTABLE:
            return call(*args)
        if method == "store_objs" and len(args[0]) == 1:
            method = "store_obj"  # a test can fault a single store apart from bulk ones
        if method == "update_reference_pointer":
            self._before_pointer_update(*args)
        self.calls[method] = self.calls.get(method, 0) + 1
        fault = next((f for f in self.faults if f.method == method and f.times > 0), None)
        if fault is None:
            return call(*args)
        fault.times -= 1
        if fault.after_write:
            call(*args)
        raise UnknownOperationResult(f"injected unknown outcome of {method}")

    def store_objs_and_update_reference(
        self, objs: Sequence[Obj], ref: Reference, new_pointer: ObjId
    ) -> StoredAndMoved:
        # Made as its two steps here (the contract's default), so that each is seen, and can be
        # made to fail, on its own, as for every other commit path; a test that faults the combined
        # call itself gets the backend's own (one round trip where it has one).
        if any(f.method == "store_objs_and_update_reference" and f.times > 0 for f in self.faults):
            return super().store_objs_and_update_reference(objs, ref, new_pointer)
        return Persist.store_objs_and_update_reference(self, objs, ref, new_pointer)

    def _before_pointer_update(self, ref: Reference, new_pointer: ObjId) -> None:
        if self.before_pointer_update is not None:
            hook, self.before_pointer_update = self.before_pointer_update, None
            try:
                hook(ref, new_pointer)
            finally:
                self.before_pointer_update = hook
