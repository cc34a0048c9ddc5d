"""``lochkit shared-db`` refuses what it cannot run before starting any server."""

from __future__ import annotations

import pytest

from lochkit.cli import main


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["--backend", "inmemory"],
            "unknown backend(s) inmemory; use postgres, mariadb, rocksdb, cassandra, dynamodb, bigtable",
        ),
        (["--direction", "sideways"], "unknown direction(s) sideways"),
        (["--commits", "0"], "--commits must be at least 1"),
    ],
)
def test_bad_arguments_are_refused_with_what_to_use(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["shared-db", *argv]) == 2
    assert said in capsys.readouterr().err
