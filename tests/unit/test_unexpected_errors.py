"""Errors mean what they say. A command exits 2 only for input lochkit declares wrong (an
``InputError``); any exception nobody declared is a bug: logged at ERROR with its traceback and a
line asking for a report, exit 1. And the input checks raise ``InputError``, which is still a
``ValueError`` for callers that catch that."""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any, NoReturn

import pytest

from lochkit.cli import main
from persist_spi.errors import InputError, LochkitError
from persist_spi.exit_codes import FAILED, USAGE


def _python_value_error(*args: Any, **kwargs: Any) -> NoReturn:
    int("x")  # the bug: Python's own ValueError, not a declared input error
    raise AssertionError("not reached")


def _runtime_error(*args: Any, **kwargs: Any) -> NoReturn:
    raise RuntimeError("the bench fell over")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


#: A command line, and the function inside the command (module, name) the test breaks.
COMMANDS: dict[str, tuple[list[str], str, str]] = {
    "backends": (["backends"], "lochkit.commands.backends", "run"),
    "generate": (
        ["generate", "--backend", "inmemory", "-n", "1"],
        "lochkit.commands.content_generator",
        "_execute",
    ),
    "content-generator": (
        ["content-generator", "refs", "--backend", "inmemory"],
        "lochkit.commands.content_generator",
        "_execute",
    ),
    "experiment": (
        ["experiment", "asymmetric", "--backend", "inmemory", "--duration", "1s"],
        "lochkit.commands.experiment",
        "_asymmetric",
    ),
    "serve": (["serve", "--backend", "inmemory", "--port", "PORT"], "lochkit.commands.serve", "_serve"),
    "scenario": (["scenario", "commit-to-branch", "--dry-run"], "lochkit.commands.scenario", "locust_argv"),
}


def _argv(name: str) -> list[str]:
    return [str(_free_port()) if a == "PORT" else a for a in COMMANDS[name][0]]


@pytest.mark.parametrize(
    "bug", [_python_value_error, _runtime_error], ids=["python-value-error", "runtime-error"]
)
@pytest.mark.parametrize("name", COMMANDS)
def test_an_unexpected_error_in_a_command_exits_1_and_logs_its_traceback(
    name: str,
    bug: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    _, module, function = COMMANDS[name]
    monkeypatch.setattr(f"{module}.{function}", bug)
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.ERROR):
        code = main(_argv(name))
    assert code == FAILED, capsys.readouterr().err  # not USAGE: the user's command line was fine
    logged = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(logged) == 1, [r.getMessage() for r in caplog.records]
    message = logged[0].getMessage()
    assert message.startswith(f"lochkit {name}: unexpected error: ")
    assert "this is a bug" in message
    assert logged[0].exc_info is not None
    assert logged[0].exc_info[2] is not None  # the traceback the report needs
    assert "usage" not in capsys.readouterr().err.lower()


def test_a_declared_input_error_from_inside_a_command_is_still_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise InputError("--num-commits: must create at least one commit")

    monkeypatch.setattr("lochkit.commands.content_generator._execute", refuse)
    with caplog.at_level(logging.ERROR):
        assert main(["generate", "--backend", "inmemory", "-n", "1"]) == USAGE
    assert capsys.readouterr().err == "lochkit generate: --num-commits: must create at least one commit\n"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# --- the input checks raise InputError, still a ValueError --------------------------------------------


def _content_key() -> None:
    from persist_spi.versionstore.content import ContentKey

    ContentKey(("a", ""))


def _commit_spec() -> None:
    from persist_spi.versionstore.commit_specs import parse_commit_spec

    parse_commit_spec("not a spec!")


def _path_string() -> None:
    from persist_spi.versionstore.path_string import elements_from_path_string

    elements_from_path_string(".a*")


def _ref_path() -> None:
    from rest_server.ref_path import parse_ref_element

    parse_ref_element("@", "main")


def _commit_policy() -> None:
    from persist_spi.versionstore.policies import commit_policy

    commit_policy("no-such-policy")


def _keygen_function() -> None:
    from collections import deque

    from loadgen.keygen.functions import resolve

    resolve("no_such_function", deque())


def _generate_options() -> None:
    from loadgen.contentgen.generate import GenerateOptions

    GenerateOptions(num_commits=0).validate()


def _nessie_client_transplant() -> None:
    from nessie_client.client import NessieRestClient
    from persist_spi.versionstore.refs import branch

    NessieRestClient("http://127.0.0.1:1/api/v2").transplant(branch("main"), None, [])


INPUT_CHECKS = {
    "content key": _content_key,
    "commit spec": _commit_spec,
    "path string": _path_string,
    "REST reference path": _ref_path,
    "commit policy": _commit_policy,
    "key generator function": _keygen_function,
    "generate options": _generate_options,
    "Nessie client transplant": _nessie_client_transplant,
}


@pytest.mark.parametrize("check", INPUT_CHECKS.values(), ids=list(INPUT_CHECKS))
def test_input_checks_raise_input_errors_that_are_still_value_errors(check: Any) -> None:
    with pytest.raises(InputError) as raised:
        check()
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, LochkitError)


# --- what the REST model makes of each kind, both ways --------------------------------------------


def test_only_declared_input_errors_are_answered_400() -> None:
    from persist_spi.errors import CorruptData, ObjTooLarge
    from persist_spi.versionstore import nessie_json as nj

    assert nj.error_to_json(InputError("bad name"))[0] == 400
    assert nj.error_to_json(ObjTooLarge(10, 5))[0] == 400
    assert nj.error_to_json(ValueError("a bug"))[0] == 500
    assert nj.error_to_json(CorruptData("stored bytes do not decode"))[1]["message"] == (
        "stored bytes do not decode"  # declared: its own message, written for users
    )
    try:
        try:
            int("x")
        except ValueError as e:
            raise RuntimeError("while reading") from e
    except RuntimeError as e:
        status, body = nj.error_to_json(e)
    assert (status, body["errorCode"]) == (500, "UNKNOWN")
    assert body["message"] == (
        "RuntimeError: while reading, caused by ValueError: invalid literal for int() with base 10: 'x'"
    )


def test_a_client_gets_an_input_error_back_for_a_400() -> None:
    from persist_spi.versionstore import nessie_json as nj

    error = nj.error_from_json(400, {"errorCode": "BAD_REQUEST", "message": "Invalid reference 'x y'"})
    assert isinstance(error, InputError)
    assert str(error) == "Invalid reference 'x y'"
    server_side = nj.error_from_json(500, {"errorCode": "UNKNOWN", "message": "boom"})
    assert isinstance(server_side, nj.NessieServerError)


def test_stored_bytes_that_do_not_decode_are_corrupt_data_not_input() -> None:
    from persist_spi.errors import CorruptData
    from persist_spi.indexes.store_index import deserialize_index

    with pytest.raises(CorruptData) as raised:
        deserialize_index(b"")
    assert not isinstance(raised.value, InputError)
