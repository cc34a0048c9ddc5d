"""Nessie's authorization rules over HTTP: each operation Nessie checks, allowed by a rule naming
exactly its checks and refused with Nessie's 403 (and message) without one. A user ``u`` makes the
requests; ``admin`` (allowed everything) sets the repository up."""

from __future__ import annotations

import collections

import pytest

from tests.rest.authz_harness import (
    VIEW,
    Caller,
    delete,
    forbidden,
    put,
    put_namespace,
    served_with_rules,
    unchanged,
)

RULE = "nessie.server.authorization.rules"


def _rules(*expressions: str) -> str:
    return "".join(f"{RULE}.r{i}={e}\n" for i, e in enumerate(expressions))


def _setup(uri: str) -> Caller:
    """main holds a namespace ``ns``, tables ``Foo``, ``Bar`` and ``ns.t``, the view ``V``; branch
    ``dev`` starts there."""
    admin = Caller(uri, "admin")
    response = admin.commit(
        "main", put_namespace("ns"), put("Foo"), put("Bar"), put("ns", "t"), put("V", content=VIEW)
    )
    assert response.status_code == 200, response.text
    admin.branch("dev")
    return admin


# --- references ---------------------------------------------------------------------------------


def test_getting_a_reference_needs_view_reference() -> None:
    with served_with_rules(_rules("op=='VIEW_REFERENCE' && ref=='dev'")) as uri:
        _setup(uri)
        user = Caller(uri, "u")
        assert user.ok("GET", "/trees/dev")["reference"]["name"] == "dev"
        message = forbidden(user.call("GET", "/trees/main"))
        assert message == "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'main'"
        assert forbidden(user.call("GET", "/trees/main/recent-changes")) == message


def test_listing_references_leaves_out_those_the_caller_may_not_view() -> None:
    with served_with_rules(_rules("op=='VIEW_REFERENCE' && ref.startsWith('de')")) as uri:
        admin = _setup(uri)
        admin.branch("delta")
        names = [r["name"] for r in Caller(uri, "u").ok("GET", "/trees")["references"]]
        assert names == ["delta", "dev"]
        assert len(admin.ok("GET", "/trees")["references"]) == 3


def test_without_a_view_rule_every_reference_may_be_viewed_as_in_nessie() -> None:
    with served_with_rules(_rules("op=='LIST_COMMIT_LOG'")) as uri:
        _setup(uri)
        user = Caller(uri, "u")
        assert [r["name"] for r in user.ok("GET", "/trees")["references"]] == ["dev", "main"]
        assert user.ok("GET", "/trees/main/history")["logEntries"]
        message = forbidden(user.call("GET", "/trees/main/entries"))
        assert message == "'READ_ENTRIES' is not allowed for role 'u' on reference 'main'"


def test_creating_a_reference_needs_create_on_it_and_view_on_its_source() -> None:
    rules = _rules("op=='CREATE_REFERENCE' && ref.startsWith('u-')", "op=='VIEW_REFERENCE' && ref=='main'")
    with served_with_rules(rules) as uri:
        admin = _setup(uri)
        user = Caller(uri, "u")
        source = {"type": "BRANCH", "name": "main", "hash": admin.head()}
        created = user.ok("POST", "/trees", source, name="u-work", type="BRANCH")
        assert created["reference"]["name"] == "u-work"
        message = forbidden(user.call("POST", "/trees", source, name="other", type="TAG"))
        assert message == "'CREATE_REFERENCE' is not allowed for role 'u' on reference 'other'"
        from_dev = {"type": "BRANCH", "name": "dev", "hash": admin.head("dev")}
        message = forbidden(user.call("POST", "/trees", from_dev, name="u-x", type="BRANCH"))
        assert message == "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'dev'"
        names = [r["name"] for r in admin.ok("GET", "/trees")["references"]]
        assert names == ["dev", "main", "u-work"]


def test_deleting_a_reference_needs_view_and_delete() -> None:
    with served_with_rules(_rules("op in ['VIEW_REFERENCE', 'DELETE_REFERENCE'] && ref=='dev'")) as uri:
        admin = _setup(uri)
        admin.branch("keep")
        user = Caller(uri, "u")
        message = forbidden(user.call("DELETE", f"/trees/keep@{admin.head('keep')}"))
        assert message == (
            "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'keep', "
            "'DELETE_REFERENCE' is not allowed for role 'u' on reference 'keep'"
        )
        user.ok("DELETE", f"/trees/dev@{admin.head('dev')}")
        assert [r["name"] for r in admin.ok("GET", "/trees")["references"]] == ["keep", "main"]


