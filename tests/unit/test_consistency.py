"""``lochkit check``'s checker on repositories damaged on purpose: each kind of damage is found,
half-done reference changes are repaired through the reads' own recovery, and a healthy repository
passes. The repositories live in the in-memory backend; the campaign runs the checker on every
real backend."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest

from backends.inmemory import InMemoryBackendFactory
from persist_spi.adapter import ObjRow
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.check.consistency import RepositoryChecker
from persist_spi.check.findings import CheckReport, ExitCode, Severity
from persist_spi.config import StoreConfig
from persist_spi.ids import EMPTY_OBJ_ID, ObjId
from persist_spi.indexes.store_index import deserialize_index
from persist_spi.keys import StoreKey
from persist_spi.logic.commit_lease import LeaseState, lease_ref_name
from persist_spi.logic.reference_logic import ReferenceLogic
from persist_spi.objs import CommitObj, ContentValueObj, IndexObj
from persist_spi.persist import Persist
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch, tag
from persist_spi.versionstore.store import VersionStore
from reports.check_parquet import FINDINGS_FILE, REFERENCES_FILE, RUNS_FILE, write_parquet

MAIN = branch("main")


def _repository(commits: int = 40) -> tuple[AdapterPersist, VersionStore]:
    """A repository whose small index limits make commits spill into stripes and segments."""
    adapter = InMemoryBackendFactory().create()
    persist = AdapterPersist(
        adapter,
        StoreConfig(repository_id="r", max_incremental_index_size=1024, max_serialized_index_size=2048),
    )
    vs = VersionStore(persist)
    vs.repository.initialize("main")
    for i in range(commits):
        table = IcebergTable(metadata_location=f"s3://bucket/table-{i}/metadata.json")
        vs.commit(MAIN, None, CommitMeta(f"commit {i}"), [Put(ContentKey.of(f"table-{i:03}"), table)])
    head = vs.reference(MAIN).hash
    vs.create_reference(branch("dev"), head)
    vs.create_reference(tag("v1"), head, message="release 1")
    return persist, vs


def _check(persist: Persist, repair: bool = False) -> CheckReport:
    return RepositoryChecker(persist, backend="inmemory", address="test", repair=repair).run()


def _codes(report: CheckReport, severity: Severity = Severity.ERROR) -> set[str]:
    return {f.check for f in report.findings if f.severity is severity}


def _commits(persist: Persist, vs: VersionStore) -> list[CommitObj]:
    return list(vs.commits.commit_log(vs.reference(MAIN).hash))


def test_healthy_repository_is_consistent() -> None:
    persist, _ = _repository()
    report = _check(persist)
    assert report.exit_code is ExitCode.CONSISTENT, report.findings
    assert report.counters.commits >= 40
    assert report.counters.index_segments > 0  # the walk really went through spilled segments
    assert report.counters.values >= 40
    assert {r.name for r in report.references} >= {"int/refs", "int/repo", "refs/heads/main", "refs/tags/v1"}


def test_missing_commit_breaks_the_chain() -> None:
    persist, vs = _repository()
    victim = _commits(persist, vs)[10]
    persist.delete_obj(victim.id)
    report = _check(persist)
    assert "missing-commit" in _codes(report)
    assert report.exit_code is ExitCode.ERRORS
    assert not next(r for r in report.references if r.name == "refs/heads/main").complete


def test_missing_content_value_is_found() -> None:
    persist, vs = _repository()
    element = vs.commits.indexes.commit_operations(_commits(persist, vs)[5])[0]
    assert element.op.value is not None
    persist.delete_obj(element.op.value)
    report = _check(persist)
    assert _codes(report) == {"missing-value"}
    assert "table-034" in next(f.message for f in report.findings if f.check == "missing-value")


def test_missing_index_segment_is_found() -> None:
    persist, _ = _repository()
    segment = next(o for o in persist.scan_all_objects() if isinstance(o, IndexObj))
    persist.delete_obj(segment.id)
    assert _codes(_check(persist)) & {"missing-index-segment", "missing-reference-index"}


def test_undecodable_object_is_named() -> None:
    persist, vs = _repository()
    victim = _commits(persist, vs)[3]
    persist.adapter.upsert_objs("r", [ObjRow(victim.id, "c", None, b"\x01garbage", 1)])
    report = _check(persist)
    assert "undecodable-commit" in _codes(report)
    assert any(f.subject == str(victim.id) for f in report.findings)


def test_segment_that_does_not_decode_is_found() -> None:
    persist, _ = _repository()
    segment = next(o for o in persist.scan_all_objects() if isinstance(o, IndexObj))
    persist.upsert_obj(IndexObj(id=segment.id, index=b"\x02\x05garbage"))
    assert "undecodable-index-segment" in _codes(_check(persist))


def test_segment_listed_for_other_keys_is_found() -> None:
    persist, _ = _repository()
    segments = [o for o in persist.scan_all_objects() if isinstance(o, IndexObj)]
    first, other = segments[0], segments[-1]
    assert deserialize_index(first.index).first() != deserialize_index(other.index).first()
    persist.upsert_obj(IndexObj(id=first.id, index=other.index))
    assert "stripe-range-mismatch" in _codes(_check(persist))


def test_wrong_sequence_number_is_found() -> None:
    persist, vs = _repository()
    victim = _commits(persist, vs)[7]
    persist.upsert_obj(dataclasses.replace(victim, seq=victim.seq + 5))
    assert "sequence-mismatch" in _codes(_check(persist))


def test_row_without_registration_is_an_error() -> None:
    persist, vs = _repository(commits=3)
    from persist_spi.references import Reference

    persist.add_reference(Reference("refs/heads/sneaky", vs.reference(MAIN).hash, False, 1))
    # A name int/refs never saw cannot be found (the contract has no listing of rows) ...
    assert _check(persist).exit_code is ExitCode.CONSISTENT
    # ... but a row for a name int/refs knows and no longer lists is.
    dev = persist.fetch_reference("refs/heads/dev")
    assert dev is not None
    ReferenceLogic(persist).delete_reference("refs/heads/dev", dev.pointer)
    persist.add_reference(Reference("refs/heads/dev", dev.pointer, False, 2))
    assert "unregistered-reference" in _codes(_check(persist))


def test_half_done_create_is_reported_and_repaired() -> None:
    persist, vs = _repository(commits=3)
    refs = ReferenceLogic(persist)
    refs.commit_create_reference("refs/heads/half", vs.reference(MAIN).hash, None, 12345)
    report = _check(persist)
    assert _codes(report, Severity.HALF_DONE) == {"half-done-create"}
    assert report.exit_code is ExitCode.HALF_DONE
    repaired = _check(persist, repair=True)
    assert _codes(repaired, Severity.REPAIRED) == {"half-done-create"}
    assert repaired.exit_code is ExitCode.CONSISTENT
    assert persist.fetch_reference("refs/heads/half") is not None
    assert _check(persist).exit_code is ExitCode.CONSISTENT


@pytest.mark.parametrize("stopped_after", ["mark", "removal", "removal-then-more"])
def test_half_done_delete_is_reported_and_repaired(stopped_after: str) -> None:
    persist, _ = _repository(commits=3)
    refs = ReferenceLogic(persist)
    dev = persist.fetch_reference("refs/heads/dev")
    assert dev is not None
    persist.mark_reference_as_deleted(dev)
    if stopped_after != "mark":
        refs.commit_delete_reference(dev, None)
    if stopped_after == "removal-then-more":
        refs.create_reference("refs/heads/later", EMPTY_OBJ_ID)
    assert _codes(_check(persist), Severity.HALF_DONE) == {"half-done-delete"}
    assert _check(persist, repair=True).exit_code is ExitCode.CONSISTENT
    assert persist.fetch_reference("refs/heads/dev") is None
    assert _check(persist).exit_code is ExitCode.CONSISTENT


def test_missing_registration_record_and_tag_info_are_errors() -> None:
    persist, vs = _repository(commits=2)
    v1 = persist.fetch_reference("refs/tags/v1")
    assert v1 is not None
    assert v1.extended_info_obj is not None
    persist.delete_obj(v1.extended_info_obj)
    registry = vs.commits.complete_index_of(persist.fetch_existing_reference("int/refs").pointer)
    element = registry.get(StoreKey("refs/heads/dev"))
    assert element is not None
    assert element.op.value is not None
    persist.delete_obj(element.op.value)
    assert {"missing-tag-info", "bad-registration"} <= _codes(_check(persist))


def test_uninitialised_repository_has_its_own_exit_code() -> None:
    persist = AdapterPersist(InMemoryBackendFactory().create(), StoreConfig(repository_id="none"))
    report = _check(persist)
    assert report.exit_code is ExitCode.NO_REPOSITORY
    assert "never initialised" in report.findings[0].message


def test_missing_int_repo_is_an_error() -> None:
    persist, _ = _repository(commits=1)
    repo = persist.fetch_existing_reference("int/repo")
    persist.mark_reference_as_deleted(repo)
    persist.purge_reference(repo.with_deleted(True))
    assert "missing-int-repo" in _codes(_check(persist))


def test_max_commits_stops_walks_with_a_note() -> None:
    persist, _ = _repository(commits=30)
    report = RepositoryChecker(persist, backend="inmemory", address="test", max_commits=5).run()
    assert "walk-truncated" in _codes(report, Severity.NOTE)
    assert report.exit_code is ExitCode.CONSISTENT


def test_parquet_tables_follow_the_documented_schema(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    persist, _ = _repository(commits=5)
    value = next(o for o in persist.scan_all_objects() if isinstance(o, ContentValueObj))
    persist.delete_obj(ObjId(value.id))
    report = _check(persist)
    paths = write_parquet(report, tmp_path, "run-1", datetime.datetime(2025, 1, 2, tzinfo=datetime.UTC))
    assert [p.name for p in paths] == [FINDINGS_FILE, REFERENCES_FILE, RUNS_FILE]
    findings = pq.read_table(tmp_path / FINDINGS_FILE).to_pylist()
    assert findings[0]["check"] == "missing-value"
    assert findings[0]["run_id"] == "run-1"
    runs = pq.read_table(tmp_path / RUNS_FILE).to_pylist()
    assert runs[0]["exit_code"] == 1
    assert runs[0]["values_checked"] == report.counters.values
    references = pq.read_table(tmp_path / REFERENCES_FILE).column_names
    assert references[-6:] == ["reference", "kind", "head", "commits_checked", "complete", "errors"]


def test_index_segment_with_keys_out_of_order_is_found() -> None:
    from persist_spi.indexes.store_index import index_from_elements
    from persist_spi.indexes.varint import encode_varint

    persist, _ = _repository()
    segment = next(o for o in persist.scan_all_objects() if isinstance(o, IndexObj))
    first, second = list(deserialize_index(segment.index))[:2]
    # Two elements in the wrong order: each alone is a valid index (version byte, count, element);
    # the second follows with "strip all of the previous key" (its bytes and terminator).
    one, two = (index_from_elements([e]).serialize() for e in (second, first))
    swapped = one + encode_varint(len(second.key.encode()) + 2) + two[2:]
    assert [e.key for e in deserialize_index(swapped)] == [second.key, first.key]
    persist.upsert_obj(IndexObj(id=segment.id, index=swapped))
    assert "index-out-of-order" in _codes(_check(persist))


def test_keys_must_be_in_nessies_utf16_order() -> None:
    from persist_spi.check.chains import keys_ascend

    assert keys_ascend(["a", "b", "c"])
    assert keys_ascend(["\U00010000", "\uffff"])  # UTF-16 order, as Nessie and lochkit write it
    # Code-point order (earlier lochkit versions): lookups of such keys can miss.
    assert not keys_ascend(["\uffff", "\U00010000"])
    assert not keys_ascend(["b", "a", "c"])


def _coordinated_repository() -> tuple[AdapterPersist, VersionStore]:
    """Commits through the ``coordinated`` policy, which keeps a lease row per branch."""
    persist = AdapterPersist(
        InMemoryBackendFactory().create(), StoreConfig(repository_id="r", commit_policy="coordinated")
    )
    vs = VersionStore(persist)
    vs.repository.initialize("main")
    vs.create_reference(branch("dev"), EMPTY_OBJ_ID)
    for i, target in enumerate([MAIN, branch("dev"), MAIN]):
        table = IcebergTable(metadata_location=f"s3://bucket/table-{i}/metadata.json")
        vs.commit(target, None, CommitMeta(f"commit {i}"), [Put(ContentKey.of(f"table-{i}"), table)])
    return persist, vs


def test_commit_leases_are_checked_as_leases_not_as_commit_chains() -> None:
    persist, _ = _coordinated_repository()
    leases = [lease_ref_name(b) for b in ("refs/heads/main", "refs/heads/dev")]
    assert all(row is not None for row in persist.fetch_references(leases))  # the policy wrote them
    report = _check(persist)
    assert report.exit_code is ExitCode.CONSISTENT, report.findings
    assert {r.name: r.kind for r in report.references if r.kind == "lease"} == dict.fromkeys(leases, "lease")
    walked = {r.name: r.commits_checked for r in report.references}
    assert walked["refs/heads/main"] == 2  # the branches' chains were still walked, to their roots
    assert walked["refs/heads/dev"] == 1


def test_a_lease_that_is_not_a_lease_state_is_reported() -> None:
    persist, _ = _coordinated_repository()
    name = lease_ref_name(MAIN.full_name)
    row = persist.fetch_reference_for_update(name)
    assert row is not None
    persist.update_reference_pointer(row, ObjId(b"\x01" * 32))  # an object id where a lease belongs
    row = persist.fetch_reference_for_update(name)
    assert row is not None
    backwards = lease_ref_name("refs/heads/dev")
    dev = persist.fetch_reference_for_update(backwards)
    assert dev is not None
    persist.update_reference_pointer(dev, LeaseState(next_ticket=1, serving=2).encode())
    report = _check(persist)
    assert report.exit_code is ExitCode.ERRORS
    assert {(f.check, f.reference) for f in report.findings if f.severity is Severity.ERROR} == {
        ("bad-commit-lease", name),
        ("bad-commit-lease", backwards),
    }
