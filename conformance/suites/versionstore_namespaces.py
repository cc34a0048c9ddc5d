"""Namespace validation (store config ``namespace_validation``, on by default): new content needs its
parent namespaces, a non-namespace never acts as a namespace, a namespace is dropped only when
empty, and merges and transplants obey the same rules against the target. With validation off,
content may live under keys whose parents do not exist.

Conflicts are listed deepest parent first; a commit reports every violation at once.
"""

from __future__ import annotations

import pytest

from conformance.suites.versionstore_base import (
    MAIN,
    VersionStoreSuite,
    conflict_summary,
    exactly,
    key,
    namespace,
    table,
)
from persist_spi.versionstore import (
    Delete,
    InvalidOperation,
    Put,
    ReferenceConflictError,
    VersionStore,
)
from persist_spi.versionstore.errors import ConflictType
from persist_spi.versionstore.refs import branch

NOT_A_NAMESPACE = (
    "expecting the key '{}' to be a namespace, but is not a namespace "
    "(using a content object that is not a namespace as a namespace is forbidden)"
)


class VersionStoreNamespacesSuite(VersionStoreSuite):
    area = "versionstore.namespaces"

    def test_content_in_a_missing_namespace_is_rejected(self, vs: VersionStore) -> None:
        """Putting ns.table without ns: NAMESPACE_ABSENT for 'ns', on an empty branch and on one with
        unrelated content."""
        for attempt in range(2):
            with pytest.raises(ReferenceConflictError, match=exactly("Namespace 'ns' must exist.")) as e:
                self.commit(vs, MAIN, Put(key("ns.table"), table("value")))
            assert conflict_summary(e.value.conflicts) == [
                (ConflictType.NAMESPACE_ABSENT, "ns", "namespace 'ns' must exist")
            ]
            self.commit(vs, MAIN, Put(key(f"unrelated-table-{attempt}"), table("value")))
        assert vs.get_value(MAIN, key("ns.table")) is None

    def test_every_missing_parent_namespace_is_reported_deepest_first(self, vs: VersionStore) -> None:
        """a.b.c.table with only 'a': a.b.c and a.b are absent. With a.b being a table: a.b.c absent
        and a.b NOT_A_NAMESPACE. With 'a' deleted as well: all three absent."""
        self.commit(vs, MAIN, Put(key("a"), namespace("a")))
        deep = Put(key("a.b.c.table"), table("value"))
        prefix = "There are multiple conflicts that prevent committing the provided operations: "

        with pytest.raises(ReferenceConflictError) as e:
            self.commit(vs, MAIN, deep)
        assert str(e.value) == prefix + "namespace 'a.b.c' must exist, namespace 'a.b' must exist."
        assert conflict_summary(e.value.conflicts) == [
            (ConflictType.NAMESPACE_ABSENT, "a.b.c", "namespace 'a.b.c' must exist"),
            (ConflictType.NAMESPACE_ABSENT, "a.b", "namespace 'a.b' must exist"),
        ]

        self.commit(vs, MAIN, Put(key("a.b"), table("value")))
        with pytest.raises(ReferenceConflictError) as e:
            self.commit(vs, MAIN, deep)
        assert str(e.value) == prefix + "namespace 'a.b.c' must exist, " + NOT_A_NAMESPACE.format("a.b") + "."
        assert conflict_summary(e.value.conflicts) == [
            (ConflictType.NAMESPACE_ABSENT, "a.b.c", "namespace 'a.b.c' must exist"),
            (ConflictType.NOT_A_NAMESPACE, "a.b", NOT_A_NAMESPACE.format("a.b")),
        ]

        self.commit(vs, MAIN, Delete(key("a.b")))
        self.commit(vs, MAIN, Delete(key("a")))
        with pytest.raises(ReferenceConflictError) as e:
            self.commit(vs, MAIN, deep)
        assert str(e.value) == (
            prefix + "namespace 'a.b.c' must exist, namespace 'a.b' must exist, namespace 'a' must exist."
        )
        assert [c.conflict_type for c in e.value.conflicts] == [ConflictType.NAMESPACE_ABSENT] * 3

    @pytest.mark.parametrize("dotted", ["ns.table", "ns2.ns.table"])
    def test_content_under_a_non_namespace_is_rejected(self, vs: VersionStore, dotted: str) -> None:
        """The parent key holds a table: NOT_A_NAMESPACE, capitalised as the single conflict."""
        k = key(dotted)
        assert k.parent is not None
        if k.parent.parent is not None:
            self.commit(vs, MAIN, Put(k.parent.parent, namespace(str(k.parent.parent))))
        self.commit(vs, MAIN, Put(k.parent, table("value")))
        parent = str(k.parent)
        message = NOT_A_NAMESPACE.format(parent)
        with pytest.raises(
            ReferenceConflictError, match=exactly(message[0].upper() + message[1:] + ".")
        ) as e:
            self.commit(vs, MAIN, Put(k, table("value")))
        assert conflict_summary(e.value.conflicts) == [(ConflictType.NOT_A_NAMESPACE, parent, message)]

    @pytest.mark.parametrize("child", ["ns.table", "ns.child"], ids=["child-table", "child-namespace"])
    def test_namespace_with_children_cannot_be_deleted(self, vs: VersionStore, child: str) -> None:
        """A namespace with a live child (table or namespace) is not empty; deleting it is a conflict
        and it stays."""
        self.commit(vs, MAIN, Put(key("ns"), namespace("ns")))
        content = namespace(child) if child == "ns.child" else table("foo")
        self.commit(vs, MAIN, Put(key(child), content))
        with pytest.raises(ReferenceConflictError, match=exactly("Namespace 'ns' is not empty.")) as e:
            self.commit(vs, MAIN, Delete(key("ns")))
        assert conflict_summary(e.value.conflicts) == [
            (ConflictType.NAMESPACE_NOT_EMPTY, "ns", "namespace 'ns' is not empty")
        ]
        assert vs.get_value(MAIN, key("ns")) is not None

    def test_namespace_emptied_in_the_same_commit_can_be_deleted(self, vs: VersionStore) -> None:
        """Deleting a namespace together with its only child succeeds."""
        self.commit(vs, MAIN, Put(key("ns"), namespace("ns")), Put(key("ns.t"), table("t")))
        self.commit(vs, MAIN, Delete(key("ns")), Delete(key("ns.t")))
        assert vs.get_values(MAIN, [key("ns"), key("ns.t")]) == {}

    def test_whole_hierarchy_is_created_and_deleted_in_one_commit(self, vs: VersionStore) -> None:
        """Six nested namespaces and three tables in each: created in one commit (tables listed before
        their namespaces) and all deleted in one commit (namespaces listed first)."""
        spaces = ["a", "a.b", "a.b.c", "x", "x.y", "x.y.z"]
        tables = [f"{ns}.{t}" for ns in spaces for t in "ABC"]
        self.commit(
            vs,
            MAIN,
            *(Put(key(t), table(t)) for t in tables),
            *(Put(key(ns), namespace(ns)) for ns in spaces),
        )
        assert len(list(vs.get_entries(MAIN))) == 24
        self.commit(vs, MAIN, *(Delete(key(ns)) for ns in spaces), *(Delete(key(t)) for t in tables))
        assert list(vs.get_entries(MAIN)) == []

    def test_namespaces_created_with_their_content_in_one_commit(self, vs: VersionStore) -> None:
        """A commit may create x, x.y and x.y.t together."""
        self.commit(
            vs,
            MAIN,
            Put(key("x"), namespace("x")),
            Put(key("x.y"), namespace("x.y")),
            Put(key("x.y.t"), table("t")),
        )
        assert {str(e.key) for e in vs.get_entries(MAIN)} == {"x", "x.y", "x.y.t"}

    def test_existing_content_is_updated_without_parent_checks_failing(self, vs: VersionStore) -> None:
        """Only new keys are checked: updating ns.t while ns exists needs nothing else."""
        self.commit(vs, MAIN, Put(key("ns"), namespace("ns")), Put(key("ns.t"), table("v1")))
        cid = self.content_id(vs, MAIN, "ns.t")
        self.commit(vs, MAIN, Put(key("ns.t"), table("v2", cid)))
        assert self.values(vs, MAIN, ["ns.t"]) == {"ns.t": table("v2")}

    def test_namespace_cannot_be_overwritten_by_a_table(self, vs: VersionStore) -> None:
        """A Put of a table on a namespace key is invalid: without id it lacks the existing id, with
        the namespace's id it changes the content type."""
        self.commit(vs, MAIN, Put(key("key"), namespace("key")))
        ns_id = self.content_id(vs, MAIN, "key")
        with pytest.raises(InvalidOperation):
            self.commit(vs, MAIN, Put(key("key"), table("foo")))
        with pytest.raises(InvalidOperation) as e:
            self.commit(vs, MAIN, Put(key("key"), table("foo", ns_id)))
        assert [c.conflict_type for c in e.value.conflicts] == [ConflictType.PAYLOAD_DIFFERS]
        assert self.values(vs, MAIN, ["key"]) == {"key": namespace("key")}

    def test_rename_into_a_missing_namespace_is_rejected(self, vs: VersionStore) -> None:
        """A rename's new key needs its namespace like any new key; the table stays where it was."""
        self.commit(vs, MAIN, Put(key("table"), table("value")))
        content = vs.get_value(MAIN, key("table"))
        assert content is not None
        with pytest.raises(ReferenceConflictError, match=exactly("Namespace 'non_existing' must exist.")):
            self.commit(vs, MAIN, Delete(key("table")), Put(key("non_existing.tbl"), content))
        assert vs.get_value(MAIN, key("table")) == content

    @pytest.mark.parametrize(
        ("operation", "namespace_on_target", "delete_on_target"),
        [
            ("merge", "common", False),
            ("merge", "source-only", False),
            ("merge", "common", True),
            ("transplant", "common", False),
            ("transplant", "source-only", False),
            ("transplant", "common", True),
        ],
    )
    def test_merge_and_transplant_check_namespaces_on_the_target(
        self, vs: VersionStore, operation: str, namespace_on_target: str, delete_on_target: bool
    ) -> None:
        """ns.foo is created on a branch. Merging or transplanting it works when ns exists on the
        target (from the common ancestor) or comes along from the source; when ns was deleted on the
        target after the fork, the result would orphan ns.foo: "Namespace 'ns' must exist."."""
        source = branch("branch")
        if namespace_on_target == "common":
            fork = self.commit(vs, MAIN, Put(key("ns"), namespace("ns")), Put(key("ns2"), namespace("ns2")))
        else:
            fork = self.commit(vs, MAIN, Put(key("ns2"), namespace("ns2")))
        vs.create_reference(source, fork)
        sequence = []
        if namespace_on_target == "source-only":
            sequence.append(self.commit(vs, source, Put(key("ns"), namespace("ns"))))
        sequence.append(self.commit(vs, source, Put(key("ns.foo"), table("foo"))))
        sequence.append(self.commit(vs, source, Put(key("ns2.bar"), table("bar"))))
        self.commit(vs, MAIN, Put(key("unrelated-table"), table("bar")))
        if delete_on_target:
            self.commit(vs, MAIN, Delete(key("ns")))
        head = self.head(vs, MAIN)

        def run() -> object:
            if operation == "merge":
                return vs.merge(source, MAIN)
            return vs.transplant(MAIN, None, sequence)

        if delete_on_target:
            with pytest.raises(ReferenceConflictError, match=exactly("Namespace 'ns' must exist.")):
                run()
            assert self.head(vs, MAIN) == head
        else:
            run()
            assert self.values(vs, MAIN, ["ns.foo", "ns2.bar"]) == {
                "ns.foo": table("foo"),
                "ns2.bar": table("bar"),
            }

    def test_merged_namespace_deletion_must_leave_the_target_namespace_empty(self, vs: VersionStore) -> None:
        """The source deleted the (empty) namespace ns while the target put a table into it: the merge
        would orphan that table, so it is rejected with NAMESPACE_NOT_EMPTY."""
        base = self.commit(vs, MAIN, Put(key("ns"), namespace("ns")))
        source = branch("source")
        vs.create_reference(source, base)
        self.commit(vs, source, Delete(key("ns")))
        self.commit(vs, MAIN, Put(key("ns.t"), table("t")))
        with pytest.raises(ReferenceConflictError, match=exactly("Namespace 'ns' is not empty.")):
            vs.merge(source, MAIN)
        assert self.values(vs, MAIN, ["ns", "ns.t"]) == {"ns": namespace("ns"), "ns.t": table("t")}

    @pytest.mark.lochkit_requires("store_config")
    @pytest.mark.store_config(namespace_validation=False)
    def test_without_validation_content_needs_no_namespaces(self, vs: VersionStore) -> None:
        """With ``namespace_validation=False`` a commit may put name.spaced.table with no namespaces,
        and a namespace with children may be deleted."""
        self.commit(vs, MAIN, Put(key("name.spaced.table"), table("foo")))
        self.commit(vs, MAIN, Put(key("ns"), namespace("ns")), Put(key("ns.t"), table("t")))
        self.commit(vs, MAIN, Delete(key("ns")))
        assert {str(e.key) for e in vs.get_entries(MAIN)} == {"name.spaced.table", "ns.t"}

    @pytest.mark.lochkit_requires("store_config")
    @pytest.mark.store_config(namespace_validation=False)
    @pytest.mark.parametrize("operation", ["merge", "transplant"])
    def test_without_validation_merge_and_transplant_need_no_namespaces(
        self, vs: VersionStore, operation: str
    ) -> None:
        """With validation off, merging or transplanting keys without namespaces succeeds."""
        root = self.commit(vs, MAIN, Put(key("dummy"), table("dummy")))
        source = branch("branch")
        vs.create_reference(source, root)
        c1 = self.commit(vs, source, Put(key("name.spaced.table"), table("foo")))
        c2 = self.commit(vs, source, Put(key("another.table"), table("bar")))
        self.commit(vs, MAIN, Put(key("other"), table("o")))
        if operation == "merge":
            assert vs.merge(source, MAIN).applied
        else:
            assert vs.transplant(MAIN, None, [c1, c2]).applied
        assert self.values(vs, MAIN, ["name.spaced.table", "another.table"]) == {
            "name.spaced.table": table("foo"),
            "another.table": table("bar"),
        }
