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

Nessie's layout (``layout=nessie``, :data:`NESSIE_CELLS`): what a Nessie 0.99 server's Bigtable
store writes, so both can share the tables. Row keys are ``UTF-8(repo + ":")`` followed by the name
or the raw id (ids holding ":" are refused: the prefix is not delimited). A reference is one cell,
``r``, holding its whole ``ReferenceProto`` (history embedded); its compare-and-swap compares that
value byte for byte, as Nessie's does (the adapter keeps lochkit's contract on top of that). An
object is ``o`` (its ``ObjProto``, no token inside),
``t`` (the type's *name*, ``COMMIT``, not its short code), ``V`` (the token, absent when none) and
``z`` (referenced µs as a decimal string). Every cell has Nessie's fixed timestamp: with another one
a write would add a version beside Nessie's instead of replacing it.
"""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Final

from persist_spi.adapter import ObjRow, RefRow
from persist_spi.errors import CorruptData
from persist_spi.layouts import NESSIE_LAYOUT, StorageLayout
from persist_spi.nessie_codec import obj_frame
from persist_spi.nessie_ref_rows import ref_row_of_proto, ref_row_proto
from persist_spi.objtypes import OBJ_TYPES

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


# --- the layouts ---------------------------------------------------------------------------------

#: Nessie's fixed cell timestamp (µs), the same for every cell it writes.
NESSIE_CELL_TIMESTAMP_MICROS: Final = 1_586_232_861_000
NESSIE_REF: Final = b"r"
NESSIE_OBJ: Final = b"o"
NESSIE_TYPE: Final = b"t"
NESSIE_TOKEN: Final = b"V"
#: The names of the custom object types a Nessie 0.99 server registers (catalog, signing, lakehouse
#: configuration), by short name, for those lochkit has no class of its own for.
NESSIE_CUSTOM_TYPE_NAMES: Final = {
    "c-e": "catalog-entity",
    "c-s": "catalog-snapshot",
    "lh-cfg": "lakehouse-config",
    "sig-keys": "signer-keys",
}


class CellFormat(ABC):
    """The row keys and cells of one storage layout, and what its conditional writes compare."""

    #: The layout's name (``layout=`` of the URL).
    name: str
    #: The timestamp of every cell written.
    cell_timestamp_micros: int
    #: The reference cell whose presence means the reference exists.
    ref_marker: bytes
    #: The object cell whose presence means the object exists.
    obj_marker: bytes
    #: Whether the refs table holds lochkit's schema-version row.
    schema_row: bool

    @abstractmethod
    def repo_prefix(self, repo: str) -> bytes: ...

    @abstractmethod
    def repo_of_key(self, key: bytes) -> str | None:
        """The repository id of a refs-table key, or None for a row of no repository."""

    def repository_id_problem(self, repo: str) -> str | None:
        return None

    @abstractmethod
    def ref_cells(self, row: RefRow) -> dict[bytes, bytes]: ...

    @abstractmethod
    def ref_row(self, name: str, cells: Cells) -> RefRow: ...

    @abstractmethod
    def ref_condition(self, expected: RefRow) -> tuple[bytes, bytes | None]:
        """The cell a reference's compare-and-swap compares, and the value ``expected`` gives it
        (None when ``expected`` carries a history that cannot be decoded: the stored value is then
        the one compared, see the adapter)."""

    @abstractmethod
    def obj_cells(self, row: ObjRow) -> dict[bytes, bytes]: ...

    @abstractmethod
    def obj_row(self, obj_id: bytes, cells: Cells) -> ObjRow: ...

    @abstractmethod
    def obj_type(self, obj_id: bytes, cells: Cells) -> str:
        """The short type name of a stored object (what scans filter on)."""

    @abstractmethod
    def referenced(self, micros: int) -> bytes: ...

    @abstractmethod
    def version_condition(self, obj_type: str, token: str) -> list[tuple[bytes, bytes]]:
        """The cells (and values) a conditional object write compares: all must match."""


class LochkitCells(CellFormat):
    name = "lochkit"
    cell_timestamp_micros = CELL_TIMESTAMP_MICROS
    ref_marker = IDENTITY
    obj_marker = TYPE
    schema_row = True

    def repo_prefix(self, repo: str) -> bytes:
        return repo_prefix(repo)

    def repo_of_key(self, key: bytes) -> str | None:
        return repo_of_key(key)

    def ref_cells(self, row: RefRow) -> dict[bytes, bytes]:
        return ref_cells(row)

    def ref_row(self, name: str, cells: Cells) -> RefRow:
        return ref_row(name, cells)

    def ref_condition(self, expected: RefRow) -> tuple[bytes, bytes | None]:
        return IDENTITY, identity(expected)

    def obj_cells(self, row: ObjRow) -> dict[bytes, bytes]:
        return obj_cells(row)

    def obj_row(self, obj_id: bytes, cells: Cells) -> ObjRow:
        return obj_row(obj_id, cells)

    def obj_type(self, obj_id: bytes, cells: Cells) -> str:
        return _required(cells, TYPE, f"object {obj_id.hex()}").decode()

    def referenced(self, micros: int) -> bytes:
        return referenced(micros)

    def version_condition(self, obj_type: str, token: str) -> list[tuple[bytes, bytes]]:
        return [(TYPE_AND_TOKEN, type_and_token(obj_type, token))]


class NessieCells(CellFormat):
    name = "nessie"
    cell_timestamp_micros = NESSIE_CELL_TIMESTAMP_MICROS
    ref_marker = NESSIE_REF
    obj_marker = NESSIE_OBJ
    schema_row = False

    def repo_prefix(self, repo: str) -> bytes:
        return (repo + ":").encode()

    def repo_of_key(self, key: bytes) -> str | None:
        repo, sep, _ = key.partition(b":")
        return repo.decode() if sep else None

    def repository_id_problem(self, repo: str) -> str | None:
        if ":" not in repo:
            return None
        return (
            "in Nessie's layout every row key is the repository id, ':' and the name, unescaped, so "
            "an id containing ':' would share rows, scans and erasing with another repository (a:b "
            "with a); choose an id without ':'"
        )

    def ref_cells(self, row: RefRow) -> dict[bytes, bytes]:
        return {NESSIE_REF: ref_row_proto(row)}

    def ref_row(self, name: str, cells: Cells) -> RefRow:
        value = _required(cells, NESSIE_REF, f"reference {name}")
        try:
            return ref_row_of_proto(name, value)
        except CorruptData as e:
            raise CorruptData(f"bigtable: reference {name}: {e}") from None

    def ref_condition(self, expected: RefRow) -> tuple[bytes, bytes | None]:
        # Nessie compares the whole serialized reference, history included; lochkit's bytes for a
        # reference are Nessie's (the shared ReferenceProto encoding), so this usually matches.
        try:
            return NESSIE_REF, ref_row_proto(expected)
        except CorruptData:
            return NESSIE_REF, None

    def obj_cells(self, row: ObjRow) -> dict[bytes, bytes]:
        cells = {
            NESSIE_OBJ: row.data,
            NESSIE_TYPE: nessie_type_name(row.obj_type).encode(),
            REFERENCED: self.referenced(row.referenced),
        }
        if row.version_token is not None:
            cells[NESSIE_TOKEN] = row.version_token.encode()
        return cells

    def obj_row(self, obj_id: bytes, cells: Cells) -> ObjRow:
        token = cells.get(NESSIE_TOKEN)
        return ObjRow(
            obj_id,
            self.obj_type(obj_id, cells),
            None if token is None else token.decode(),
            _required(cells, NESSIE_OBJ, f"object {obj_id.hex()}"),
            _decimal(cells.get(REFERENCED), obj_id),
        )

    def obj_type(self, obj_id: bytes, cells: Cells) -> str:
        # The object's own bytes name its type (Nessie reads it from there too); the type cell
        # holds the long name, which lochkit does not know for every custom type.
        data = _required(cells, NESSIE_OBJ, f"object {obj_id.hex()}")
        try:
            return obj_frame(data).type_short_name
        except CorruptData as e:
            raise CorruptData(f"bigtable: object {obj_id.hex()}: {e}") from None

    def referenced(self, micros: int) -> bytes:
        return str(micros).encode()

    def version_condition(self, obj_type: str, token: str) -> list[tuple[bytes, bytes]]:
        return [(NESSIE_TYPE, nessie_type_name(obj_type).encode()), (NESSIE_TOKEN, token.encode())]


def nessie_type_name(short_name: str) -> str:
    """What Nessie writes in the type cell: the type's name (``COMMIT`` for ``c``). A type neither
    side knows keeps its short name (Nessie itself reads the type from the object's bytes)."""
    known = OBJ_TYPES.by_short_name(short_name)
    if known is not None:
        return known.name
    return NESSIE_CUSTOM_TYPE_NAMES.get(short_name, short_name)


def _decimal(value: bytes | None, obj_id: bytes) -> int:
    """Nessie's referenced time: a decimal string, 0 when absent."""
    if value is None:
        return 0
    text = value.decode(errors="replace")
    if not text.lstrip("-").isdigit():
        raise CorruptData(
            f"bigtable: object {obj_id.hex()} has referenced cell {value!r}, not a decimal number as "
            "Nessie's layout stores it; were the tables written in lochkit's own layout?"
        )
    return int(text)


LOCHKIT_CELLS: Final = LochkitCells()
NESSIE_CELLS: Final = NessieCells()


def cell_format(layout: StorageLayout) -> CellFormat:
    return NESSIE_CELLS if layout is NESSIE_LAYOUT else LOCHKIT_CELLS
