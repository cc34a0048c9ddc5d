"""One reference operation in a process that kills itself at a chosen step (or runs it to the end,
noting its steps, when no crash point is given)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.registry import backend_factory
from persist_spi.versionstore.content import IcebergTable
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from reliability.crashpoints import CrashingPersist, CrashPoint
from reliability.journal import Journal, read_journal
from reliability.ledger import CommitLedger, message_for
from reliability.writer import key_for, ledger_path, quiet_driver_logs

OPERATIONS = ("commit", "create", "delete")


@dataclass(frozen=True)
class CrashOpSpec:
    backend: str
    url: str | None = field(repr=False)
    options: dict[str, str]
    repository_id: str
    run_dir: str
    #: commit (to branch ``name``), create (branch ``name`` at main's head), delete (branch ``name``)
    operation: str
    name: str
    token: str
    crash_point: CrashPoint | None
    writer: str = "crash"


def steps_path(run_dir: Path, token: str) -> Path:
    """The steps the operation reached, one journal line each, written before each step runs."""
    return run_dir / f"steps-{token.replace(':', '-')}.jsonl"


def reached_steps(run_dir: Path, token: str) -> list[str]:
    return [record["step"] for record in read_journal(steps_path(run_dir, token))]


def crash_op_main(spec: CrashOpSpec) -> None:
    quiet_driver_logs()
    run_dir = Path(spec.run_dir)
    steps = Journal(steps_path(run_dir, spec.token))
    adapter = backend_factory(spec.backend).create(spec.url, spec.options)
    persist = CrashingPersist(
        AdapterPersist(adapter, StoreConfig(repository_id=spec.repository_id)),
        spec.crash_point,
        on_step=lambda step: steps.write({"step": step}),
    )
    vs = VersionStore(persist)
    ledger = CommitLedger(Journal(ledger_path(run_dir, spec.writer)), spec.writer)
    target = branch(spec.name)
    if spec.operation == "commit":
        ledger.intent(spec.token, spec.name)
        persist.arm()
        result = vs.commit(
            target, None, CommitMeta(message_for(spec.token)), [Put(key_for(spec.token), IcebergTable())]
        )
        persist.disarm()
        ledger.ack(spec.token, str(result.hash), 0)
    elif spec.operation == "create":
        head = vs.reference(branch("main")).hash
        persist.arm()
        vs.create_reference(target, head)
    elif spec.operation == "delete":
        current = vs.reference(target).hash
        persist.arm()
        vs.delete_reference(target, current)
    else:
        raise ValueError(f"unknown operation {spec.operation}; use one of {', '.join(OPERATIONS)}")
    persist.disarm()
    adapter.close()
