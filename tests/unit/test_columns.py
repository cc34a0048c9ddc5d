"""Plain-text tables as the commands print them: one column width per column, two spaces apart."""

from __future__ import annotations

from persist_spi.columns import columns


def test_columns_are_as_wide_as_their_widest_cell_or_title() -> None:
    lines = columns(["name", "n"], [["inmemory", "12"], ["pg", "1,234"]])
    assert lines == [
        "name      n",
        "inmemory  12",
        "pg        1,234",
    ]


def test_right_aligned_columns_line_up_their_last_characters() -> None:
    lines = columns(["writer", "commits/s"], [["w1", "12.5"], ["all", "125.0"]], right_aligned={1})
    assert lines == [
        "writer  commits/s",
        "w1           12.5",
        "all         125.0",
    ]


def test_lines_carry_no_trailing_blanks() -> None:
    lines = columns(["a", "racy"], [["x", ""], ["longer", "racy"]])
    assert lines == ["a       racy", "x", "longer  racy"]


def test_a_table_without_rows_is_its_title_line() -> None:
    assert columns(["a", "b"], []) == ["a  b"]
