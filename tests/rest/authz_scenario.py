"""One sequence of requests under fixed authorization rules, sent by an anonymous caller (a server
without authentication), and its answers with hashes and content ids replaced by placeholders:
recorded from the real Nessie server into :data:`RECORDED` by ``python -m tests.rest.authz_scenario``
(which starts Nessie 0.99 with :data:`RULES`, as ``lochkit servers start nessie`` does, and stops
it), and compared with lochkit's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

import requests

from tests.rest.authz_harness import TABLE, VIEW, delete, put

RECORDED: Final = Path(__file__).with_name("data") / "authorization_nessie_0.99.json"
#: The rules, as ``nessie.server.authorization.rules.<name>`` properties.
RULES: Final = {
    "refs": "op in ['VIEW_REFERENCE', 'COMMIT_CHANGE_AGAINST_REFERENCE', 'CREATE_REFERENCE', "
    "'READ_ENTRIES', 'LIST_COMMIT_LOG'] && ref != 'hidden'",
    "create_ok": "op == 'CREATE_ENTITY' && path.startsWith('ok')",
    "delete_ok": "op == 'DELETE_ENTITY' && path.startsWith('ok') && contentType == 'ICEBERG_TABLE'",
    "hidden": "op == 'CREATE_REFERENCE' && ref == 'hidden'",
    "read_ok": "op in ['READ_CONTENT_KEY', 'READ_ENTITY_VALUE'] && path == 'ok1'",
    "dev": "ref == 'dev'",
}
_HASH = re.compile(r"\b[0-9a-f]{64}\b")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_VOLATILE = ("commitTime", "authorTime", "serverStackTrace")


def nessie_properties() -> dict[str, str]:
    """How Nessie's server is started for the scenario: in memory, with :data:`RULES` enforced."""
    properties = {"nessie.version.store.type": "IN_MEMORY", "nessie.server.authorization.enabled": "true"}
    return properties | {f"nessie.server.authorization.rules.{n}": e for n, e in RULES.items()}


def properties_text() -> str:
    return "".join(f"nessie.server.authorization.rules.{n}={e}\n" for n, e in RULES.items())


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, str):
        return _UUID.sub("ID", _HASH.sub("HASH", value))
    return value


def run(uri: str) -> list[dict[str, Any]]:
    """The scenario's answers (``what``, ``status``, normalised ``body``) from the server at ``uri``."""
    answers: list[dict[str, Any]] = []

    def call(what: str, method: str, path: str, body: Any = None, **params: Any) -> Any:
        response = requests.request(method, f"{uri}{path}", json=body, params=params, timeout=60)
        doc = response.json()
        answers.append({"what": what, "status": response.status_code, "body": _normal(doc)})
        return doc

    def head(ref: str) -> str:
        return str(requests.get(f"{uri}/trees/{ref}", timeout=60).json()["reference"]["hash"])

    def commit(what: str, ref: str, *operations: dict[str, Any]) -> Any:
        body = {"commitMeta": {"message": what}, "operations": list(operations)}
        return call(what, "POST", f"/trees/{ref}@{head(ref)}/history/commit", body)

    main = head("main")
    call(
        "create hidden from main",
        "POST",
        "/trees",
        {"type": "BRANCH", "name": "main", "hash": main},
        name="hidden",
        type="BRANCH",
    )
    call(
        "create open from main",
        "POST",
        "/trees",
        {"type": "BRANCH", "name": "main", "hash": main},
        name="open",
        type="BRANCH",
    )
    call("get hidden", "GET", "/trees/hidden")
    call("list references", "GET", "/trees")
    commit("create ok1, ok2", "main", put("ok1"), put("ok2"))
    commit("create nope", "main", put("nope"))
    commit("create ok3, nope, nope2", "main", put("ok3"), put("nope"), put("nope2"))
    call("entries of main", "GET", "/trees/main/entries")
    updated = {**TABLE, "snapshotId": 99}
    contents = requests.get(f"{uri}/trees/main/contents/ok1", timeout=60).json()
    if "content" in contents:
        updated["id"] = contents["content"]["id"]
    commit("update ok1", "main", put("ok1", content=updated))
    commit("delete ok2", "main", delete("ok2"))
    call("read ok1", "GET", "/trees/main/contents/ok1")
    call("read missing", "GET", "/trees/main/contents/missing")
    call("read several", "GET", "/trees/main/contents", key=["ok1", "ok3"])
    call("read ok1 for write", "GET", "/trees/main/contents/ok1", **{"for-write": "true"})
    call("read missing okZ for write", "GET", "/trees/main/contents/okZ", **{"for-write": "true"})
    call("read several for write", "GET", "/trees/main/contents", key=["okZ", "ok1"], **{"for-write": "true"})
    call("log with operations", "GET", "/trees/main/history", fetch="ALL")
    call("log of hidden", "GET", "/trees/hidden/history")
    call("entries of hidden", "GET", "/trees/hidden/entries")
    call("diff main to hidden", "GET", "/trees/main/diff/hidden")
    call("diff open to main", "GET", "/trees/open/diff/main")
    call("delete hidden", "DELETE", f"/trees/hidden@{main}")
    call(
        "assign open to hidden",
        "PUT",
        f"/trees/open@{main}",
        {"type": "BRANCH", "name": "hidden", "hash": main},
    )
    call(
        "merge hidden into main",
        "POST",
        f"/trees/main@{head('main')}/history/merge",
        {"fromRefName": "hidden", "fromHash": main},
    )
    call(
        "transplant from hidden",
        "POST",
        f"/trees/open@{main}/history/transplant",
        {"fromRefName": "hidden", "hashesToTransplant": [head("main")]},
    )
    # Merged and transplanted keys: created (allowed), updated and deleted (refused) on main.
    commit("create okA, okV", "main", put("okA"), put("okV", content=VIEW))
    main = head("main")
    call(
        "create dev",
        "POST",
        "/trees",
        {"type": "BRANCH", "name": "main", "hash": main},
        name="dev",
        type="BRANCH",
    )
    ok_a = requests.get(f"{uri}/trees/dev/contents/okA", timeout=60).json()["content"]
    commit("change dev", "dev", put("okNew"), put("okA", content={**ok_a, "snapshotId": 5}), delete("okV"))
    dev = head("dev")
    commit("create nope3, delete okV", "main", put("nope3"), delete("okV"))
    call(
        "merge dev into main",
        "POST",
        f"/trees/main@{main}/history/merge",
        {"fromRefName": "dev", "fromHash": dev},
    )
    transplant = {"fromRefName": "dev", "hashesToTransplant": [dev]}
    call("transplant from dev", "POST", f"/trees/main@{main}/history/transplant", transplant)
    # A rename updates the new key; a key deleted and added again is created.
    commit("rename okA to okR", "main", delete("okA"), put("okR", content=ok_a))
    commit("re-add okA", "main", delete("okA"), put("okA"))
    return answers


def record() -> None:
    from provisioning.servers.nessie import start_server
    from provisioning.workdir import workdir

    with workdir("nessie-authz") as where:
        nessie = start_server(where, nessie_properties())
        try:
            answers = run(nessie.url or "")
        finally:
            nessie.stop()
    RECORDED.parent.mkdir(exist_ok=True)
    RECORDED.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(answers)} answers recorded in {RECORDED}")


if __name__ == "__main__":
    record()
