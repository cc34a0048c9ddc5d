"""What the MariaDB / MySQL backend declares: the object size limit follows the server's
``max_allowed_packet`` (read when connecting), and Nessie's layout has one deviation."""

from __future__ import annotations

from typing import Final

from persist_spi.adapter import Capabilities

#: Room in a packet for the statement's text, and for the other columns of one row.
PACKET_MARGIN: Final = 64 * 1024
ROW_OVERHEAD: Final = 1024


def object_size_limit(max_allowed_packet: int) -> int:
    """The largest object one statement can carry: PyMySQL sends bytes escaped, which at worst
    doubles them, inside a packet of ``max_allowed_packet`` bytes."""
    return (max_allowed_packet - PACKET_MARGIN - ROW_OVERHEAD) // 2


#: What Nessie's JDBC2 tables on MariaDB / MySQL cannot do that lochkit's own can.
NESSIE_LAYOUT_DEVIATIONS: Final = {
    "test_longest_reference_name_is_created_listed_and_deleted": "Nessie's JDBC2 tables on MariaDB and "
    "MySQL hold reference names of up to 255 characters (VARCHAR(255)); lochkit allows 1024 bytes",
    "test_reference_names_are_exact_and_case_sensitive": "Nessie's JDBC2 tables on MariaDB and MySQL "
    "compare names in utf8mb4_bin, a PAD SPACE collation: names differing only in trailing spaces are "
    "one name (a Nessie server on these tables behaves the same)",
}


def capabilities(max_allowed_packet: int, *, nessie: bool = False) -> Capabilities:
    return Capabilities(
        hard_object_size_limit=object_size_limit(max_allowed_packet),
        multi_process=True,
        durable=True,
        lists_repositories=True,
        deviations=NESSIE_LAYOUT_DEVIATIONS if nessie else {},
        capability_reasons={
            "hard_object_size_limit": f"one statement must fit the server's max_allowed_packet "
            f"({max_allowed_packet} bytes), and binary values travel escaped (up to twice their size)",
        },
    )