def test_assigning_a_reference_needs_assign_on_it_and_view_on_the_target() -> None:
    rules = _rules("op in ['VIEW_REFERENCE', 'ASSIGN_REFERENCE_TO_HASH'] && ref=='dev'")
    with served_with_rules(rules) as uri:
        admin = _setup(uri)
        admin.commit("dev", put("New"))
        user = Caller(uri, "u")
        to_main = {"type": "BRANCH", "name": "main", "hash": admin.head()}
        message = forbidden(user.call("PUT", f"/trees/dev@{admin.head('dev')}", to_main))
        assert message == "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'main'"
        # A target without a name is checked on the default branch, as Nessie resolves it there.
        unnamed = {"type": "BRANCH", "hash": admin.head()}
        assert forbidden(user.call("PUT", f"/trees/dev@{admin.head('dev')}", unnamed)) == message
        admin.branch("other")
        to_dev = {"type": "BRANCH", "name": "dev", "hash": admin.head("dev")}
        message = forbidden(user.call("PUT", f"/trees/other@{admin.head('other')}", to_dev))
        assert message == (
            "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'other', "
            "'ASSIGN_REFERENCE_TO_HASH' is not allowed for role 'u' on reference 'other'"
        )
        first = admin.ok("GET", "/trees/main/history")["logEntries"][0]["commitMeta"]["hash"]
        user.ok("PUT", f"/trees/dev@{admin.head('dev')}", {"type": "BRANCH", "name": "dev", "hash": first})
        assert admin.head("dev") == first


# --- commits ------------------------------------------------------------------------------------

_COMMIT = "op in ['VIEW_REFERENCE', 'COMMIT_CHANGE_AGAINST_REFERENCE'] && ref=='dev'"


@pytest.mark.parametrize(
    ("operation", "allowing", "refusal"),
    [
        (
            put("New"),
            "op=='CREATE_ENTITY' && contentType=='ICEBERG_TABLE'",
            "'CREATE_ENTITY' is not allowed for role 'u' on content 'New'",
        ),
        (
            put("ns", "New2"),
            "op=='CREATE_ENTITY' && path.startsWith('ns.')",
            "'CREATE_ENTITY' is not allowed for role 'u' on content 'ns.New2'",
        ),
        (
            put("NewV", content=VIEW),
            "op=='CREATE_ENTITY' && contentType=='ICEBERG_VIEW'",
            "'CREATE_ENTITY' is not allowed for role 'u' on content 'NewV'",
        ),
        (
            put_namespace("ns2"),
            "op=='CREATE_ENTITY' && contentType=='NAMESPACE'",
            "'CREATE_ENTITY' is not allowed for role 'u' on content 'ns2'",
        ),
        (
            delete("Bar"),
            "op=='DELETE_ENTITY' && path=='Bar' && contentType=='ICEBERG_TABLE'",
            "'DELETE_ENTITY' is not allowed for role 'u' on content 'Bar'",
        ),
        (
            delete("V"),
            "op=='DELETE_ENTITY' && contentType=='ICEBERG_VIEW'",
            "'DELETE_ENTITY' is not allowed for role 'u' on content 'V'",
        ),
    ],
    ids=[
        "create-table",
        "create-in-namespace",
        "create-view",
        "create-namespace",
        "delete-table",
        "delete-view",
    ],
)
def test_commit_operations_are_checked_per_key_with_their_content_type(
    operation: dict[str, object], allowing: str, refusal: str
) -> None:
    with served_with_rules(_rules(_COMMIT, "op=='CREATE_ENTITY' && path=='Other'")) as uri:
        _setup(uri)
        assert forbidden(Caller(uri, "u").commit("dev", operation)) == refusal
    with served_with_rules(_rules(_COMMIT, allowing)) as uri:
        _setup(uri)
        assert Caller(uri, "u").commit("dev", operation).status_code == 200


def test_updating_an_entity_needs_update_entity_not_create() -> None:
    with served_with_rules(_rules(_COMMIT, "op=='CREATE_ENTITY'")) as uri:
        admin = _setup(uri)
        user = Caller(uri, "u")
        foo = admin.ok("GET", "/trees/dev/contents/Foo")["content"]
        updated = {**foo, "snapshotId": 42}
        message = forbidden(user.commit("dev", put("Foo", content=updated)))
        assert message == "'UPDATE_ENTITY' is not allowed for role 'u' on content 'Foo'"
    with served_with_rules(_rules(_COMMIT, "op=='UPDATE_ENTITY' && contentType=='ICEBERG_TABLE'")) as uri:
        admin = _setup(uri)
        foo = admin.ok("GET", "/trees/dev/contents/Foo")["content"]
        assert (
            Caller(uri, "u").commit("dev", put("Foo", content={**foo, "snapshotId": 42})).status_code == 200
        )


