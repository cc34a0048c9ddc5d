"""What rows become in Bigtable (Bigtable has no statements; the name is the one every backend
package gives this job): row keys, the cells of a reference and of an object, and back.

Row keys start with the repository's prefix ``<byte length of the id>:<id>:`` (UTF-8), so that
ids like ``a`` and ``a:b`` never share rows and a repository is one contiguous key range (read
and dropped by prefix). A reference's key continues with its name (UTF-8), an object's with its
raw id bytes.

Every cell is written at one fixed timestamp and the column families keep one version, so a
write replaces the cell instead of adding a version that an older value could still match.

References (family ``r``): ``k`` holds the compare-and-swap identity (pointer, deleted, created
time, extended info) in one value, so that a single value filter checks all four at once; ``h``
holds the history. Objects (family ``o``): ``d`` data, ``t`` type, ``v`` version token (absent
when none), ``y`` type and token together (the condition of conditional updates, absent without
a token), ``z`` the referenced time.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Final

from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import CorruptData

REFS_FAMILY: Final = "r"
OBJS_FAMILY: Final = "o"
IDENTITY: Final = b"k"
HISTORY: Final = b"h"
DATA: Final = b"d"
TYPE: Final = b"t"
TOKEN: Final = b"v"
TYPE_AND_TOKEN: Final = b"y"
REFERENCED: Final = b"z"
#: The one timestamp of every cell (µs, a multiple of 1000 as Bigtable requires).
CELL_TIMESTAMP_MICROS: Final = 1_000_000
#: The schema-version row of the refs table: no repository prefix starts with a letter.
SCHEMA_ROW_KEY: Final = b"lochkit:schema"
SCHEMA_QUALIFIER: Final = b"version"

_SIGNED64: Final = struct.Struct(">q")
_IDENTITY_HEAD: Final = struct.Struct(">?qH")  # deleted, created µs, pointer length

Cells = Mapping[bytes, bytes]


def repo_prefix(repo: str) -> bytes:
    encoded = repo.encode()
    return b"%d:%s:" % (len(encoded), encoded)


def repo_of_key(key: bytes) -> str | None:
    """The repository id of a row key, or None for rows of no repository (the schema row)."""
    length, sep, rest = key.partition(b":")
    if (
        not sep
        or not length.isdigit()
        or len(rest) <= int(length)
        or rest[int(length) : int(length) + 1] != b":"
    ):
        return None
    return rest[: int(length)].decode()


def prefix_end(prefix: bytes) -> bytes:
    """The first key after every key starting with ``prefix`` (prefixes here end with ``:``)."""
    return prefix[:-1] + bytes([prefix[-1] + 1])


def identity(row: RefRow) -> bytes:
    """The value compared by a reference's compare-and-swap: what ``RefRow.same_condition`` compares."""
    head = _IDENTITY_HEAD.pack(row.deleted, row.created_at_micros, len(row.pointer)) + row.pointer
    return head if row.extended_info is None else head + b"\x01" + row.extended_info


def ref_cells(row: RefRow) -> dict[bytes, bytes]:
    return {IDENTITY: identity(row), HISTORY: row.previous_pointers}


def ref_row(name: str, cells: Cells) -> RefRow:
    value = _required(cells, IDENTITY, f"reference {name}")
    try:
        deleted, created, length = _IDENTITY_HEAD.unpack_from(value)
    except struct.error:
        raise CorruptData(f"bigtable: reference {name} has a malformed identity cell") from None
    start = _IDENTITY_HEAD.size
    pointer, rest = value[start : start + length], value[start + length :]
    if len(pointer) != length or rest[:1] not in (b"", b"\x01"):
        raise CorruptData(f"bigtable: reference {name} has a malformed identity cell")
    return RefRow(name, pointer, deleted, created, rest[1:] if rest else None, cells.get(HISTORY, b""))


def obj_cells(row: ObjRow) -> dict[bytes, bytes]:
    cells = {DATA: row.data, TYPE: row.obj_type.encode(), REFERENCED: referenced(row.referenced)}
    if row.version_token is not None:
        cells[TOKEN] = row.version_token.encode()
        cells[TYPE_AND_TOKEN] = type_and_token(row.obj_type, row.version_token)
    return cells


def obj_row(obj_id: bytes, cells: Cells) -> ObjRow:
    what = f"object {obj_id.hex()}"
    token = cells.get(TOKEN)
    return ObjRow(
        obj_id,
        _required(cells, TYPE, what).decode(),
        None if token is None else token.decode(),
        _required(cells, DATA, what),
        _SIGNED64.unpack(_required(cells, REFERENCED, what))[0],
    )


def referenced(micros: int) -> bytes:
    return _SIGNED64.pack(micros)


def type_and_token(obj_type: str, token: str) -> bytes:
    encoded = obj_type.encode()
    return b"%d:%s%s" % (len(encoded), encoded, token.encode())


def _required(cells: Cells, qualifier: bytes, what: str) -> bytes:
    value = cells.get(qualifier)
    if value is None:
        raise CorruptData(f"bigtable: {what} has no cell '{qualifier.decode()}'")
    return value
