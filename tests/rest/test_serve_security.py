"""``lochkit serve``'s authentication and TLS options as a user gives them: no open server on a
non-loopback address by accident, files checked before anything starts, tokens never shown."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

import pytest
import requests

from lochkit.cli import main
from lochkit.commands.serve_security import TOKENS_ENV
from provisioning.servers.process import free_port
from rest_server.authentication import digest

from .certificates import self_signed
from .serve_process import start_serve

SECRET = "serve-s3cret-token"


def _answers(url: str, cert: Path) -> bool:
    try:
        _ask(url, cert)
    except requests.ConnectionError:
        return False
    return True


def _ask(url: str, cert: Path, headers: dict[str, str] | None = None) -> tuple[int, str | None, str]:
    """Status, ``WWW-Authenticate`` and body of a GET trusting ``cert``. Each connection is closed
    on return: an idle TLS connection would hold the server's stop for asyncio's 30 s TLS
    shutdown timeout."""
    with requests.Session() as session:
        done = session.get(url, verify=str(cert), headers=headers, timeout=10)
        return done.status_code, done.headers.get("WWW-Authenticate"), done.text


def _trusted_without(cert: Path, url: str) -> bool:
    """Whether a client that was not given ``cert`` gets an answer. (Handled here, so the failed
    connection is closed on return: an open one would hold the server's graceful stop.)"""
    try:
        requests.get(url, timeout=10)
    except requests.exceptions.SSLError:
        return False
    return True


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    """Serving replaced by a record of the options it would serve with (it would not return)."""
    served: list[argparse.Namespace] = []

    def record(args: argparse.Namespace, *_: object) -> int:
        served.append(args)
        return 0

    monkeypatch.setattr("lochkit.commands.serve._serve", record)
    return served


def _serve(*argv: str) -> int:
    return main(["serve", "--backend", "inmemory", "--port", str(free_port()), *argv])


def test_a_non_loopback_address_without_authentication_is_refused_with_the_ways_out(
    opened: list[argparse.Namespace], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKENS_ENV, raising=False)
    assert _serve("--host", "0.0.0.0") == 2
    err = capsys.readouterr().err
    assert "--host 0.0.0.0 is reachable from other machines" in err
    for way_out in ("--auth-tokens-file FILE", TOKENS_ENV, "--jwt-issuer", "127.0.0.1", "--insecure-no-auth"):
        assert way_out in err
    assert not opened


def test_a_non_loopback_address_is_served_with_authentication_or_insecure_no_auth(
    opened: list[argparse.Namespace], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKENS_ENV, raising=False)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{SECRET} alice\n")
    assert _serve("--host", "0.0.0.0", "--insecure-no-auth") == 0
    assert _serve("--host", "0.0.0.0", "--auth-tokens-file", str(tokens)) == 0
    monkeypatch.setenv(TOKENS_ENV, f"sha256:{digest(SECRET)} alice")
    assert _serve("--host", "0.0.0.0") == 0
    assert len(opened) == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--jwt-issuer", "https://i"], "needs --jwt-issuer, --jwt-audience and --jwt-jwks together"),
        (["--tls-cert", "cert.pem"], "TLS needs both --tls-cert FILE and --tls-key FILE"),
        (["--insecure-no-auth", "--jwt-issuer", "i", "--jwt-audience", "a", "--jwt-jwks", "j"], "contradict"),
        (["--auth-tokens-file", "missing-tokens"], "--auth-tokens-file missing-tokens: cannot read it"),
        (["--tls-cert", "missing.pem", "--tls-key", "missing.pem"], "--tls-cert missing.pem: no such file"),
    ],
)
def test_security_options_that_cannot_work_are_usage_errors_before_anything_starts(
    argv: list[str],
    message: str,
    opened: list[argparse.Namespace],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _serve(*argv) == 2
    assert message in capsys.readouterr().err
    assert not opened


def test_a_certificate_that_is_not_one_is_named_with_the_fix(
    opened: list[argparse.Namespace], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cert, key = self_signed(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    assert _serve("--tls-cert", str(cert), "--tls-key", str(self_signed(other)[1])) == 2
    assert "are not a PEM certificate and its private key" in capsys.readouterr().err
    assert _serve("--tls-cert", str(cert), "--tls-key", str(key)) == 0


def test_a_bad_token_file_names_the_entry_but_never_the_token(
    opened: list[argparse.Namespace], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{SECRET}\n")
    assert _serve("--auth-tokens-file", str(tokens)) == 2
    out = capsys.readouterr()
    assert f"--auth-tokens-file {tokens}, entry 1" in out.err
    assert SECRET not in out.out + out.err


def test_serves_https_with_tokens_and_never_shows_one(tmp_path: Path) -> None:
    """The whole command: TLS on, a token file, a request with and without the token; the token is
    in no argument (process listings) and in no line the server prints."""
    cert, key = self_signed(tmp_path)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{SECRET} alice admin\n")
    port = free_port()
    argv = ["--backend", "inmemory", "--port", str(port), "--auth-tokens-file", str(tokens)]
    argv += ["--tls-cert", str(cert), "--tls-key", str(key)]
    url = f"https://127.0.0.1:{port}/api/v2/config"
    process = start_serve(argv, url, lambda u: _answers(u, cert))
    try:
        assert _ask(url, cert) == (401, "Bearer", "")
        assert _ask(url, cert, {"Authorization": f"Bearer {SECRET}"})[0] == 200
        assert not _trusted_without(cert, url)
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0]
    assert process.returncode == 0, output
    assert f"Nessie REST API v2 at https://127.0.0.1:{port}/api/v2" in output
    assert "bearer authentication: 1 static token(s)" in output
    assert SECRET not in output
    assert SECRET not in " ".join(argv)