def test_a_commit_needs_commit_change_against_its_branch_and_unchanged_is_not_checked() -> None:
    with served_with_rules(_rules("op=='VIEW_REFERENCE'")) as uri:
        _setup(uri)
        message = forbidden(Caller(uri, "u").commit("dev", unchanged("Foo")))
        assert message == "'COMMIT_CHANGE_AGAINST_REFERENCE' is not allowed for role 'u' on reference 'dev'"
    with served_with_rules(_rules(_COMMIT)) as uri:
        admin = _setup(uri)
        before = admin.head("dev")
        assert Caller(uri, "u").commit("dev", unchanged("Foo")).status_code == 200
        assert admin.head("dev") != before


def test_a_refused_commit_changes_nothing_and_names_every_refused_key_deletes_first() -> None:
    with served_with_rules(_rules(_COMMIT, "op=='CREATE_ENTITY' && path=='A'")) as uri:
        admin = _setup(uri)
        before = admin.head("dev")
        message = forbidden(Caller(uri, "u").commit("dev", put("A"), put("B"), delete("Foo")))
        assert message == (
            "'DELETE_ENTITY' is not allowed for role 'u' on content 'Foo', "
            "'CREATE_ENTITY' is not allowed for role 'u' on content 'B'"
        )
        assert admin.head("dev") == before


# --- reads --------------------------------------------------------------------------------------


def test_entries_need_read_entries_and_list_only_readable_keys() -> None:
    rules = _rules(
        "op=='READ_ENTRIES' && ref=='main'", "op=='READ_CONTENT_KEY' && contentType=='ICEBERG_TABLE'"
    )
    with served_with_rules(rules) as uri:
        _setup(uri)
        user = Caller(uri, "u")
        keys = [".".join(e["name"]["elements"]) for e in user.ok("GET", "/trees/main/entries")["entries"]]
        assert keys == ["Bar", "Foo", "ns.t"]
        message = forbidden(user.call("GET", "/trees/dev/entries"))
        assert message == "'READ_ENTRIES' is not allowed for role 'u' on reference 'dev'"


def test_reading_content_needs_read_entity_value_with_its_type() -> None:
    rules = _rules(
        "op=='VIEW_REFERENCE'", "op=='READ_ENTITY_VALUE' && path=='Foo' && contentType=='ICEBERG_TABLE'"
    )
    with served_with_rules(rules) as uri:
        _setup(uri)
        user = Caller(uri, "u")
        assert user.ok("GET", "/trees/main/contents/Foo")["content"]["type"] == "ICEBERG_TABLE"
        message = forbidden(user.call("GET", "/trees/main/contents/Bar"))
        assert message == "'READ_ENTITY_VALUE' is not allowed for role 'u' on content 'Bar'"
        assert user.ok("GET", "/trees/main/contents", key="Foo")["contents"][0]["key"]["elements"] == ["Foo"]
        several = user.call("GET", "/trees/main/contents", key=["Foo", "Bar", "V"])
        assert forbidden(several) == (
            "'READ_ENTITY_VALUE' is not allowed for role 'u' on content 'Bar', "
            "'READ_ENTITY_VALUE' is not allowed for role 'u' on content 'V'"
        )
        posted = user.call("POST", "/trees/main/contents", {"requestedKeys": [{"elements": ["V"]}]})
        assert forbidden(posted) == "'READ_ENTITY_VALUE' is not allowed for role 'u' on content 'V'"
        # A key that is not there is Nessie's 404 once the reference may be viewed.
        assert user.call("GET", "/trees/main/contents/Missing").status_code == 404


def test_reading_content_needs_view_reference_first() -> None:
    with served_with_rules(_rules("op=='VIEW_REFERENCE' && ref=='dev'", "op=='READ_ENTITY_VALUE'")) as uri:
        _setup(uri)
        user = Caller(uri, "u")
        assert forbidden(user.call("GET", "/trees/main/contents/Foo")) == (
            "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'main'"
        )
        assert forbidden(user.call("GET", "/trees/main/contents/Missing")) == (
            "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'main'"
        )
        assert user.ok("GET", "/trees/dev/contents/Foo")["content"]["type"] == "ICEBERG_TABLE"


