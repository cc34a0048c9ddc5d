"""The JVM options of a Spark driver the report job starts: its logging configuration (or the
options a caller gave), then whatever LOCHKIT_SPARK_DRIVER_JVM_OPTIONS adds."""

from __future__ import annotations

import pytest

from reports.session import driver_java_options


def test_the_driver_gets_the_logging_configuration_and_the_environments_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOCHKIT_SPARK_DRIVER_JVM_OPTIONS", raising=False)
    alone = driver_java_options(None)
    assert alone.startswith("-Dlog4j2.configurationFile=")
    monkeypatch.setenv("LOCHKIT_SPARK_DRIVER_JVM_OPTIONS", "-XX:TieredStopAtLevel=1 '-Dname=a b'")
    assert driver_java_options(None) == f"{alone} -XX:TieredStopAtLevel=1 '-Dname=a b'"


def test_options_a_caller_gives_replace_the_logging_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCHKIT_SPARK_DRIVER_JVM_OPTIONS", "-XX:TieredStopAtLevel=1")
    assert driver_java_options("-Dmine=1") == "-Dmine=1 -XX:TieredStopAtLevel=1"
    monkeypatch.delenv("LOCHKIT_SPARK_DRIVER_JVM_OPTIONS")
    assert driver_java_options("-Dmine=1") == "-Dmine=1"
