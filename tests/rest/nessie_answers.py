"""A fixed sequence of REST v2 requests whose answers must be shaped exactly like Nessie's, and the
recorder of Nessie's answers to it.

The sequence exercises what a client reads field by field: commit meta with and without authors,
sign-offs and properties, in logs and in reference metadata; commits that add no content; log
entries of commits with only ``UNCHANGED`` operations; merge and transplant results (dry runs, with
and without conflicts, nothing to commit); a commit with several conflicts; a re-created key
transplanted onto a branch that has it already; entries, contents, diffs, configuration and errors.

Each answer is kept normalised: every commit hash and content id becomes a label numbered in order
of first appearance, and server times become ``<time>``, so two servers' answers compare as JSON
text, with the order of object keys. ``tests/rest/data/nessie-answers.json`` holds Nessie's answers;
re-record them (Java 21+, the Nessie runner jar, about a minute) with::

    python -m tests.rest.nessie_answers

(``--url URL`` records from a running, empty Nessie server instead of starting one).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import requests

RECORDING = Path(__file__).parent / "data" / "nessie-answers.json"
SPEC2 = {"Nessie-Client-Spec": "2"}
EMPTY = "2e1cfa82b035c26cbbbdae632cea070514eb8b773f616aaeaf668e2f0be8f10d"

_HASH = re.compile(r"\b[0-9a-f]{64}\b")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
#: Times the sequence sends itself: kept, as both servers must echo them.
_GIVEN_TIMES = frozenset({"2020-01-01T00:00:00Z"})


class Labels:
    """Hashes and content ids renamed by order of first appearance, one numbering per run."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {EMPTY: "hash-empty"}

    def _label(self, prefix: str, value: str) -> str:
        if value not in self.names:
            self.names[value] = f"{prefix}-{sum(n.startswith(prefix) for n in self.names.values()) + 1}"
        return self.names[value]

    def text(self, value: str) -> str:
        if _TIME.match(value):
            return value if value in _GIVEN_TIMES else "<time>"
        value = _HASH.sub(lambda m: self._label("hash", m.group()), value)
        return _UUID.sub(lambda m: self._label("id", m.group()), value)

    def json(self, doc: Any) -> Any:
        if isinstance(doc, dict):
            return {k: self.json(v) for k, v in doc.items()}
        if isinstance(doc, list):
            return [self.json(v) for v in doc]
        return self.text(doc) if isinstance(doc, str) else doc


