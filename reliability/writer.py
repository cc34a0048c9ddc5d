"""Campaign writers: processes (or threads) committing to shared branches and journaling what they
were told, so that a supervisor can kill them, take their database away, or break their network,
and then prove nothing they were promised was lost.

A writer's connection address travels to it inside its spec (through the multiprocessing pipe),
never on a command line or in a file: the run directory holds no password.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from persist_spi.adapter import BackendAdapter
from persist_spi.adapter_persist import AdapterPersist
from persist_spi.config import StoreConfig
from persist_spi.errors import LochkitError, RefConditionFailed, RefNotFound
from persist_spi.persist import Persist
from persist_spi.registry import backend_factory
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.errors import ReferenceConflictError, ReferenceRetryFailureError
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch
from persist_spi.versionstore.store import VersionStore
from reliability.history import RecordingPersist
from reliability.intercept import InterceptingPersist
from reliability.journal import Journal, read_journal
from reliability.lease_watch import LeaseWatch
from reliability.ledger import CommitLedger, message_for

T = TypeVar("T")

#: Commit attempts per token (each after a "maybe" that proved not landed).
MAX_ATTEMPTS_PER_TOKEN = 20
#: Exit code of a writer that met an error no documented type covers.
BUG_EXIT = 3


@dataclass(frozen=True)
class WriterSpec:
    backend: str
    url: str | None = field(repr=False)
    options: dict[str, str]
    repository_id: str
    writer: str
    branches: tuple[str, ...]
    run_dir: str
    #: Acknowledged commits to make per thread; None: until ``run_dir/stop`` exists.
    commits: int | None = None
    threads: int = 1
    record_history: bool = False
    seed: int = 0
    #: How long a writer keeps trying to learn whether a "maybe" commit landed.
    resolve_seconds: float = 120.0
    #: Store config changes (e.g. a longer commit timeout for slow servers, a commit policy).
    config: dict[str, int | str] = field(default_factory=dict)
    #: Journal the ``coordinated`` policy's lease (``lease-<writer>.jsonl``) and keep it this long
    #: (seconds, drawn between the two) before committing; None: no lease journal.
    lease_pause: tuple[float, float] | None = None


def key_for(token: str) -> ContentKey:
    return ContentKey.of("torture-" + token.replace(":", "-"))


def stop_file(run_dir: Path) -> Path:
    return run_dir / "stop"


def ledger_path(run_dir: Path, writer: str) -> Path:
    return run_dir / f"ledger-{writer}.jsonl"


def history_path(run_dir: Path, writer: str) -> Path:
    return run_dir / f"history-{writer}.jsonl"


def lease_path(run_dir: Path, writer: str) -> Path:
    return run_dir / f"lease-{writer}.jsonl"


class AmbiguityWatch(InterceptingPersist):
    """Notes whether any write of the current operation ended without a clear answer: then a
    failure reported afterwards (a retry timeout, a conflict with our own landed change) may hide
    a commit that landed."""

    def __init__(self, delegate: Persist) -> None:
        super().__init__(delegate)
        self._local = threading.local()

    @property
    def seen(self) -> bool:
        return bool(getattr(self._local, "seen", False))

    def reset(self) -> None:
        self._local.seen = False

    def intercept(self, method: str, args: tuple[Any, ...], call: Callable[[], T]) -> T:
        try:
            return call()
        except (RefConditionFailed, RefNotFound):
            raise
        except Exception:
            if method not in ("fetch_objs", "fetch_references"):
                self._local.seen = True
            raise


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:500]


class _Writer:
    """One committing thread: its token sequence, its ledger, its view of the store."""

    def __init__(self, spec: WriterSpec, writer: str, vs: VersionStore, watch: AmbiguityWatch) -> None:
        self.spec = spec
        self.writer = writer
        self.vs = vs
        self.watch = watch
        run_dir = Path(spec.run_dir)
        self.stop = stop_file(run_dir)
        path = ledger_path(run_dir, writer)
        self.previous = list(read_journal(path))
        self.ledger = CommitLedger(Journal(path), writer)
        self.rng = random.Random(f"{spec.seed}/{writer}/{len(self.previous)}")

    def run(self) -> None:
        sequence = self._resume()
        acked = 0
        while self.spec.commits is None or acked < self.spec.commits:
            if self.stop.exists():
                return
            target = self.spec.branches[self.rng.randrange(len(self.spec.branches))]
            if self.commit(f"{self.writer}:{sequence}", target):
                acked += 1
            sequence += 1

    def _resume(self) -> int:
        """After a restart: the next sequence number, once every token left in flight is resolved."""
        last: dict[str, dict[str, Any]] = {}
        sequence = 0
        for record in self.previous:
            last[record["tok"]] = record
            sequence = max(sequence, int(record["tok"].rsplit(":", 1)[1]) + 1)
        for token, record in last.items():
            if record["e"] in ("intent", "unknown"):
                intent = next(r for r in self.previous if r["tok"] == token and r["e"] == "intent")
                landed = self.resolve(token, intent["b"])
                if landed is not None:
                    self.ledger.resolved(token, landed)
        return sequence

    def commit(self, token: str, target: str) -> bool:
        """Commit ``token`` to ``target``; True once it is known to be on the branch."""
        for _ in range(MAX_ATTEMPTS_PER_TOKEN):
            self.ledger.intent(token, target)
            self.watch.reset()
            started = time.monotonic_ns()
            try:
                table = IcebergTable(metadata_location=f"s3://torture/{token}/metadata.json")
                result = self.vs.commit(
                    branch(target), None, CommitMeta(message_for(token)), [Put(key_for(token), table)]
                )
            except (ReferenceConflictError, ReferenceRetryFailureError) as e:
                if not self.watch.seen:
                    self.ledger.fail(token, describe(e), time.monotonic_ns() - started)
                    return False
                self.ledger.unknown(token, describe(e), time.monotonic_ns() - started)
            except LochkitError as e:
                self.ledger.unknown(token, describe(e), time.monotonic_ns() - started)
            else:
                self.ledger.ack(token, str(result.hash), time.monotonic_ns() - started)
                return True
            landed = self.resolve(token, target)
            if landed is None:
                return False  # stays "maybe"; the verification allows it at most once
            self.ledger.resolved(token, landed)
            if landed:
                return True
        return False

    def resolve(self, token: str, target: str) -> bool | None:
        """Whether ``token`` is on ``target``; None if the store cannot be read in time."""
        deadline = time.monotonic() + self.spec.resolve_seconds
        while True:
            try:
                return self.vs.get_value(branch(target), key_for(token)) is not None
            except LochkitError:
                if time.monotonic() > deadline or self.stop.exists():
                    return None
                time.sleep(0.2)


def run_writers(spec: WriterSpec) -> int:
    """Entry point of a writer process (or of in-process writer threads): 0, or BUG_EXIT when an
    error no documented type covers escaped (its traceback goes to ``bugs-<writer>.txt``)."""
    names = [spec.writer] if spec.threads == 1 else [f"{spec.writer}t{i}" for i in range(spec.threads)]
    bugs: list[str] = []
    adapter: BackendAdapter | None = None

    def one(name: str) -> None:
        try:
            assert adapter is not None
            persist: Persist = AdapterPersist(
                adapter, StoreConfig(repository_id=spec.repository_id).with_changes(**spec.config)
            )
            if spec.record_history:
                journal = Journal(history_path(Path(spec.run_dir), name))
                persist = RecordingPersist(
                    persist, journal, name, [branch(b).full_name for b in spec.branches]
                )
            if spec.lease_pause is not None:
                rng = random.Random(f"{spec.seed}/{name}/lease")
                persist = LeaseWatch(
                    persist,
                    Journal(lease_path(Path(spec.run_dir), name)),
                    name,
                    pause=spec.lease_pause,
                    rng=rng,
                )
            watch = AmbiguityWatch(persist)
            _Writer(spec, name, VersionStore(watch), watch).run()
        except Exception:
            bugs.append(f"{name}: {traceback.format_exc()}")

    try:
        adapter = _open_with_retries(spec)
    except Exception:
        bugs.append(f"{spec.writer}: {traceback.format_exc()}")
    if adapter is not None:
        try:
            threads = [threading.Thread(target=one, args=(n,), name=n) for n in names]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            adapter.close()
    if bugs:
        (Path(spec.run_dir) / f"bugs-{spec.writer}.txt").write_text("\n".join(bugs))
        return BUG_EXIT
    return 0


def _open_with_retries(spec: WriterSpec) -> BackendAdapter:
    """A restarted writer may come up while its server is still down: wait for it, boundedly."""
    deadline = time.monotonic() + spec.resolve_seconds
    while True:
        try:
            return backend_factory(spec.backend).create(spec.url, spec.options)
        except LochkitError:
            if time.monotonic() > deadline or stop_file(Path(spec.run_dir)).exists():
                raise
            time.sleep(0.5)


#: Loggers of the drivers; psycopg sets its own level, so the root's does not reach it.
DRIVER_LOGGERS = ("psycopg", "cassandra", "pymongo", "botocore", "urllib3")


def quiet_driver_logs() -> None:
    """Drivers log every reconnection attempt as a warning; during a fault run that is thousands
    of lines. What matters reaches the journals and the figures."""
    logging.getLogger().setLevel(logging.ERROR)
    for name in DRIVER_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def writer_process_main(spec: WriterSpec) -> None:
    """``multiprocessing`` target: the exit code tells the supervisor about escaped bugs."""
    quiet_driver_logs()
    raise SystemExit(run_writers(spec))
