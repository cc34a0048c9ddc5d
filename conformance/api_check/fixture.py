"""The small repository the API check works in: branches, a tag, commits and contents, created
over HTTP on the server under test, and the valid values (references, hashes, keys) the generated
requests borrow so that they get past "not found" and reach the operations' other answers.

Generated requests change the repository (commits, assignments, deletions): :meth:`Fixture.refresh`
puts back what a request removed and learns the new heads, so later requests still find it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Final

import requests

#: Reference names the fixture owns (a fresh repository holds only the default branch).
DEV: Final = "dev"
RELEASE: Final = "release"
TAG: Final = "v1"
NAMESPACE: Final = "ns"
TABLES: Final = ("t1", "t2", "t3")
_TIMEOUT: Final = 60


class FixtureError(Exception):
    """The server did not take one of the fixture's requests (the message has its answer)."""


def table(location: str) -> dict[str, Any]:
    """An Iceberg table document (the content type Nessie's clients write most)."""
    return {
        "type": "ICEBERG_TABLE",
        "metadataLocation": location,
        "snapshotId": 1,
        "schemaId": 0,
        "specId": 0,
        "sortOrderId": 0,
    }


def put(key: str, content: dict[str, Any]) -> dict[str, Any]:
    return {"type": "PUT", "key": {"elements": key.split(".")}, "content": content}


@dataclass
class Fixture:
    """The fixture on the server at ``base`` (REST API v2 base URI, ``.../api/v2``)."""

    base: str
    session: requests.Session = field(default_factory=requests.Session)
    default_branch: str = "main"
    #: Current heads of the fixture's references, by name.
    heads: dict[str, str] = field(default_factory=dict)
    #: Every commit hash the fixture has seen (heads move; old commits stay readable).
    hashes: list[str] = field(default_factory=list)
    #: Content keys in path form (``ns.t1``) and the content ids the server assigned them.
    keys: list[str] = field(default_factory=list)
    content_ids: dict[str, str] = field(default_factory=dict)
    _created: dict[str, tuple[str, str]] = field(default_factory=dict)

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> tuple[int, Any]:
        response = self.session.request(
            method, self.base + path, json=body, params=params or None, timeout=_TIMEOUT
        )
        return response.status_code, response.json() if response.content else None

    def ok(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        status, answer = self.call(method, path, body, **params)
        if status != 200:
            raise FixtureError(f"{method} {path}: {status} {answer}")
        return answer

    def create(self) -> Fixture:
        """Commits on the default branch, a branch ahead of it, another at its first commit, a tag."""
        self.default_branch = str(self.ok("GET", "/config")["defaultBranch"])
        main = self.default_branch
        first = self.commit(main, put(NAMESPACE, {"type": "NAMESPACE", "elements": [NAMESPACE]}),
                            put(f"{NAMESPACE}.{TABLES[0]}", table("s3://bucket/t1/v1.json")))  # fmt: skip
        second = self.commit(main, put(f"{NAMESPACE}.{TABLES[1]}", table("s3://bucket/t2/v1.json")))
        self.make_reference(DEV, "BRANCH", second)
        self.commit(DEV, put(f"{NAMESPACE}.{TABLES[2]}", table("s3://bucket/t3/v1.json")))
        self.make_reference(RELEASE, "BRANCH", first)
        self.make_reference(TAG, "TAG", first)
        self.refresh()
        return self

    def make_reference(self, name: str, kind: str, hash_: str) -> None:
        """``name`` at ``hash_``, a commit of the default branch (the body names the source)."""
        status, answer = self._create(name, kind, hash_)
        if status != 200:
            raise FixtureError(f"creating {kind} {name}: {status} {answer}")
        self._created[name] = (kind, hash_)

    def _create(self, name: str, kind: str, hash_: str) -> tuple[int, Any]:
        source = {"type": "BRANCH", "name": self.default_branch, "hash": hash_}
        return self.call("POST", "/trees", source, name=name, type=kind)

    def commit(self, branch: str, *operations: dict[str, Any]) -> str:
        head = self.head(branch)
        body = {
            "commitMeta": {"message": f"api-check fixture {uuid.uuid4().hex[:8]}"},
            "operations": list(operations),
        }
        answer = self.ok("POST", f"/trees/{branch}@{head}/history/commit", body)
        for added in answer.get("addedContents") or []:
            key = ".".join(added["key"]["elements"])
            self.content_ids[key] = added["contentId"]
            if key not in self.keys:
                self.keys.append(key)
        new = str(answer["targetBranch"]["hash"])
        self._seen(new)
        return new

    def head(self, name: str) -> str:
        return str(self.ok("GET", f"/trees/{name}")["reference"]["hash"])

    def refresh(self) -> None:
        """Learn every reference's head; re-create a fixture reference a request deleted (at the
        commit it was created at)."""
        listed = self.ok("GET", "/trees")["references"]
        self.heads = {str(r["name"]): str(r["hash"]) for r in listed}
        for name, (kind, hash_) in self._created.items():
            if name not in self.heads:
                self._create(name, kind, hash_)
                self.heads[name] = hash_
        for head in self.heads.values():
            self._seen(head)

    def kind_of(self, name: str) -> str:
        return self._created.get(name, ("BRANCH", ""))[0]

    @property
    def branches(self) -> list[str]:
        return [self.default_branch, *(n for n, (k, _) in self._created.items() if k == "BRANCH")]

    @property
    def references(self) -> list[str]:
        return [self.default_branch, *self._created]

    def _seen(self, hash_: str) -> None:
        if hash_ not in self.hashes:
            self.hashes.append(hash_)


__all__ = ["Fixture", "FixtureError", "put", "table"]