def test_reading_by_commit_hash_alone_checks_the_detached_reference() -> None:
    with served_with_rules(_rules("op in ['VIEW_REFERENCE', 'READ_ENTITY_VALUE'] && ref=='DETACHED'")) as uri:
        admin = _setup(uri)
        user = Caller(uri, "u")
        assert user.ok("GET", f"/trees/@{admin.head()}/contents/Foo")["content"]["type"] == "ICEBERG_TABLE"
        assert forbidden(user.call("GET", "/trees/main/contents/Foo")).startswith("'VIEW_REFERENCE'")


def test_the_commit_log_needs_list_commit_log_and_shows_only_readable_operations() -> None:
    rules = _rules(
        "op in ['VIEW_REFERENCE', 'LIST_COMMIT_LOG'] && ref=='main'", "op=='READ_CONTENT_KEY' && path=='Foo'"
    )
    with served_with_rules(rules) as uri:
        _setup(uri)
        user = Caller(uri, "u")
        log = user.ok("GET", "/trees/main/history", fetch="ALL")["logEntries"]
        assert [op["key"]["elements"] for op in log[0]["operations"]] == [["Foo"]]
        message = forbidden(user.call("GET", "/trees/dev/history"))
        assert message == (
            "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'dev', "
            "'LIST_COMMIT_LOG' is not allowed for role 'u' on reference 'dev'"
        )


def test_a_diff_needs_view_on_both_sides_and_lists_only_readable_keys() -> None:
    rules = _rules(
        "op=='VIEW_REFERENCE' && ref in ['main', 'dev']", "op=='READ_CONTENT_KEY' && path != 'Bar'"
    )
    with served_with_rules(rules) as uri:
        admin = _setup(uri)
        admin.commit("dev", put("New"), delete("Bar"), delete("Foo"))
        admin.branch("hidden")
        user = Caller(uri, "u")
        diffs = user.ok("GET", "/trees/main/diff/dev")["diffs"]
        assert [d["key"]["elements"] for d in diffs] == [["Foo"], ["New"]]
        message = forbidden(user.call("GET", "/trees/main/diff/hidden"))
        assert message == "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'hidden'"
        # As in Nessie, the references are checked before the filter is read.
        assert forbidden(user.call("GET", "/trees/main/diff/hidden", filter="not cel (")) == message


def test_the_server_config_is_not_checked() -> None:
    with served_with_rules(_rules("op=='VIEW_REFERENCE' && ref=='nothing'")) as uri:
        user = Caller(uri, "u")
        assert user.ok("GET", "/config")["defaultBranch"] == "main"
        forbidden(user.call("GET", "/trees/main"))


# --- merge and transplant -----------------------------------------------------------------------


def _merge_body(admin: Caller) -> dict[str, object]:
    return {"fromRefName": "dev", "fromHash": admin.head("dev")}


def test_merging_needs_view_on_the_source_and_commit_on_the_target() -> None:
    with served_with_rules(
        _rules("op=='VIEW_REFERENCE' && ref=='dev'", _COMMIT.replace("dev", "main"), "op=='CREATE_ENTITY'")
    ) as uri:
        admin = _setup(uri)
        admin.commit("dev", put("Merged"))
        user = Caller(uri, "u")
        result = user.ok("POST", f"/trees/main@{admin.head()}/history/merge", _merge_body(admin))
        assert result["wasSuccessful"]
    with served_with_rules(_rules("op=='VIEW_REFERENCE'")) as uri:
        admin = _setup(uri)
        admin.commit("dev", put("Merged"))
        before = admin.head()
        refused = Caller(uri, "u").call("POST", f"/trees/main@{before}/history/merge", _merge_body(admin))
        assert (
            forbidden(refused)
            == "'COMMIT_CHANGE_AGAINST_REFERENCE' is not allowed for role 'u' on reference 'main'"
        )
        assert admin.head() == before
    with served_with_rules(
        _rules("op=='VIEW_REFERENCE' && ref=='main'", "op=='COMMIT_CHANGE_AGAINST_REFERENCE'")
    ) as uri:
        admin = _setup(uri)
        admin.commit("dev", put("Merged"))
        refused = Caller(uri, "u").call(
            "POST", f"/trees/main@{admin.head()}/history/merge", _merge_body(admin)
        )
        assert forbidden(refused) == "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'dev'"


