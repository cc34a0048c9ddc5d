"""lochkit's own Nessie client sends a bearer token from ``NESSIE_AUTHENTICATION_TOKEN`` or
``--token-file``: ``lochkit generate --uri`` against a ``lochkit serve`` that wants one succeeds
with it, and without it (or with a wrong one) fails saying how to give one."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.inmemory import InMemoryBackendFactory
from loadgen.targets.in_process import in_process_target
from lochkit.cli import main
from nessie_client import NessieRestClient
from nessie_client.credentials import TOKEN_ENV, with_token
from persist_spi.errors import BackendAuthenticationFailed
from persist_spi.ids import EMPTY_OBJ_ID
from rest_server import BackgroundServer, create_app
from rest_server.authentication import Authentication, parse_tokens

TOKEN = "client-s3cret-token"


@contextlib.contextmanager
def _authenticated_server() -> Iterator[str]:
    with in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    ) as target:
        api = target.api
        authentication = Authentication(tokens=parse_tokens(f"{TOKEN} loader", "test"))
        with BackgroundServer(create_app(lambda: api, authentication=authentication)) as server:
            yield server.uri


@pytest.fixture(scope="module")
def uri() -> Iterator[str]:
    with _authenticated_server() as uri:
        yield uri


def _generate(uri: str, *extra: str) -> int:
    return main(["generate", "--uri", uri, "-n", "2", *extra])


def test_generate_sends_the_token_from_the_environment(
    uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert _generate(uri) == 0, capsys.readouterr()
    with NessieRestClient(uri) as client:  # the environment's token here too
        assert client.named_ref("main").hash != EMPTY_OBJ_ID
    out = capsys.readouterr()
    assert TOKEN not in out.out + out.err
    assert not any(TOKEN in path.read_text(errors="replace") for path in tmp_path.rglob("*.json"))


def test_generate_sends_the_token_from_a_file(
    uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    token_file = tmp_path / "token"
    token_file.write_text(f"{TOKEN}\n")
    assert _generate(uri, "--token-file", str(token_file)) == 0, capsys.readouterr()


@pytest.mark.parametrize(
    ("token", "problem"), [(None, "no token was sent"), ("wrong", "rejected the bearer token")]
)
def test_generate_without_a_valid_token_fails_naming_the_fix(
    token: str | None,
    problem: str,
    uri: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    if token is None:
        monkeypatch.delenv(TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(TOKEN_ENV, token)
    assert _generate(uri) == 1
    err = capsys.readouterr().err
    assert problem in err
    assert f"Give a valid token in the {TOKEN_ENV} environment variable or with --token-file FILE" in err
    assert "Traceback" not in err


def test_the_client_says_what_a_401_means(uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with NessieRestClient(uri) as client, pytest.raises(BackendAuthenticationFailed, match="401"):
        client.config()


def test_options_win_over_the_environment_and_a_token_alone_means_bearer() -> None:
    environ = {TOKEN_ENV: "from-env"}
    assert with_token({}, environ) == {
        "nessie.authentication.type": "BEARER",
        "nessie.authentication.token": "from-env",
    }
    assert with_token({"nessie.authentication.type": "NONE"}, environ) == {
        "nessie.authentication.type": "NONE"
    }
    assert with_token({"nessie.authentication.token": "t"}, {})["nessie.authentication.type"] == "BEARER"


def test_a_token_file_is_refused_for_a_lochkit_backend(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["generate", "--backend", "inmemory", "--token-file", str(tmp_path / "t"), "-n", "1"]) == 2
    assert "--token-file is a Nessie server's token" in capsys.readouterr().err
