"""The Java servers' start-up options: a training start's AOT cache is moved into place only when
complete, every later start on the same jar and Java build uses it, and only a Java that has AOT
caches is asked to; extra JVM options come from LOCHKIT_<SERVER>_JAVA_OPTIONS."""

from __future__ import annotations

from pathlib import Path

import pytest

from provisioning.servers import jvm_startup


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path, Path]:
    """A java binary, a server jar and the cache file of the two."""
    monkeypatch.setenv("LOCHKIT_CACHE", str(tmp_path / "cache"))
    java, jar = tmp_path / "java", tmp_path / "server.jar"
    java.write_text("")
    jar.write_text("v1")
    return str(java), jar, jvm_startup.cache_file("nessie", "1.0", str(java), jar)


def test_a_complete_training_cache_is_what_later_starts_use(cache: tuple[str, Path, Path]) -> None:
    _, _, file = cache
    assert jvm_startup.cache_options(file, 25) == ()
    partial = jvm_startup.training_file(file)
    assert jvm_startup.training_options(partial) == (f"-XX:AOTCacheOutput={partial}",)
    assert jvm_startup.training_file(file) != partial  # two training starts never share a file
    partial.write_bytes(b"cache")  # what the JVM writes as it exits
    assert jvm_startup.publish(partial, file)
    assert not partial.exists()
    assert jvm_startup.cache_options(file, 25) == (f"-XX:AOTCache={file}",)
    assert file.read_bytes() == b"cache"


@pytest.mark.parametrize("written", [None, b""], ids=["no file", "empty file"])
def test_a_training_start_stopped_before_its_cache_was_written_publishes_nothing(
    cache: tuple[str, Path, Path], written: bytes | None
) -> None:
    _, _, file = cache
    partial = jvm_startup.training_file(file)
    if written is not None:
        partial.write_bytes(written)
    assert not jvm_startup.publish(partial, file)
    assert not file.exists()
    assert not partial.exists()
    assert jvm_startup.cache_options(file, 25) == ()


def test_another_jar_or_java_build_has_another_cache(cache: tuple[str, Path, Path]) -> None:
    java, jar, file = cache
    jar.write_text("version two")
    assert jvm_startup.cache_file("nessie", "1.0", java, jar) != file
    other_java = jar.with_name("java-other")
    other_java.write_text("")
    assert jvm_startup.cache_file("nessie", "1.0", str(other_java), jar) != file


def test_a_java_before_25_is_not_given_the_cache(cache: tuple[str, Path, Path]) -> None:
    _, _, file = cache
    file.write_bytes(b"cache")
    assert jvm_startup.cache_options(file, 21) == ()
    assert jvm_startup.cache_options(file, 25) == (f"-XX:AOTCache={file}",)


def test_extra_options_come_from_the_servers_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCHKIT_NESSIE_SERVER_JVM_OPTIONS", "-XX:TieredStopAtLevel=1 '-Dname=a b'")
    assert jvm_startup.java_options_from_env("LOCHKIT_NESSIE_SERVER_JVM_OPTIONS") == (
        "-XX:TieredStopAtLevel=1",
        "-Dname=a b",
    )
    monkeypatch.delenv("LOCHKIT_NESSIE_SERVER_JVM_OPTIONS")
    assert jvm_startup.java_options_from_env("LOCHKIT_NESSIE_SERVER_JVM_OPTIONS") == ()