def test_transplanting_needs_view_on_the_source_and_commit_on_the_target() -> None:
    def body(admin: Caller) -> dict[str, object]:
        return {"fromRefName": "dev", "hashesToTransplant": [admin.head("dev")]}

    with served_with_rules(
        _rules("op=='VIEW_REFERENCE' && ref=='dev'", _COMMIT.replace("dev", "main"), "op=='CREATE_ENTITY'")
    ) as uri:
        admin = _setup(uri)
        admin.commit("dev", put("Moved"))
        result = Caller(uri, "u").ok("POST", f"/trees/main@{admin.head()}/history/transplant", body(admin))
        assert result["wasSuccessful"]
    with served_with_rules(
        _rules("op=='VIEW_REFERENCE' && ref=='main'", "op=='COMMIT_CHANGE_AGAINST_REFERENCE'")
    ) as uri:
        admin = _setup(uri)
        admin.commit("dev", put("Moved"))
        before = admin.head()
        refused = Caller(uri, "u").call("POST", f"/trees/main@{before}/history/transplant", body(admin))
        assert forbidden(refused) == "'VIEW_REFERENCE' is not allowed for role 'u' on reference 'dev'"
        assert admin.head() == before


# --- principals ---------------------------------------------------------------------------------


def test_roles_and_the_anonymous_caller() -> None:
    with served_with_rules(_rules("op=='VIEW_REFERENCE' && 'readers' in roles")) as uri:
        _setup(uri)
        assert Caller(uri, "u", ("readers",)).ok("GET", "/trees/main")["reference"]["name"] == "main"
        assert forbidden(Caller(uri, "u", ("writers",)).call("GET", "/trees/main")).endswith(
            "on reference 'main'"
        )
        anonymous = Caller(uri, None).call("GET", "/trees/main")
        assert forbidden(anonymous) == "'VIEW_REFERENCE' is not allowed for role '' on reference 'main'"


def test_nessie_documented_example_rules_work_unchanged() -> None:
    # The first examples of Nessie's authorization page, as written there.
    rules = r"""
nessie.server.authorization.rules.allow_branch_listing=\
  op=='VIEW_REFERENCE' && role.startsWith('test_') && ref.startsWith('allowedBranch')
nessie.server.authorization.rules.allow_branch_creation=\
  op=='CREATE_REFERENCE' && role=='test_user' && ref.matches('.*allowedBranch.*')
nessie.server.authorization.rules.allow_branch_deletion=\
  op in ['VIEW_REFERENCE', 'DELETE_REFERENCE'] && role=='test_user123' && ref.endsWith('allowedBranch')
nessie.server.authorization.rules.allow_listing_commitlog=\
  op in ['VIEW_REFERENCE', 'LIST_COMMIT_LOG'] && ref.startsWith('dev')
nessie.server.authorization.rules.allow_reading_entity_value=\
  op in ['VIEW_REFERENCE', 'READ_ENTITY_VALUE'] && role=='test_user' && path.startsWith('allowed.')
nessie.server.authorization.rules.allow_deleting_entity=\
  op in ['VIEW_REFERENCE', 'DELETE_ENTITY'] && path.startsWith('dev.')
nessie.server.authorization.rules.allow_listing_reflog=\
  op=='VIEW_REFLOG' && role=='admin_user'
"""
    with served_with_rules(rules) as uri:
        admin = Caller(uri, "admin")
        assert (
            admin.commit("main", put_namespace("allowed"), put("allowed", "t"), put("secret")).status_code
            == 200
        )
        admin.branch("allowedBranch")
        test_user = Caller(uri, "test_user")
        assert test_user.ok("GET", "/trees/allowedBranch")["reference"]["name"] == "allowedBranch"
        test_user.branch("my-allowedBranch-2", source="allowedBranch")
        assert forbidden(
            test_user.call(
                "POST",
                "/trees",
                {"type": "BRANCH", "name": "allowedBranch", "hash": admin.head()},
                name="x",
                type="BRANCH",
            )
        ).startswith("'CREATE_REFERENCE'")
        assert (
            test_user.ok("GET", "/trees/allowedBranch/contents/allowed.t")["content"]["type"]
            == "ICEBERG_TABLE"
        )
        assert forbidden(test_user.call("GET", "/trees/allowedBranch/contents/secret")).startswith(
            "'READ_ENTITY_VALUE'"
        )
        deleter = Caller(uri, "test_user123")
        deleter.ok("DELETE", f"/trees/allowedBranch@{admin.head('allowedBranch')}")
        assert forbidden(Caller(uri, "someone").call("GET", "/trees/main"))
        admin.branch("dev1")
        assert Caller(uri, "someone").ok("GET", "/trees/dev1/history")["logEntries"]


