"""``lochkit generate``'s options beyond the done-when command: --continue-on-error, -d pacing,
--type, --author and -m, and the ``prob`` key function, each asserted on what lands in the
repository (a RocksDB repository the test reads back) and on the run directory; and the mistakes
--nessie-store refuses (its use is in test_generate_on_provisioned_nessie.py)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from backends.inmemory import InMemoryBackendFactory
from loadgen.contentgen.generate import GenerateOptions, Generator, key_pool
from loadgen.contentgen.recording import Recorder
from loadgen.targets.in_process import in_process_target
from persist_spi.versionstore.content import (
    UDF,
    ContentKey,
    DeltaLakeTable,
    IcebergView,
)
from persist_spi.versionstore.refs import branch

from .run_files import commit_events, run_json

if TYPE_CHECKING:  # fixtures of conftest.py
    from .conftest import CliResult, RocksRepository

Cli = Callable[..., "CliResult"]


def tables(rocks: RocksRepository, ref: str = "main") -> dict[ContentKey, str]:
    return {k: t for k, t in rocks.keys(ref).items() if t != "NAMESPACE"}


def test_continue_on_error_reports_each_conflict_and_keeps_going(cli: Cli, rocks: RocksRepository) -> None:
    # Tables at k.t0 and k.t1; the run puts views at k.t0..k.t3. A key's content type never
    # changes, so every commit that draws t0 or t1 conflicts (PAYLOAD_DIFFERS), the others land.
    head = rocks.add_tables("main", [ContentKey.of("k", "t0"), ContentKey.of("k", "t1")])
    done = cli(
        "generate", *rocks.args, "--type", "ICEBERG_VIEW", "--key-pattern", "k.t${seq,0}", "-t", "4",
        "-n", "12", "--seed", "3", "--continue-on-error", "--out", "run",
    )  # fmt: skip
    assert done.code == 0, done.err  # as Nessie: skipped conflicts are printed, not an error

    events = commit_events(Path("run"))
    conflicts = [e for e in events if e["outcome"] == "conflict"]
    landed = [e for e in events if e["outcome"] == "ok"]
    assert conflicts  # the seed draws both kinds
    assert landed
    assert len(conflicts) + len(landed) == 12
    assert {e["error_kind"] for e in conflicts} == {"PAYLOAD_DIFFERS"}
    assert done.err.count("Conflict: ") == len(conflicts)
    totals = run_json(Path("run"))["totals"]
    assert (totals["commits"], totals["conflicts"]) == (len(landed), len(conflicts))
    log = rocks.log("main")
    new = [str(e.hash) for e in log[: [str(e.hash) for e in log].index(head)]]
    assert list(reversed(new)) == [e["commit_hash"] for e in landed]
    kinds = tables(rocks)
    assert kinds[ContentKey.of("k", "t0")] == kinds[ContentKey.of("k", "t1")] == "ICEBERG_TABLE"
    assert set(kinds.values()) == {"ICEBERG_TABLE", "ICEBERG_VIEW"}


def test_duration_pauses_its_share_after_each_commit() -> None:
    pauses: list[float] = []
    target = in_process_target(
        InMemoryBackendFactory().create(), backend="inmemory", provisioning="embedded", url=None
    )
    with target:
        options = GenerateOptions(num_commits=4, duration_s=2.0, seed=1)
        Generator(target.api, options, Recorder(None), print, print, sleep=pauses.append).run()
        assert len(list(target.api.get_commits(branch("main")))) == 4
    assert pauses == [0.5] * 4


def test_duration_spreads_the_commits_over_the_run(cli: Cli) -> None:
    done = cli("generate", "--backend", "inmemory", "-n", "3", "-d", "PT0.6S", "--out", "run")
    assert done.code == 0, done.err
    starts = [e["start"] for e in commit_events(Path("run"))]
    assert len(starts) == 3
    # Lower bounds only (a sleep never ends early), so a busy machine cannot fail this.
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(starts)]
    assert all(gap >= 0.19 for gap in gaps), gaps
    assert run_json(Path("run"))["totals"]["elapsed_s"] >= 0.59


@pytest.mark.parametrize(
    ("type_name", "model"),
    [("ICEBERG_VIEW", IcebergView), ("DELTA_LAKE_TABLE", DeltaLakeTable), ("UDF", UDF)],
)
def test_type_generates_content_of_that_type(
    cli: Cli, rocks: RocksRepository, type_name: str, model: type
) -> None:
    done = cli(
        "generate", *rocks.args, "--type", type_name, "-n", "4", "-t", "3", "--puts-per-commit", "2",
        "--key-pattern", "v.x${seq,0}", "--seed", "2",
    )  # fmt: skip
    assert done.code == 0, done.err
    kinds = tables(rocks)
    assert kinds
    assert set(kinds.values()) == {type_name}
    with rocks.open() as target:
        values = target.api.get_values(branch("main"), list(kinds))
    assert all(isinstance(v, model) for v in values.values())
    if model is DeltaLakeTable:
        assert all(v.metadata_location_history and v.last_checkpoint for v in values.values())  # type: ignore[attr-defined]


def test_author_and_message_go_into_every_commit(
    cli: Cli, rocks: RocksRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = cli("generate", *rocks.args, "-n", "3", "--author", "alice", "-m", "nightly load")
    assert given.code == 0, given.err
    monkeypatch.setenv("USER", "bob")
    default = cli("generate", *rocks.args, "-n", "2")
    assert default.code == 0, default.err
    metas = [e.meta for e in reversed(rocks.log("main"))]
    assert [(m.message, m.authors) for m in metas[:3]] == [("nightly load", ("alice",))] * 3
    assert [(m.message, m.authors) for m in metas[3:]] == [
        ("Commit #0 of 2 on main", ("bob",)),  # the USER environment variable, as Nessie's default
        ("Commit #1 of 2 on main", ("bob",)),
    ]
    assert all(isinstance(m.author_time, datetime) for m in metas)


PROB_PATTERN = "p.t${prob,0.25,seq,0}"


def test_prob_draws_a_new_value_with_its_probability_under_a_seed() -> None:
    options = GenerateOptions(num_tables=400, key_pattern=PROB_PATTERN, seed=11)
    pool = [int(k.name[1:]) for k in key_pool(options, "label", random.Random(11))]
    assert pool == [int(k.name[1:]) for k in key_pool(options, "label", random.Random(11))]
    changes = [b - a for a, b in itertools.pairwise(pool) if b != a]
    assert set(changes) == {1}  # a new value is always the inner function's next one
    # 399 draws at 0.25: the share of new values stays inside 0.15..0.35 (over 4 standard deviations).
    assert 0.15 < len(changes) / 399 < 0.35


def test_prob_keys_are_the_ones_that_land(cli: Cli, rocks: RocksRepository) -> None:
    done = cli("generate", *rocks.args, "-n", "30", "-t", "40", "--key-pattern", PROB_PATTERN, "--seed", "11")
    assert done.code == 0, done.err
    options = GenerateOptions(num_tables=40, key_pattern=PROB_PATTERN, seed=11)
    pool = set(key_pool(options, "label", random.Random(11)))  # the run draws its pool first
    assert 1 < len(pool) < 40  # repeats: prob kept the previous value for some tables
    landed = set(tables(rocks))
    assert landed
    assert landed <= pool


@pytest.mark.parametrize(
    ("target", "store", "message"),
    [
        (["--backend", "inmemory"], "ROCKSDB", "--nessie-store chooses the store of a Nessie server"),
        (["--uri", "http://127.0.0.1:9/api/v2"], "ROCKSDB", "--nessie-store chooses the store"),
        (["--backend", "nessie"], "disk", "--nessie-store DISK: use one of IN_MEMORY, ROCKSDB"),
    ],
)
def test_nessie_store_mistakes_are_one_line_and_start_nothing(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, target: list[str], store: str, message: str
) -> None:
    from provisioning import registry

    def no_provisioning(*_: object, **__: object) -> None:
        raise AssertionError("nothing may be started for a mistake")

    monkeypatch.setattr(registry, "provision", no_provisioning)
    done = cli("generate", *target, "--nessie-store", store, "-n", "1")
    assert done.code == 2  # a usage error
    [line] = done.err.strip().splitlines()
    assert line.startswith("lochkit generate: ")
    assert message in line
    assert not Path(".lochkit").exists()
