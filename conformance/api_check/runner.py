"""The API check: Nessie's OpenAPI document, schemathesis's generated requests, a server's answers.

Every answer is checked by four of schemathesis's checks (:data:`~conformance.api_check.figures.CHECK_NAMES`):
no 5xx, a status code the document declares for the operation, a declared content type, and a body
that conforms to the declared schema. Only the REST API v2 paths of the document are used (lochkit
serves v2 only; the document also describes v1). Requests go to the server over HTTP, so any
server speaking Nessie's API can be checked, Nessie's own included.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Err
from schemathesis.openapi.checks import JsonSchemaError, UndefinedStatusCode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from conformance.api_check.borrow import borrow, valid_requests
from conformance.api_check.causes import leaf_messages
from conformance.api_check.figures import CHECK_NAMES, OperationFigures, RunFigures
from conformance.api_check.fixture import Fixture

_CHECKS: Final = dict(
    zip(
        CHECK_NAMES,
        (not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance),
        strict=True,
    )
)
#: Operations of the document not checked, and why.
_NOT_SERVED: Final = "repository configuration is not served by lochkit serve (a documented difference)"
SKIPPED: Final[dict[str, str]] = {
    "GET /v2/config/repository": _NOT_SERVED,
    "POST /v2/config/repository": _NOT_SERVED,
}


@dataclass(frozen=True)
class Explanation:
    """Failures that are not the server's: Nessie's document disagrees with Nessie's own server,
    which answers the same (each seen in a run against it), or a known difference of lochkit's.
    Matched on the operation (None: any), the check and the failure's kind (:func:`kinds_of`, a
    regular expression searched in it); counted apart from failures."""

    operation: str | None
    check: str
    kind: str
    reason: str

    def explains(self, operation: str, check: str, kind: str) -> bool:
        return (
            self.operation in (None, operation) and self.check == check and bool(re.search(self.kind, kind))
        )


_SCHEMA: Final = "response_schema_conformance"
_NULL: Final = r"^null is not (of type|valid under any)"
EXPLAINED: Final = (
    Explanation(
        "POST /v2/trees/{branch}/history/merge",
        "status_code_conformance",
        "undocumented status 200",
        "a merge: the document declares 204 (with the merge result as its body); Nessie's server "
        "answers 200, and so does lochkit serve",
    ),
    Explanation(
        "GET /v2/trees",
        "status_code_conformance",
        "undocumented status 400",
        "listing references with a filter that does not parse or a page token that is not one: "
        "the document declares no 400; Nessie's server answers 400",
    ),
    Explanation(
        "POST /v2/trees",
        "status_code_conformance",
        "undocumented status (400|404)",
        "creating a reference with a bad name or type (400) or from a missing reference (404): the "
        "document declares neither; Nessie's server answers them",
    ),
    Explanation(
        None,
        _SCHEMA,
        _NULL + r".*_V2/properties/token\)$",
        "'token': null on the last page: the document does not declare it nullable; Nessie's server sends it",
    ),
    Explanation(
        None,
        _SCHEMA,
        _NULL + r".*/schemas/Content_V2\)$",
        "'content': null (entries without content=true) and 'from' / 'to': null (a key added or "
        "removed in a diff): not declared nullable; Nessie's server sends them",
    ),
    Explanation(
        None,
        _SCHEMA,
        _NULL + r".*(MergeResponse_V2/properties/(commonAncestor|resultantTargetHash)"
        r"|CommitResponse_V2/properties/addedContents"
        r"|LogEntry_V2/properties/operations|ReferenceHistoryState_V2/properties/meta|/CommitMeta_V2)\)$",
        "'commonAncestor' (transplant), 'resultantTargetHash' (a dry run, or conflicts returned as "
        "the result), 'addedContents', a log entry's 'operations', a reference history entry's "
        "'meta': null, not declared nullable; Nessie's server sends null there",
    ),
    Explanation(
        None,
        _SCHEMA,
        _NULL + r".*\(in ReferenceMetadata_V2\)",
        "reference metadata (fetch=ALL) of the default branch: 'numCommitsAhead', "
        "'numCommitsBehind' and 'commonAncestorHash' null, not declared nullable; Nessie's server "
        "sends null there",
    ),
    Explanation(
        None,
        _SCHEMA,
        _NULL + r".*\(in Documentation_V2\)",
        "a PUT operation in a log entry (fetch=ALL) has 'documentation': null, not declared "
        "nullable; Nessie's server sends it",
    ),
    Explanation(
        None,
        _SCHEMA,
        r"^\"name\" is a required property \(at /components/schemas/Reference_V2\)$",
        "a detached reference ('@hash') has no name: the document requires one; Nessie's server sends none",
    ),
    Explanation(
        None,
        _SCHEMA,
        r"^\"allProperties\" is a required property",
        "commit meta without properties has no 'allProperties': the document requires it; "
        "Nessie's server leaves it out",
    ),
    Explanation(
        None,
        _SCHEMA,
        r'^value does not match "\^\(\?:\[A-Za-z\]',  # Nessie's pattern of reference names
        "a reference name outside Nessie's pattern: lochkit serve takes any name the store takes "
        "(a documented difference); Nessie's server refuses it",
    ),
)
_HEADERS: Final = {"Nessie-Client-Spec": "2"}
_TIMEOUT: Final = 60


def v2_only(document: dict[str, Any]) -> dict[str, Any]:
    """The document with only its REST API v2 paths, less the operations :data:`SKIPPED` names,
    its discriminators spelled out (:func:`_discriminated`)."""
    restricted = copy.deepcopy(document)
    for schema in restricted.get("components", {}).get("schemas", {}).values():
        _discriminated(schema)
    paths: dict[str, Any] = {}
    for path, item in document.get("paths", {}).items():
        if not path.startswith("/v2/"):
            continue
        kept = {m: o for m, o in item.items() if f"{m.upper()} {path}" not in SKIPPED}
        if any(m in kept for m in ("get", "put", "post", "delete")):
            paths[path] = copy.deepcopy(kept)
    restricted["paths"] = paths
    restricted.pop("servers", None)
    return restricted


def _discriminated(schema: dict[str, Any]) -> None:
    """A ``oneOf`` with a ``discriminator`` picks the alternative its property names (OpenAPI's
    rule); a JSON Schema validator knows no discriminators and finds a branch valid as a Branch and
    as a Tag (same fields), so "valid under more than one". Each alternative here also requires
    its own value of the property, which says the same in JSON Schema."""
    discriminator = schema.get("discriminator")
    if not isinstance(discriminator, dict) or "oneOf" not in schema or "mapping" not in discriminator:
        return
    name = discriminator["propertyName"]
    schema["oneOf"] = [
        {"allOf": [{"$ref": target}, {"required": [name], "properties": {name: {"enum": [value]}}}]}
        for value, target in discriminator["mapping"].items()
    ]


def base_of(uri: str) -> str:
    """The document's base from a REST API v2 URI: its paths start with ``/v2``."""
    uri = uri.rstrip("/")
    if not uri.endswith("/v2"):
        raise ValueError(f"'{uri}' is not a Nessie REST API v2 URI (it ends in /api/v2)")
    return uri[: -len("/v2")]


