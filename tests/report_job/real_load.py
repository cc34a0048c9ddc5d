"""A short real load run: writer threads committing to one branch of a real repository through
lochkit's version store, recorded as a run directory (run.json + events.parquet) by the load tool's
own writer. Writers race on the branch head, so lost compare-and-swaps are retried for real."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from loadgen.runs import Event, RunDirectory
from loadgen.targets.in_process import in_process_target
from persist_spi.config import StoreConfig
from persist_spi.registry import backend_factory
from persist_spi.versionstore.content import ContentKey, IcebergTable
from persist_spi.versionstore.errors import ReferenceConflictError, ReferenceRetryFailureError
from persist_spi.versionstore.meta import CommitMeta
from persist_spi.versionstore.operations import Put
from persist_spi.versionstore.refs import branch

COMMIT = "commitMultipleOperations"


def run_load(
    backend: str,
    url: str | None,
    run_dir: Path,
    *,
    commits_per_writer: int = 40,
    puts: tuple[int, ...] = (1, 10),
    config: StoreConfig | None = None,
) -> Path:
    adapter = backend_factory(backend).create(url)
    with in_process_target(
        adapter, backend=backend, provisioning="embedded", url=url, config=config
    ) as target:
        main = branch(target.api.default_branch())
        with RunDirectory(
            run_dir,
            command="test-load",
            argv=["test-load"],
            target=target.facts(),
            parameters={
                "scenario": "asymmetric",
                "policy": "nessie",
                "commits_per_writer": commits_per_writer,
            },
            seed=1,
        ) as run:

            def writer(index: int, n_puts: int) -> None:
                name = f"writer-{index}-{n_puts}put"
                for i in range(commits_per_writer):
                    ops = [
                        Put(
                            ContentKey.of(f"w{index}_c{i}_t{p}"),
                            IcebergTable(metadata_location=f"s3://b/{i}/{p}"),
                        )
                        for p in range(n_puts)
                    ]
                    start_wall, start = time.time_ns(), time.perf_counter_ns()
                    outcome, kind, attempts, commit_hash = "ok", None, 1, None
                    try:
                        result = target.api.commit(main, None, CommitMeta(message=f"{name} {i}"), ops)
                        attempts, commit_hash = result.attempts, str(result.hash)
                    except ReferenceRetryFailureError:
                        outcome, kind = "retry-timeout", "ReferenceRetryFailure"
                    except ReferenceConflictError:
                        outcome, kind = "conflict", "REFERENCE_CONFLICT"
                    except Exception as e:  # recorded, as a load tool does, instead of ending the writer
                        outcome, kind = "error", type(e).__name__
                    run.events.add(
                        Event(
                            start_wall,
                            time.perf_counter_ns() - start,
                            name,
                            COMMIT,
                            outcome,
                            n_puts,
                            attempts,
                            kind,
                            main.name,
                            commit_hash,
                        )
                    )

            threads = [threading.Thread(target=writer, args=(i, p)) for i, p in enumerate(puts)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            run.events.close()
            run.finish("finished", {"events": run.events.rows})
    return run_dir
