"""``lochkit serve`` on RocksDB checked with schemathesis against Nessie's own OpenAPI document: a
short run with a fixed seed (about half a minute). ``lochkit api-check`` runs the long one."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from conformance.api_check.figures import OperationFigures, RunFigures, format_markdown, format_text
from conformance.api_check.runner import EXPLAINED, SKIPPED, ApiCheck, base_of, v2_only
from lochkit.commands.api_check import served_fresh
from provisioning.base import ProvisioningFailed
from provisioning.servers import nessie_openapi
from provisioning.servers.nessie_openapi import nessie_openapi_document

SEED = 20261127
EXAMPLES = 8
SCHEMA = "response_schema_conformance"
AT = "(at /components/schemas/"
NAME_PATTERN = "^(?:[A-Za-z](?:(?:(?![.][.])[A-Za-z0-9./_-])*[A-Za-z0-9_-])?)|-$"
TREES, REF, ENTRIES, LOG = (
    "GET /v2/trees",
    "GET /v2/trees/{ref}",
    "GET /v2/trees/{ref}/entries",
    "GET /v2/trees/{ref}/history",
)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return nessie_openapi_document()


def test_lochkit_serve_on_rocksdb_answers_as_nessies_document_says(document: dict[str, Any]) -> None:
    started = time.monotonic()
    with served_fresh("rocksdb") as uri:
        figures = ApiCheck(uri, document, seed=SEED, examples=EXAMPLES).run()
    report = format_text(figures)
    print(f"{report}\n({time.monotonic() - started:.1f} s)")
    assert not figures.failures(), report
    for op in figures.operations.values():
        # The fixture's valid requests reach every operation's success answer.
        assert any(200 <= s < 300 for s in op.statuses), (op.label, report)
    reached, reachable = figures.documented_codes(reachable_only=True)
    assert reached >= reachable * 3 // 5, report  # the fixture lets most answers be reached


def test_only_the_v2_paths_are_checked(document: dict[str, Any]) -> None:
    restricted = v2_only(document)
    assert restricted["paths"], "Nessie's document describes the v2 API"
    assert all(path.startswith("/v2/") for path in restricted["paths"])
    assert any(path.startswith("/v1/") for path in document["paths"])  # left out, not absent
    operations = {f"{m.upper()} {p}" for p, item in restricted["paths"].items() for m in item}
    assert not operations & set(SKIPPED)
    assert "servers" not in restricted  # the base comes from the URI checked


def test_the_base_comes_from_a_v2_uri() -> None:
    assert base_of("http://127.0.0.1:19120/api/v2/") == "http://127.0.0.1:19120/api"
    with pytest.raises(ValueError, match="/api/v2"):
        base_of("http://127.0.0.1:19120/api/v1")


def test_a_document_that_cannot_be_fetched_says_why_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCHKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # no mvn
    with pytest.raises(ProvisioningFailed) as failed:
        nessie_openapi_document()
    message = str(failed.value)
    assert "cannot fetch Nessie's OpenAPI document" in message
    assert "Maven Central" in message
    assert nessie_openapi.MODEL_COORDINATES in message
    assert not nessie_openapi.cached_document_path().exists()


def test_a_server_holding_data_is_refused_and_keeps_it(
    served_inmemory: Callable[[], AbstractContextManager[str]],
) -> None:
    import requests

    with served_inmemory() as uri:
        head = requests.get(f"{uri}/trees/main", timeout=30).json()["reference"]["hash"]
        created = requests.post(
            f"{uri}/trees", params={"name": "theirs", "type": "BRANCH"},
            json={"type": "BRANCH", "name": "main", "hash": head}, timeout=30,
        )  # fmt: skip
        assert created.status_code == 200, created.text
        done = subprocess.run(
            [sys.executable, "-m", "lochkit", "api-check", "--uri", uri, "--examples", "1"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 2, done.stdout + done.stderr
        assert "refusing to check" in done.stderr, done.stderr
        assert "branch theirs" in done.stderr, done.stderr
        names = {r["name"] for r in requests.get(f"{uri}/trees", timeout=30).json()["references"]}
        assert names == {"main", "theirs"}


@pytest.mark.parametrize(
    ("operation", "check", "kind"),
    [
        ("POST /v2/trees/{branch}/history/merge", "status_code_conformance", "undocumented status 200"),
        ("GET /v2/trees", "status_code_conformance", "undocumented status 400"),
        (TREES, SCHEMA, f'null is not of type "string" {AT}ReferencesResponse_V2/properties/token)'),
        (ENTRIES, SCHEMA, f'null is not of type "object" (in IcebergTable_V2) {AT}Content_V2)'),
        (REF, SCHEMA, f'null is not of type "integer" (in ReferenceMetadata_V2) {AT}Reference_V2)'),
        (TREES, SCHEMA, f'value does not match "{NAME_PATTERN}" (in Branch_V2) {AT}Reference_V2)'),
        (LOG, SCHEMA, f'"allProperties" is a required property (in CommitMeta_V2) {AT}LogEntry_V2)'),
        ("GET /v2/trees/{ref}/contents", SCHEMA, f'"name" is a required property {AT}Reference_V2)'),
    ],
)  # fmt: skip
def test_what_nessies_own_server_also_answers_is_explained(operation: str, check: str, kind: str) -> None:
    assert any(e.explains(operation, check, kind) for e in EXPLAINED)


@pytest.mark.parametrize(
    ("operation", "check", "kind"),
    [
        ("GET /v2/trees/{ref}", "not_a_server_error", "Server error"),
        ("GET /v2/trees/{ref}", "status_code_conformance", "undocumented status 500"),
        ("GET /v2/trees/{ref}", "status_code_conformance", "undocumented status 409"),
        ("POST /v2/trees/{branch}/history/commit", "status_code_conformance", "undocumented status 200"),
        ("GET /v2/trees", SCHEMA, f'"name" is a required property (in Branch_V2) {AT}ReferencesResponse_V2)'),
        (TREES, SCHEMA, f'value does not match "^[0-9a-fA-F]{{8,64}}$" {AT}Reference_V2/properties/hash)'),
        ("GET /v2/trees", SCHEMA, f'1 is not of type "string" {AT}ReferencesResponse_V2/properties/token)'),
    ],
)  # fmt: skip
def test_anything_else_is_a_failure(operation: str, check: str, kind: str) -> None:
    assert not any(e.explains(operation, check, kind) for e in EXPLAINED)


def test_the_markdown_figures_name_every_operation_and_what_was_not_reached() -> None:
    op = OperationFigures("GET /v2/trees/{ref}", ("200", "400", "401", "404"), requests=3)
    op.statuses.update({200: 2, 400: 1})
    op.failures["status_code_conformance"] += 1
    op.kinds["status_code_conformance", "undocumented status 500"] += 1
    run = RunFigures("lochkit serve", 1, 2, operations={op.label: op}, skipped={"GET /v2/x": "why"})
    text = format_markdown(run)
    assert "| `GET /v2/trees/{ref}` | 3 | 200 (2), 400 (1) | 401, 404 |" in text
    assert "| `status_code_conformance` | 1 |" in text
    assert "Documented status codes reached: **2 of 4**" in text
    assert "`401`: needs authentication" in text
    assert "`404`: not reached by this run" in text
    assert "undocumented status 500" in text
    assert "`GET /v2/x`: why" in text
