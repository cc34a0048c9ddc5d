"""One local SparkSession for all the report tests (starting Spark costs seconds; every test of
the reports shares it), and helpers that build small event tables with known answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .events import EVENT_COLUMNS

pytest.importorskip("pyspark", reason="the reports extra is not installed: pip install 'lochkit[reports]'")


# Package scope: one session for every report test, stopped when they are done, so a later test
# that builds its own session with other settings (tests/spark, Iceberg) does not inherit this one.
@pytest.fixture(scope="package")
def spark() -> Iterator[Any]:
    from reports.session import spark_session

    # The tests' tables have a few hundred rows: compiling generated code for each of their queries
    # costs more than it saves, so they run interpreted; the job itself keeps Spark's defaults.
    session = spark_session(
        "local[2]",
        app_name="lochkit-tests",
        shuffle_partitions=2,
        extra_conf={"spark.sql.codegen.wholeStage": "false", "spark.ui.enabled": "false"},
    )
    yield session
    session.stop()


@pytest.fixture
def events_df(spark: Any) -> Any:
    def make(rows: list[tuple[Any, ...]]) -> Any:
        return spark.createDataFrame(rows, EVENT_COLUMNS)

    return make
