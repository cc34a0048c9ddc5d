"""Valid values for generated requests: most of what schemathesis generates from Nessie's document
names references, commits and keys that do not exist, so nearly every answer would be a 404. Here
a generated request borrows, most of the time, the fixture's references (with their current heads),
commit hashes and keys, and for writes a body that could succeed; the rest stays as generated, so
the error paths are exercised too. Each operation also gets a few requests that are valid outright
(:func:`valid_requests`), so its success answer is checked in every run, however short."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.api_check.fixture import DEV, NAMESPACE, RELEASE, TAG, Fixture, put, table

#: Values that keep a generated request as it came, out of the ten choices of :func:`_borrowing`.
_KEEP_GENERATED = 3
_READ_FILTERS = {
    "/v2/trees": ["ref.name.startsWith('d')", "refType == 'BRANCH'"],
    "/v2/trees/{ref}/entries": ["entry.contentType == 'ICEBERG_TABLE'", "entry.key.startsWith('ns')"],
    "/v2/trees/{ref}/history": ["commit.message.startsWith('api')", "size(operations) > 1"],
    "/v2/trees/{from-ref}/diff/{to-ref}": ["key.startsWith('ns')"],
}


def _pick(data: st.DataObject, pool: list[str]) -> str:
    """One of ``pool``, drawn the same way whatever its size: the fixture's lists grow during a
    run, and Hypothesis insists that the same draws make the same request shape."""
    return pool[data.draw(st.integers(0, 2**16)) % len(pool)]


def _borrowing(data: st.DataObject) -> bool:
    return data.draw(st.integers(0, 9)) >= _KEEP_GENERATED


def read_spec(data: st.DataObject, fx: Fixture) -> str:
    """A reference as reads take it: a name, name@hash, @hash, the default branch '-', or a
    relative lookup."""
    name = _pick(data, fx.references)
    head = fx.heads.get(name, "")
    choice = data.draw(st.integers(0, 5))
    if choice == 0:
        return f"{name}@{head}"
    if choice == 1:
        return f"@{_pick(data, fx.hashes)}"
    if choice == 2:
        return "-"
    if choice == 3:
        return f"{name}~1"
    return name


def write_spec(data: st.DataObject, fx: Fixture, names: list[str]) -> str:
    """A reference with the expected hash writes need: mostly the current head, sometimes an
    older commit (a conflict) or none (refused)."""
    name = _pick(data, names)
    choice = data.draw(st.integers(0, 5))
    if choice == 0:
        return name
    if choice == 1:
        return f"{name}@{_pick(data, fx.hashes)}"
    return f"{name}@{fx.heads.get(name, '')}"


def _key(data: st.DataObject, fx: Fixture) -> str:
    new = f"{NAMESPACE}.new{data.draw(st.integers(0, 9))}"
    return _pick(data, [*fx.keys, new])


def _elements(key: str) -> dict[str, Any]:
    return {"elements": key.split(".")}


def _commit_body(data: st.DataObject, fx: Fixture) -> dict[str, Any]:
    key = _key(data, fx)
    kind = data.draw(st.sampled_from(["PUT", "PUT", "DELETE", "UNCHANGED"]))
    if kind == "PUT":
        content = table(f"s3://bucket/{key}/{data.draw(st.integers(0, 999))}.json")
        with_id = data.draw(st.booleans())  # drawn whether or not the key has an id yet
        if with_id and key in fx.content_ids:
            content["id"] = fx.content_ids[key]
        operation = put(key, content)
    else:
        operation = {"type": kind, "key": _elements(key)}
    return {"commitMeta": {"message": "api-check"}, "operations": [operation]}


def _merge_body(data: st.DataObject, fx: Fixture, transplant: bool) -> dict[str, Any]:
    source = _pick(data, fx.references)
    body: dict[str, Any] = {"fromRefName": source}
    if transplant:
        body["hashesToTransplant"] = [_pick(data, fx.hashes)]
    else:
        body["fromHash"] = fx.heads.get(source, _pick(data, fx.hashes))
    if data.draw(st.booleans()):
        body["dryRun"] = True
    if data.draw(st.booleans()):
        body["returnConflictAsResult"] = True
    return body


def borrow(path: str, method: str, case: Any, data: st.DataObject, fx: Fixture) -> None:
    """Replace parts of a generated ``case`` (a schemathesis Case for ``method path``) with the
    fixture's values, each part with its own draw."""
    params = case.path_parameters or {}
    writes = method in ("PUT", "DELETE") or path.endswith(("/commit", "/merge", "/transplant"))
    for name in ("ref", "branch", "from-ref", "to-ref"):
        if name in params and _borrowing(data):
            if not writes:
                params[name] = read_spec(data, fx)
            else:
                params[name] = write_spec(data, fx, fx.branches if name == "branch" else fx.references)
    if "key" in params and _borrowing(data):
        params["key"] = _key(data, fx)
    query = case.query if isinstance(case.query, dict) else None
    if query is not None:
        _borrow_query(path, method, query, params, data, fx)
    body = _valid_body(path, method, data, fx)
    if body is not None and _borrowing(data):
        if isinstance(case.body, dict) and data.draw(st.booleans()):
            case.body.update(body)  # valid fields over generated ones: some of both
        else:
            case.body = body