class ApiCheck:
    """One run against the server at ``uri`` (``http://HOST:PORT/api/v2``), which must hold
    nothing but its default branch: the run creates and changes references there."""

    def __init__(
        self,
        uri: str,
        document: dict[str, Any],
        *,
        seed: int,
        examples: int,
        target: str = "",
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.base = base_of(uri)
        self.schema = schemathesis.openapi.from_dict(v2_only(document))
        self.seed = seed
        self.examples = examples
        self.session = requests.Session()
        self.fixture = Fixture(uri.rstrip("/"), self.session)
        self.figures = RunFigures(target or uri, seed, examples, skipped=dict(SKIPPED))
        self._progress = progress or (lambda _: None)

    def run(self) -> RunFigures:
        started = time.monotonic()
        self.fixture.create()
        for result in self.schema.get_all_operations():
            if isinstance(result, Err):  # an operation the document describes wrongly
                raise result.err()
            operation = result.ok()
            label = f"{operation.method.upper()} {operation.path}"
            documented = tuple(str(code) for code in operation.definition.raw.get("responses", {}))
            figures = self.figures.operations[label] = OperationFigures(label, documented)
            self._progress(label)
            self.fixture.refresh()
            for request in valid_requests(operation.path, operation.method.upper(), self.fixture):
                given = {"path_parameters": request.get("path"), "query": request.get("query")}
                if "body" in request:
                    given["body"] = request["body"]
                case = operation.Case(**given)
                self._send(operation, case, figures)
            self._generated(operation, figures)
        self.figures.seconds = time.monotonic() - started
        return self.figures

    def _generated(self, operation: Any, figures: OperationFigures) -> None:
        path, method = operation.path, operation.method.upper()

        @hypothesis_seed(self.seed)
        @settings(
            max_examples=self.examples,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
        )
        @given(case=operation.as_strategy(), data=st.data())
        def generated(case: Any, data: st.DataObject) -> None:
            borrow(path, method, case, data, self.fixture)
            self._send(operation, case, figures)

        generated()

    def _send(self, operation: Any, case: Any, figures: OperationFigures) -> None:
        figures.requests += 1
        try:
            response = case.call(base_url=self.base, session=self.session, headers=_HEADERS, timeout=_TIMEOUT)
        except requests.RequestException as e:
            self._failed(figures, "not_a_server_error", "no answer", f"no answer: {e}\n{self._curl(case)}")
            return
        figures.statuses[response.status_code] += 1
        for name, check in _CHECKS.items():
            try:
                case.validate_response(response, checks=[check], headers=_HEADERS)
            except FailureGroup as group:
                for failure in group.exceptions:
                    for kind in kinds_of(failure):
                        known = next((e for e in EXPLAINED if e.explains(figures.label, name, kind)), None)
                        if known is not None:
                            figures.explained[known.reason] += 1
                        else:
                            text = f"{failure.title}: {failure.message}\n{self._curl(case)}"
                            self._failed(figures, name, kind, text)
        if case.method.upper() != "GET" and response.status_code < 300:
            self.fixture.refresh()  # a write may have moved or removed the fixture's references

    def _curl(self, case: Any) -> str:
        return str(case.as_curl_command(headers=_HEADERS, base_url=self.base))

    @staticmethod
    def _failed(figures: OperationFigures, check: str, kind: str, text: str) -> None:
        figures.failures[check] += 1
        figures.kinds[check, kind] += 1
        figures.first_failure.setdefault((check, kind), text)


def kinds_of(failure: Any) -> list[str]:
    """What failed, in words that are the same for every answer failing the same way: one kind,
    or for a body failing a ``oneOf`` / ``anyOf`` the causes inside it (:mod:`.causes`)."""
    if isinstance(failure, UndefinedStatusCode):
        return [f"undocumented status {failure.status_code}"]
    if isinstance(failure, JsonSchemaError):
        where = re.search(r"Schema at (\S+):", str(failure.message))  # the document's own path
        path = where.group(1) if where else "/".join(str(p) for p in failure.schema_path)
        return [f"{message} (at {path})" for message in leaf_messages(failure)]
    return [str(failure.title)]


__all__ = ["EXPLAINED", "SKIPPED", "ApiCheck", "Explanation", "base_of", "kinds_of", "v2_only"]
