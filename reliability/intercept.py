"""A Persist that hands every call to one hook before it reaches the real Persist.

The campaign's wrappers (crash points, the compare-and-swap history) are subclasses overriding
:meth:`InterceptingPersist.intercept`; nothing in the commit logic knows they exist. Derived reads
and writes of the contract go through the primitives, so each database round trip is seen once.
A commit's store-and-swap is one call here, as the backend makes it (one request where it can):
crash points fall before or after it; random kills still land between its halves on a backend
that makes it two requests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from persist_spi.forwarding import ForwardingPersist

T = TypeVar("T")

#: The campaign's names of calls whose contract name differs: both reads of objects are "fetch_objs",
#: both reads of references "fetch_references".
CAMPAIGN_NAMES: Final = {
    "fetch_typed_objs_if_exist": "fetch_objs",
    "fetch_references_for_update": "fetch_references",
}


class InterceptingPersist(ForwardingPersist):
    def intercept(self, method: str, args: tuple[Any, ...], call: Callable[[], T]) -> T:
        """Called for every call; ``call`` performs it on the delegate."""
        return call()

    def _call(self, method: str, call: Callable[..., T], *args: Any) -> T:
        # The hooks see the objects a store writes, not its size-limit switch.
        seen = args[:1] if method == "store_objs" else args
        return self.intercept(CAMPAIGN_NAMES.get(method, method), seen, lambda: call(*args))