def _borrow_query(
    path: str, method: str, query: dict[str, Any], params: dict[str, Any], data: st.DataObject, fx: Fixture
) -> None:
    for name in list(query):
        if not _borrowing(data):
            continue
        if name == "key":
            query[name] = [_key(data, fx) for _ in range(data.draw(st.integers(1, 3)))]
        elif name in ("min-key", "max-key", "prefix-key"):
            query[name] = _key(data, fx)
        elif name == "limit-hash":
            query[name] = _pick(data, fx.hashes)
        elif name == "max-records":
            query[name] = data.draw(st.integers(1, 3))
        elif name == "filter" and path in _READ_FILTERS:
            query[name] = _pick(data, _READ_FILTERS[path])
        elif name == "type" and method in ("PUT", "DELETE"):
            named = str(params.get("ref", "")).split("@")[0]
            query[name] = fx.kind_of(named)
        elif name == "fetch":
            query[name] = data.draw(st.sampled_from(["MINIMAL", "ALL"]))
    if path == "/v2/trees" and method == "POST" and _borrowing(data):
        query["name"] = f"gen{data.draw(st.integers(0, 20))}"
        query["type"] = data.draw(st.sampled_from(["BRANCH", "TAG"]))


def _valid_body(path: str, method: str, data: st.DataObject, fx: Fixture) -> dict[str, Any] | None:
    if path.endswith("/history/commit"):
        return _commit_body(data, fx)
    if path.endswith("/history/merge"):
        return _merge_body(data, fx, transplant=False)
    if path.endswith("/history/transplant"):
        return _merge_body(data, fx, transplant=True)
    if path.endswith("/contents") and method == "POST":
        return {"requestedKeys": [_elements(_key(data, fx))]}
    if path in ("/v2/trees", "/v2/trees/{ref}") and method in ("POST", "PUT"):
        source = _pick(data, fx.references)
        return {"type": fx.kind_of(source), "name": source, "hash": _pick(data, fx.hashes)}
    return None


def valid_requests(path: str, method: str, fx: Fixture) -> list[dict[str, Any]]:
    """Requests of ``method path`` that succeed on the fixture as it is now (path parameters,
    query, body), sent before the generated ones."""
    main, dev, release, tag = fx.default_branch, DEV, RELEASE, TAG
    key = fx.keys[-1] if fx.keys else f"{NAMESPACE}.t1"
    head = fx.heads
    branch = {"type": "BRANCH", "name": main, "hash": head[main]}
    new_table = put(f"{NAMESPACE}.valid", table("s3://bucket/valid.json"))
    found: dict[tuple[str, str], list[dict[str, Any]]] = {
        ("/v2/config", "GET"): [{}],
        ("/v2/trees", "GET"): [{"query": {"fetch": "ALL"}}, {"query": {"max-records": 1}}],
        ("/v2/trees", "POST"): [{"query": {"name": "valid-new", "type": "BRANCH"}, "body": branch}],
        ("/v2/trees/{ref}", "GET"): [
            {"path": {"ref": dev}, "query": {"fetch": "ALL"}},
            {"path": {"ref": "-"}},
        ],
        ("/v2/trees/{ref}", "PUT"): [
            {"path": {"ref": f"{release}@{head[release]}"}, "query": {"type": "BRANCH"}, "body": branch}
        ],
        ("/v2/trees/{ref}", "DELETE"): [{"path": {"ref": f"{tag}@{head[tag]}"}, "query": {"type": "TAG"}}],
        ("/v2/trees/{ref}/entries", "GET"): [{"path": {"ref": dev}, "query": {"content": True}}],
        ("/v2/trees/{ref}/history", "GET"): [{"path": {"ref": dev}, "query": {"fetch": "ALL"}}],
        ("/v2/trees/{ref}/recent-changes", "GET"): [{"path": {"ref": dev}}],
        ("/v2/trees/{ref}/contents", "GET"): [{"path": {"ref": dev}, "query": {"key": [key]}}],
        ("/v2/trees/{ref}/contents", "POST"): [
            {"path": {"ref": dev}, "body": {"requestedKeys": [_elements(key)]}}
        ],
        ("/v2/trees/{ref}/contents/{key}", "GET"): [{"path": {"ref": dev, "key": key}}],
        ("/v2/trees/{from-ref}/diff/{to-ref}", "GET"): [{"path": {"from-ref": main, "to-ref": dev}}],
        ("/v2/trees/{branch}/history/commit", "POST"): [
            {
                "path": {"branch": f"{dev}@{head[dev]}"},
                "body": {"commitMeta": {"message": "valid"}, "operations": [new_table]},
            }
        ],
        ("/v2/trees/{branch}/history/merge", "POST"): [
            {"path": {"branch": f"{main}@{head[main]}"}, "body": {"fromRefName": dev, "fromHash": head[dev]}}
        ],
        ("/v2/trees/{branch}/history/transplant", "POST"): [
            {
                "path": {"branch": f"{release}@{head[release]}"},
                "body": {"fromRefName": dev, "hashesToTransplant": [head[dev]]},
            }
        ],
    }
    return found.get((path, method), [])


__all__ = ["borrow", "valid_requests"]
