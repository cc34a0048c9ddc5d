"""Plain-text tables as lochkit's commands print them: a title line, then one line per row, each
column as wide as its widest cell, two spaces apart, and no trailing blanks.

The one formatter behind the tables the commands print (the conformance matrix, the self-check's
kill table and catalogue, the asymmetric experiment): kept here rather than taken from a library
because the cells are short ASCII text meant for logs and copy-paste, which this renders as
compactly as possible (see "Libraries we use" in the development guide).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def columns(
    titles: Sequence[str], rows: Sequence[Sequence[str]], *, right_aligned: Collection[int] = ()
) -> list[str]:
    """The lines of the table; columns whose index is in ``right_aligned`` (figures) align right."""
    widths = [max([len(title), *(len(row[i]) for row in rows)]) for i, title in enumerate(titles)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.rjust(width) if i in right_aligned else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(titles), *(line(row) for row in rows)]
