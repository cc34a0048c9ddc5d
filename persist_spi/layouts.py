"""Storage layouts: which bytes an adapter's rows hold, chosen per backend URL (``layout=``).

An adapter moves opaque bytes; the layout says how the core fills them. ``lochkit`` (the default)
is lochkit's own: its msgpack object codec and reference history. ``nessie`` is what a Nessie
server's storage writes (``ObjProto`` objects without the version token inside, and the history
as delimited ``ReferencePreviousProto`` records), so that lochkit and a Nessie server can share one
database. An adapter that offers the nessie layout also switches its table names, key encoding,
NULL / absent conventions and schema checks with it; the core part, here, is the same for all.

An empty history is ``b""`` in a :class:`~persist_spi.adapter.RefRow` whatever the layout; an
adapter in the nessie layout stores it as NULL or an absent attribute, as Nessie does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from persist_spi.codec import DEFAULT_CODEC, ObjCodec, decode_previous_pointers, encode_previous_pointers
from persist_spi.errors import BackendConfigError
from persist_spi.nessie_codec import NessieObjCodec
from persist_spi.nessie_references import decode_nessie_previous_pointers, encode_nessie_previous_pointers
from persist_spi.references import PreviousPointer


@dataclass(frozen=True)
class StorageLayout:
    """The core's half of a layout: the object codec and the reference-history encoding."""

    name: str
    codec: ObjCodec
    encode_history: Callable[[Sequence[PreviousPointer]], bytes]
    decode_history: Callable[[bytes | None], tuple[PreviousPointer, ...]]
    #: One line for ``--help`` texts and error messages.
    summary: str


def _encode_nessie_history(entries: Sequence[PreviousPointer]) -> bytes:
    return encode_nessie_previous_pointers(entries) or b""


LOCHKIT_LAYOUT: Final = StorageLayout(
    "lochkit",
    DEFAULT_CODEC,
    encode_previous_pointers,
    decode_previous_pointers,
    "lochkit's own tables and msgpack objects (the default)",
)
NESSIE_LAYOUT: Final = StorageLayout(
    "nessie",
    NessieObjCodec(include_version_token=False),
    _encode_nessie_history,
    decode_nessie_previous_pointers,
    "a Nessie server's own tables and protobuf objects, so both can share the database",
)
LAYOUTS: Final = {layout.name: layout for layout in (LOCHKIT_LAYOUT, NESSIE_LAYOUT)}


#: What Nessie's DynamoDB2 and Bigtable stores put between their table prefix and a table's name.
NESSIE_PREFIX_SEPARATOR: Final = "_"


def prefixed_table(layout: StorageLayout, prefix: str, name: str) -> str:
    """A table's name from a URL's ``table_prefix``, for stores whose Nessie backend takes a table
    prefix (DynamoDB2, Bigtable): lochkit's layout prepends the prefix as it is (``lochkit_refs``);
    Nessie's joins a prefix and the name with ``_`` and uses the bare name without one."""
    if layout is not NESSIE_LAYOUT:
        return f"{prefix}{name}"
    return f"{prefix}{NESSIE_PREFIX_SEPARATOR}{name}" if prefix else name


def parse_layout(
    backend: str, address: str, value: object, offered: Sequence[str] = tuple(LAYOUTS)
) -> StorageLayout:
    """The layout a ``layout=`` option names (None or empty: lochkit's own); a clear
    :class:`BackendConfigError` for an unknown one or one this backend does not offer."""
    if value is None or value == "":
        return LOCHKIT_LAYOUT
    layout = LAYOUTS.get(str(value).strip().lower())
    if layout is None or layout.name not in offered:
        choices = ", ".join(f"layout={name} ({LAYOUTS[name].summary})" for name in offered)
        raise BackendConfigError(
            backend, address, f"unknown or unsupported layout {value!r}", f"choose one of: {choices}"
        )
    return layout
