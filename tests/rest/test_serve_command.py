"""``lochkit serve`` as a user runs it: usage errors say what to do (exit code 2), the server
answers Nessie's config, and SIGTERM stops it cleanly."""

from __future__ import annotations

import argparse
import json
import signal
import socket
from pathlib import Path

import pytest
import requests

from loadgen.targets import Target
from lochkit.cli import build_parsers, main
from nessie_client import NessieRestClient
from persist_spi.versionstore.content import ContentKey, Namespace
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.policies import commit_policy
from persist_spi.versionstore.refs import branch

from .certificates import self_signed
from .serve_process import start_serve


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "name the backend to serve: --backend NAME"),
        (["--backend", "nessie"], "--backend nessie names a Nessie server"),
        (["--backend", "inmemory", "--port", "0"], "--port 0 is not a TCP port"),
    ],
)
def test_usage_errors_are_exit_code_2_with_the_fix(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("nessie_option", [["--uri", "http://127.0.0.1:19120/api/v2"], ["-o", "k=v"]])
def test_nessie_server_options_are_not_offered(
    nessie_option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--backend", "inmemory", *nessie_option])
    assert exited.value.code == 2
    assert f"unrecognized arguments: {' '.join(nessie_option)}" in capsys.readouterr().err


def _serve_options() -> list[argparse.Action]:
    """The options ``lochkit serve --help`` lists."""
    parser = build_parsers()[1]["serve"]
    return [
        a for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS and a.dest != "help"
    ]


def _values_to_try(action: argparse.Action, tmp_path: Path) -> list[list[str]]:
    """Arguments that use ``action``: each of its choices, or a sample value a user would give."""
    if action.nargs == 0:
        return [[]]
    if action.choices:
        return [[str(choice)] for choice in action.choices]
    samples = {
        "backend": ["inmemory", "rocksdb"],
        "url": [str(tmp_path / "db")],
        "host": ["127.0.0.1", "localhost"],
        "port": [str(_free_port())],
        "repository": ["", "catalog"],
        "max_body_size": ["1048576", "20MiB", "0"],
        "max_decompressed_size": ["64MiB", "0"],
        "max_keys": ["100", "0"],
        "max_page_size": ["500", "0"],
        "body_timeout": ["10s", "0"],
        "read_timeout": ["2m", "0"],
        "max_concurrent_requests": ["50", "0"],
        "keep_alive_timeout": ["30"],
        "header_timeout": ["20s", "0"],
        "max_header_size": ["64KiB"],
        "auth_tokens_file": [str(_token_file(tmp_path))],
        "jwt_issuer": ["https://issuer.example"],
        "jwt_audience": ["nessie"],
        "jwt_jwks": [str(_jwks_file(tmp_path))],
        "jwt_roles_claim": ["roles"],
        "tls_cert": [str(tmp_path / "cert.pem")],  # written by _companions
        "tls_key": [str(tmp_path / "key.pem")],
        "authorization_rules": [str(_rules_file(tmp_path))],
    }
    assert action.dest in samples, f"no sample value for {action.option_strings}: add one here"
    return [[value] for value in samples[action.dest]]


def _token_file(tmp_path: Path) -> Path:
    (tmp_path / "tokens").write_text("a-token alice\n")
    return tmp_path / "tokens"


def _jwks_file(tmp_path: Path) -> Path:
    from .auth_cases import jwks, signing_key

    (tmp_path / "jwks.json").write_text(json.dumps(jwks(signing_key())))
    return tmp_path / "jwks.json"


def _companions(action: argparse.Action, tmp_path: Path) -> dict[str, list[str]]:
    """The options an option only works with (JWT settings go together, TLS files in pairs)."""
    if action.dest.startswith("jwt_"):
        jwks = str(_jwks_file(tmp_path))
        return {"--jwt-issuer": ["https://i"], "--jwt-audience": ["a"], "--jwt-jwks": [jwks]}
    if action.dest.startswith("tls_"):
        cert, key = self_signed(tmp_path)
        return {"--tls-cert": [str(cert)], "--tls-key": [str(key)]}
    return {}


def _rules_file(tmp_path: Path) -> Path:
    rules = tmp_path / "rules.properties"
    rules.write_text("nessie.server.authorization.rules.all=true\n", encoding="utf-8")
    return rules


def test_every_option_serve_offers_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every option in ``serve --help``, with each of its choices, passes serve's checks and opens
    the backend (serving itself is replaced: it would not return)."""
    served: list[object] = []

    def opened(args: argparse.Namespace, target: object, policy: str, *_: object) -> int:
        served.append(target)
        return 0

    monkeypatch.setattr("lochkit.commands.serve._serve", opened)
    monkeypatch.chdir(tmp_path)  # rocksdb without --url keeps its data under .lochkit here
    base = {"--backend": ["rocksdb"], "--url": [str(tmp_path / "base")], "--port": [str(_free_port())]}
    tried = 0
    for action in _serve_options():
        option = action.option_strings[-1]
        for values in _values_to_try(action, tmp_path):
            given = {**base, **_companions(action, tmp_path), option: values}
            if given["--backend"] == ["inmemory"]:  # its data lives in the process: no --url
                del given["--url"]
            argv = [word for name, value in given.items() for word in (name, *value)]
            assert main(["serve", *argv]) == 0, argv
            tried += 1
    assert len(served) == tried > len(_serve_options())


@pytest.mark.parametrize(("argv", "expected"), [([], "nessie"), (["--policy", "coordinated"], "coordinated")])
def test_the_served_store_commits_under_the_policy_asked_for(
    argv: list[str], expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    applied: list[tuple[str, object]] = []

    def opened(args: argparse.Namespace, target: Target, policy: str, *_: object) -> int:
        applied.append((policy, target.api.policy))  # type: ignore[attr-defined]
        return 0

    monkeypatch.setattr("lochkit.commands.serve._serve", opened)
    base = ["serve", "--backend", "rocksdb", "--url", str(tmp_path / "db"), "--port", str(_free_port())]
    assert main([*base, *argv]) == 0
    [(policy, store_policy)] = applied
    assert policy == expected
    assert isinstance(store_policy, type(commit_policy(expected)))


def test_a_port_in_use_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--backend", "inmemory", "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_an_unknown_backend_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--backend", "inmemroy", "--port", str(_free_port())]) == 2
    assert "inmemroy" in capsys.readouterr().err


def test_serves_until_sigterm_and_stops_cleanly(tmp_path: Path) -> None:
    port = _free_port()
    served = ["--backend", "rocksdb", "--url", str(tmp_path / "db"), "--port", str(port), "--policy", "group"]
    process = start_serve(served, f"http://127.0.0.1:{port}/api/v2/config")
    try:
        config = requests.get(f"http://127.0.0.1:{port}/api/v2/config", timeout=10).json()
        assert config["defaultBranch"] == "main"
        # A client's commit lands through the group policy's one compare-and-swap.
        with NessieRestClient(f"http://127.0.0.1:{port}/api/v2") as client:
            main_branch = branch("main")
            before = client.reference(main_branch).hash
            namespace = Put(ContentKey.of("ns"), Namespace(elements=("ns",)))
            client.commit(main_branch, before, CommitMeta("through serve"), [namespace])
            assert client.reference(main_branch).hash != before
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0]
    assert process.returncode == 0, output
    assert f"Nessie REST API v2 at http://127.0.0.1:{port}/api/v2" in output
    assert ", commit policy group" in output
    assert "rocksdb" in output


def test_serve_enforces_an_authorization_rules_file(tmp_path: Path) -> None:
    port = _free_port()
    rules = tmp_path / "rules.properties"
    rules.write_text(
        "# only the commit log of main, for everyone\n"
        "nessie.server.authorization.rules.log=\\\n"
        "    op in ['VIEW_REFERENCE', 'LIST_COMMIT_LOG'] && ref == 'main'\n",
        encoding="utf-8",
    )
    served = ["--backend", "rocksdb", "--url", str(tmp_path / "db"), "--port", str(port)]
    uri = f"http://127.0.0.1:{port}/api/v2"
    process = start_serve([*served, "--authorization-rules", str(rules)], f"{uri}/config")
    try:
        assert requests.get(f"{uri}/trees/main/history", timeout=10).status_code == 200
        refused = requests.get(f"{uri}/trees/main/entries", timeout=10)
        assert refused.status_code == 403
        assert refused.json()["message"] == "'READ_ENTRIES' is not allowed for role '' on reference 'main'"
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=30)[0]
    assert f"authorization: 1 rule from {rules}" in output
