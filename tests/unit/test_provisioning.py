"""How the conformance plugin obtains a server: the order of methods, and the messages a user
sees when none works. No Docker engine answers on the project's machines, so the testcontainers
path is exercised here up to the point where the engine is asked."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from persist_spi.registry import backend_factory
from provisioning import base, registry
from provisioning.base import Provisioned, ProvisioningFailed, ServerProvisioner, redact
from provisioning.registry import provision
from provisioning.servers.versions import IMAGES

SERVER_BACKENDS = ["postgres", "cockroachdb", "mongodb", "cassandra", "scylladb", "dynamodb"]


@pytest.fixture
def no_docker_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Points the Docker client at a port nothing listens on, and hides any docker CLI."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{port}")
    monkeypatch.setenv("PATH", "")


class Recording(ServerProvisioner):
    backends = ("postgres",)

    def __init__(self, fail_with: Exception | None = None) -> None:
        self.calls: list[str] = []
        self.fail_with = fail_with

    def testcontainers(self, backend: str, workdir: Path) -> Provisioned:
        self.calls.append("testcontainers")
        if self.fail_with is not None:
            raise self.fail_with
        return Provisioned(backend, "postgresql://h/d", "testcontainers")

    def local_process(self, backend: str, workdir: Path) -> Provisioned:
        self.calls.append("local")
        return Provisioned(backend, "postgresql://h/d", "local-process")


def _provision(backend: str, tmp_path: Path, method: str = "auto", **urls: str) -> Provisioned:
    return provision(backend, backend_factory(backend), urls=urls, method=method, workdir=tmp_path)


def test_an_address_given_by_option_wins(tmp_path: Path) -> None:
    got = _provision("postgres", tmp_path, postgres="postgresql://u:pw@db:5432/x")
    assert (got.method, got.url) == ("external", "postgresql://u:pw@db:5432/x")
    assert "pw" not in got.describe()


def test_an_address_given_by_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCHKIT_DYNAMODB_URL", "dynamodb://127.0.0.1:8000?region=us-west-2")
    assert _provision("dynamodb", tmp_path).method == "external"


def test_forcing_external_without_an_address_says_how_to_give_one(tmp_path: Path) -> None:
    with pytest.raises(
        ProvisioningFailed, match=r"--backend-url postgres=URL \(or set LOCHKIT_POSTGRES_URL\)"
    ):
        _provision("postgres", tmp_path, method="external")


@pytest.mark.parametrize("backend", ["inmemory", "rocksdb"])
def test_embedded_backends_need_nothing(backend: str, tmp_path: Path) -> None:
    got = _provision(backend, tmp_path)
    assert (got.method, got.url) == ("embedded", None)


def test_an_unknown_method_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProvisioningFailed, match="use one of auto, external, testcontainers, local"):
        _provision("postgres", tmp_path, method="kubernetes")


@pytest.mark.parametrize(("engine", "expected"), [(True, "testcontainers"), (False, "local")])
def test_auto_uses_containers_only_when_an_engine_answers(
    engine: bool, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = Recording()
    monkeypatch.setattr(registry, "provisioners", lambda: {"postgres": recording})
    monkeypatch.setattr(base, "docker_engine_available", lambda: engine)
    _provision("postgres", tmp_path)
    assert recording.calls == [expected]


def test_a_recipe_failing_inside_the_docker_client_becomes_one_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = Recording(fail_with=ConnectionError("socket closed"))
    monkeypatch.setattr(registry, "provisioners", lambda: {"postgres": recording})
    with pytest.raises(ProvisioningFailed) as e:
        _provision("postgres", tmp_path, method="testcontainers")
    message = str(e.value)
    assert f"could not start {IMAGES['postgres']} (ConnectionError: socket closed)" in message
    assert "--provision local" in message


@pytest.mark.usefixtures("no_docker_engine")
def test_without_an_engine_auto_does_not_choose_containers() -> None:
    assert base.docker_engine_available() is False


@pytest.mark.usefixtures("no_docker_engine")
@pytest.mark.parametrize("backend", [*SERVER_BACKENDS, "bigtable"])
def test_forcing_testcontainers_without_an_engine_names_the_image_and_the_fix(
    backend: str, tmp_path: Path
) -> None:
    # No factory: Bigtable's (whose client is an extra of its own) is not needed to reach the engine.
    with pytest.raises(ProvisioningFailed) as e:
        provision(backend, None, urls={}, method="testcontainers", workdir=tmp_path)
    message = str(e.value)
    assert message.startswith(f"{backend}: ")
    assert IMAGES[backend] in message
    assert "Docker engine" in message


def test_redact_hides_only_the_password() -> None:
    assert redact("postgresql://u:secret@h:5432/d?x=1") == "postgresql://u:***@h:5432/d?x=1"
    assert redact("cassandra://h:9042/ks") == "cassandra://h:9042/ks"
    assert redact("http://[::1") == "<unparseable url>"


def test_toxiproxy_status_is_its_version_once_built_else_the_go_that_builds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from provisioning.servers import toxiproxy

    monkeypatch.setenv("LOCHKIT_CACHE", str(tmp_path))
    before = toxiproxy.PROVISIONER.local_status("toxiproxy")
    assert before.installed is None
    assert [need.what for need in before.needs] == [
        "Go 1.23 or newer (builds Toxiproxy from the Go module proxy)"
    ]
    assert not any(tmp_path.iterdir())  # asking created nothing in the cache

    binary = toxiproxy.toxiproxy_binary()
    binary.parent.mkdir(parents=True)
    binary.write_text(f"#!/bin/sh\necho 'toxiproxy-server version {toxiproxy.VERSION.lstrip('v')}'\n")
    binary.chmod(0o755)
    after = toxiproxy.PROVISIONER.local_status("toxiproxy")
    assert after.installed == f"Toxiproxy {toxiproxy.VERSION} at {binary}"
    assert after.needs == ()


def test_a_server_declared_not_restartable_is_refused_with_the_reason(tmp_path: Path) -> None:
    from provisioning.servers import bigtable

    with pytest.raises(ProvisioningFailed) as e:
        bigtable.PROVISIONER.restartable_process("bigtable", tmp_path)
    assert str(e.value) == (
        f"bigtable: its local server cannot be restarted on its data: {bigtable.NOT_RESTARTABLE}"
    )
    assert not any(tmp_path.iterdir())  # refused before anything started