_TARGET = "op in ['VIEW_REFERENCE', 'COMMIT_CHANGE_AGAINST_REFERENCE']"


@pytest.mark.parametrize("how", ["merge", "transplant"])
def test_merged_and_transplanted_keys_are_checked_like_a_commit(how: str) -> None:
    with served_with_rules(_rules(_TARGET, "op=='CREATE_ENTITY' && path=='New'")) as uri:
        admin = _setup(uri)
        foo = admin.ok("GET", "/trees/dev/contents/Foo")["content"]
        admin.commit("dev", put("New"), put("Foo", content={**foo, "snapshotId": 7}), delete("V"))
        if how == "merge":
            body: dict[str, object] = _merge_body(admin)
        else:
            body = {"fromRefName": "dev", "hashesToTransplant": [admin.head("dev")]}
        before = admin.head()
        refused = Caller(uri, "u").call("POST", f"/trees/main@{before}/history/{how}", body)
        assert forbidden(refused) == (
            "'DELETE_ENTITY' is not allowed for role 'u' on content 'V', "
            "'UPDATE_ENTITY' is not allowed for role 'u' on content 'Foo'"
        )
        assert admin.head() == before
    allowing = (
        "op=='CREATE_ENTITY' && path=='New' && contentType=='ICEBERG_TABLE'",
        "op=='UPDATE_ENTITY' && path=='Foo' && contentType=='ICEBERG_TABLE'",
        "op=='DELETE_ENTITY' && path=='V' && contentType=='ICEBERG_VIEW'",
    )
    with served_with_rules(_rules(_TARGET, *allowing)) as uri:
        admin = _setup(uri)
        foo = admin.ok("GET", "/trees/dev/contents/Foo")["content"]
        admin.commit("dev", put("New"), put("Foo", content={**foo, "snapshotId": 7}), delete("V"))
        if how == "merge":
            body = _merge_body(admin)
        else:
            body = {"fromRefName": "dev", "hashesToTransplant": [admin.head("dev")]}
        assert Caller(uri, "u").ok("POST", f"/trees/main@{admin.head()}/history/{how}", body)["wasSuccessful"]
        assert admin.call("GET", "/trees/main/contents/V").status_code == 404


def test_a_rename_updates_its_new_key_and_a_re_added_key_is_created() -> None:
    rules = _rules(_COMMIT, "op=='DELETE_ENTITY'", "op=='CREATE_ENTITY' && path=='Foo'")
    with served_with_rules(rules) as uri:
        admin = _setup(uri)
        user = Caller(uri, "u")
        foo = admin.ok("GET", "/trees/dev/contents/Foo")["content"]
        refused = user.commit("dev", delete("Foo"), put("Renamed", content=foo))
        assert forbidden(refused) == "'UPDATE_ENTITY' is not allowed for role 'u' on content 'Renamed'"
        assert user.commit("dev", delete("Foo"), put("Foo")).status_code == 200


class _CountingStore:
    """The server's store, counting the calls made to it by name."""

    def __init__(self, api: object) -> None:
        self.api = api
        self.calls: collections.Counter[str] = collections.Counter()

    def __getattr__(self, name: str) -> object:
        self.calls[name] += 1
        return getattr(self.api, name)


@pytest.mark.parametrize("how", ["merge", "transplant"])
def test_a_checked_merge_or_transplant_runs_once(how: str) -> None:
    """The per-key checks run inside the merge, on the head it is planned on, not on a dry run
    sent first (which would do the work twice, and check a head the branch may have left)."""
    counting: list[_CountingStore] = []

    def wrap(api: object) -> _CountingStore:
        counting.append(_CountingStore(api))
        return counting[-1]

    with served_with_rules(_rules(_TARGET, "op=='CREATE_ENTITY' && path=='New'"), wrap) as uri:
        admin = _setup(uri)
        admin.commit("dev", put("New"))
        body = (
            _merge_body(admin)
            if how == "merge"
            else {"fromRefName": "dev", "hashesToTransplant": [admin.head("dev")]}
        )
        (store,) = counting
        store.calls.clear()
        assert Caller(uri, "u").ok("POST", f"/trees/main@{admin.head()}/history/{how}", body)["wasSuccessful"]
        assert store.calls[how] == 1