class Session:
    """Sends the sequence's requests to one server and keeps each normalised answer."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.labels = Labels()
        self.answers: list[dict[str, Any]] = []

    def send(self, label: str, method: str, path: str, body: Any = None, **params: Any) -> Any:
        response = requests.request(
            method, self.base + path, json=body, params=params or None, headers=SPEC2, timeout=60
        )
        doc = response.json() if response.content else None
        self.answers.append(
            {
                "name": label,
                "request": self.labels.json({"method": method, "path": path, "params": params, "body": body}),
                "status": response.status_code,
                "answer": self.labels.json(doc),
            }
        )
        return doc

    def head(self, ref: str = "main") -> str:
        """The head of ``ref`` (read without being recorded)."""
        doc = requests.get(f"{self.base}/trees/{ref}", headers=SPEC2, timeout=60).json()
        return str(doc["reference"]["hash"])

    def commit(
        self, name: str, ref: str, *operations: dict[str, Any], expected: str | None = None, **meta: Any
    ) -> Any:
        body = {"commitMeta": {"message": name, **meta}, "operations": list(operations)}
        return self.send(name, "POST", f"/trees/{ref}@{expected or self.head(ref)}/history/commit", body)

    def branch(self, name: str, at: str, kind: str = "BRANCH", label: str | None = None) -> Any:
        """Create branch (or tag) ``name`` at commit ``at`` of main."""
        return self.send(label or f"create {name}", "POST", "/trees", main_at(at), name=name, type=kind)


def main_at(hash_: str) -> dict[str, Any]:
    """The reference document naming main at ``hash_``."""
    return {"type": "BRANCH", "name": "main", "hash": hash_}


def _key(dotted: str) -> dict[str, Any]:
    return {"elements": dotted.split(".")}


def put(dotted: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"type": "PUT", "key": _key(dotted), "content": content}


def delete(dotted: str) -> dict[str, Any]:
    return {"type": "DELETE", "key": _key(dotted)}


def unchanged(dotted: str) -> dict[str, Any]:
    return {"type": "UNCHANGED", "key": _key(dotted)}


def table(location: str, content_id: str | None = None) -> dict[str, Any]:
    doc = {
        "type": "ICEBERG_TABLE",
        "metadataLocation": location,
        "snapshotId": 1,
        "schemaId": 0,
        "specId": 0,
        "sortOrderId": 0,
    }
    return {**doc, "id": content_id} if content_id else doc


def _added_id(answer: Any, dotted: str) -> str:
    return str(
        next(a["contentId"] for a in answer["addedContents"] if a["key"]["elements"] == dotted.split("."))
    )


def _hash(answer: Any) -> str:
    return str(answer["targetBranch"]["hash"])


def run_sequence(s: Session) -> None:
    """The sequence itself, on a server with an empty ``main``."""
    s.send("config", "GET", "/config")
    # --- commit meta in every form; commits that add no content
    c1 = s.commit(
        "c1 creates",
        "main",
        put("n1", {"type": "NAMESPACE", "elements": ["n1"]}),
        put("n1.t1", table("m1")),
        put("n1.t2", table("m2")),
    )
    t1 = _added_id(c1, "n1.t1")
    s.commit(
        "c2 only unchanged",
        "main",
        unchanged("n1.t1"),
        authors=["a1", "a2"],
        allSignedOffBy=["s1", "s2"],
        allProperties={"p": ["x", "y"], "q": ["z"]},
        authorTime="2020-01-01T00:00:00Z",
    )
    s.commit("c3 deletes", "main", delete("n1.t2"), author="solo", signedOffBy="sign", properties={"r": "1"})
    c4 = s.commit(
        "c4 updates", "main", put("n1.t1", table("m1b", t1)), put("z", table("z")), put("a", table("a"))
    )
    s.send("log all", "GET", "/trees/main/history", fetch="ALL")
    s.send("log minimal", "GET", "/trees/main/history")
    s.send("log paged", "GET", "/trees/main/history", **{"max-records": 2})
    s.send("reference all", "GET", "/trees/main", fetch="ALL")
    s.send("reference minimal", "GET", "/trees/main")
    s.send("references all", "GET", "/trees", fetch="ALL")
    s.send("references minimal", "GET", "/trees")
    # --- reads
    s.send("entries", "GET", "/trees/main/entries")
    s.send("entries with content", "GET", "/trees/main/entries", content="true")
    s.send("entries paged", "GET", "/trees/main/entries", **{"max-records": 2})
    s.send("content", "GET", "/trees/main/contents/n1.t1")
    s.send("contents", "GET", "/trees/main/contents", key=["n1", "n1.t1", "missing"])
    s.send("contents posted", "POST", "/trees/main/contents", {"requestedKeys": [_key("z"), _key("a")]})
    s.send("diff", "GET", "/trees/main~3/diff/main")
    s.send("recent changes", "GET", "/trees/main/recent-changes")
    # --- errors
    s.send("no such reference", "GET", "/trees/nope/entries")
    s.send("no such content", "GET", "/trees/main/contents/no.such.key")
    # several conflicts of one commit: the ops as sent (put, put, delete), at c1's hash
    s.commit(
        "c5 conflicts",
        "main",
        put("z", table("z2")),
        put("a", table("a2")),
        delete("n1.t1"),
        expected=_hash(c1),
    )
    s.commit(
        "c6 conflicts",
        "main",
        put("a", table("a3")),
        unchanged("n1.t2"),
        delete("n1.t1"),
        put("z", table("z3")),
        expected=_hash(c1),
    )
    # --- merges
    main_head = _hash(c4)
    s.branch("dev", main_head)
    d1 = s.commit("d1 on dev", "dev", put("d", table("d")))
    merge = {"fromRefName": "dev", "fromHash": _hash(d1)}
    s.send("merge dry run", "POST", f"/trees/main@{main_head}/history/merge", {**merge, "isDryRun": True})
    merged = s.send("merge", "POST", f"/trees/main@{main_head}/history/merge", merge)
    s.send(
        "merge again dry run",
        "POST",
        f"/trees/main@{merged['resultantTargetHash']}/history/merge",
        {**merge, "isDryRun": True},
    )
    s.branch("idle", merged["resultantTargetHash"])
    idle = s.commit("i1 only unchanged", "idle", unchanged("d"))
    nothing = {"fromRefName": "idle", "fromHash": _hash(idle)}
    s.send(
        "merge nothing dry run",
        "POST",
        f"/trees/main@{s.head()}/history/merge",
        {**nothing, "isDryRun": True},
    )
    s.send("merge nothing", "POST", f"/trees/main@{s.head()}/history/merge", nothing)
    d2 = s.commit("d2 on dev", "dev", put("e", table("e")))
    s.send(
        "merge dropped dry run",
        "POST",
        f"/trees/main@{s.head()}/history/merge",
        {"fromRefName": "dev", "fromHash": _hash(d2), "defaultKeyMergeMode": "DROP", "isDryRun": True},
    )
    d_id = s.send("content d", "GET", "/trees/dev/contents/d")["content"]["id"]
    d3 = s.commit("d3 on dev", "dev", put("d", table("d-dev", d_id)))
    s.commit("m1 on main", "main", put("d", table("d-main", d_id)))
    conflicting = {"fromRefName": "dev", "fromHash": _hash(d3)}
    s.send(
        "merge conflict as result",
        "POST",
        f"/trees/main@{s.head()}/history/merge",
        {**conflicting, "isReturnConflictAsResult": True},
    )
    s.send("merge conflict", "POST", f"/trees/main@{s.head()}/history/merge", conflicting)
    s.send(
        "merge forced",
        "POST",
        f"/trees/main@{s.head()}/history/merge",
        {**conflicting, "keyMergeModes": [{"key": _key("d"), "mergeBehavior": "FORCE"}], "isDryRun": True},
    )
    # --- transplants
    s.branch("pick", s.head())
    p1 = s.commit("p1 on pick", "pick", put("p", table("p")))
    picked = {"fromRefName": "pick", "hashesToTransplant": [_hash(p1)]}
    s.send(
        "transplant dry run",
        "POST",
        f"/trees/main@{s.head()}/history/transplant",
        {**picked, "isDryRun": True},
    )
    s.send("transplant", "POST", f"/trees/main@{s.head()}/history/transplant", picked)
    p_id = s.send("content p", "GET", "/trees/pick/contents/p")["content"]["id"]
    p2 = s.commit("p2 on pick", "pick", put("p", table("p-pick", p_id)))
    s.commit("m2 on main", "main", put("p", table("p-main", p_id)))
    picked_conflict = {"fromRefName": "pick", "hashesToTransplant": [_hash(p2)]}
    s.send(
        "transplant conflict dry run",
        "POST",
        f"/trees/main@{s.head()}/history/transplant",
        {**picked_conflict, "isDryRun": True, "isReturnConflictAsResult": True},
    )
    s.send(
        "transplant conflict as result",
        "POST",
        f"/trees/main@{s.head()}/history/transplant",
        {**picked_conflict, "isReturnConflictAsResult": True},
    )
    s.send("transplant conflict", "POST", f"/trees/main@{s.head()}/history/transplant", picked_conflict)
    # a commit that deletes and re-creates a key, transplanted onto a branch that has it already
    s.branch("again", s.head())
    s.commit("r1 creates", "again", put("r", table("r1")))
    r2 = s.commit("r2 re-creates", "again", delete("r"), put("r", table("r2")))
    again = {"fromRefName": "again", "hashesToTransplant": [_hash(r2)], "isReturnConflictAsResult": True}
    s.send("transplant re-created key", "POST", f"/trees/again@{_hash(r2)}/history/transplant", again)
    s.send("log of again", "GET", "/trees/again/history", fetch="ALL", **{"max-records": 2})
    s.send("log after merges", "GET", "/trees/main/history", fetch="ALL", **{"max-records": 6})
    # --- references: create a tag, assign, delete, and their errors
    head = s.head()
    s.branch("v1", head, "TAG", "create tag")
    s.branch("v1", head, "TAG", "create existing")
    s.send("tag all", "GET", "/trees/v1", fetch="ALL")
    s.send("assign", "PUT", f"/trees/pick@{s.head('pick')}", main_at(head), type="BRANCH")
    s.send("assign stale", "PUT", f"/trees/pick@{_hash(p1)}", main_at(head), type="BRANCH")
    s.send("delete", "DELETE", f"/trees/pick@{head}", type="BRANCH")
    s.send("reference by hash", "GET", f"/trees/main@{head}")
    s.send("reference not found", "GET", "/trees/nope")
    s.send(
        "entries filtered",
        "GET",
        "/trees/main/entries",
        filter="entry.contentType == 'ICEBERG_TABLE'",
        content="true",
    )


def record(base: str) -> list[dict[str, Any]]:
    """The normalised answers of the server at ``base`` (an empty repository) to the sequence."""
    session = Session(base)
    run_sequence(session)
    return session.answers


def ordered(doc: Any) -> Any:
    """``doc`` with every object as the list of its items, so comparing two also compares key order."""
    if isinstance(doc, dict):
        return [(k, ordered(v)) for k, v in doc.items()]
    if isinstance(doc, list):
        return [ordered(v) for v in doc]
    return doc


def load_recording() -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = json.loads(RECORDING.read_text())
    return answers


@contextlib.contextmanager
def _started_nessie() -> Iterator[str]:
    from provisioning.servers.nessie import PROVISIONER
    from provisioning.workdir import make_workdir, remove_workdir

    where = make_workdir("nessie-answers")
    provisioned = PROVISIONER.local_process("nessie", where)
    try:
        yield provisioned.url or ""
    finally:
        provisioned.stop()
        remove_workdir(where)


def main(argv: list[str] | None = None, write: Callable[[str], object] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an empty Nessie server's REST v2 base (default: start one)")
    parser.add_argument("--out", type=Path, default=RECORDING, help="where to write the answers")
    args = parser.parse_args(argv)
    with contextlib.nullcontext(args.url) if args.url else _started_nessie() as base:
        answers = record(base)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(answers, indent=1) + "\n")
    write(f"{len(answers)} answers of {base} written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
