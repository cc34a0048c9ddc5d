"""The whole campaign on one or more backends: crash injection, server faults, network faults,
linearizability at scale and fuzzing, with the figures docs/reliability-overview.md publishes.

Each part runs on a repository of its own. Servers are started by the provisioning machinery in
their crash-safe configuration (acknowledged writes survive a SIGKILL of the server), once per
backend, and stopped at the end; Toxiproxy is started once for all backends.
"""

from __future__ import annotations

import contextlib
import datetime
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance import snippets
from persist_spi.logic.ownership import guard_database, new_scratch_id
from persist_spi.registry import backend_factory
from provisioning.base import RestartOptions, ServerControl
from provisioning.registry import provisioners
from reliability.crash_campaign import crash_sweep, random_kills
from reliability.fault_run import FaultRunResult
from reliability.figures import PARTS, BackendFigures, CampaignReport, FuzzFigures, LeaseFigures
from reliability.lease_crash import lease_crashes
from reliability.network_faults import TOXICS, network_faults
from reliability.scale import linearizability_at_scale
from reliability.server_faults import server_restarts
from reliability.target import Target
from reliability.verification import RunVerdict

Log = Callable[[str], None]


@dataclass(frozen=True)
class Profile:
    name: str
    #: Steps per operation around its commit point (None: every step).
    sweep_steps: int | None
    kill_seconds: float
    restarts: int
    toxic_seconds: float
    #: Toxic names to apply (None: all of :data:`reliability.network_faults.TOXICS`).
    toxics: tuple[str, ...] | None
    scale_writers: int
    scale_commits: int
    fuzz_inputs: int
    #: Commits per writer where one compare-and-swap costs several milliseconds under contention.
    scale_commits_slow: int | None = None
    #: Scale writers as threads of one process even where processes are possible (CI: on 2 shared
    #: cores eight processes spend their time waiting for CPU, 4x slower than threads measured).
    scale_threads: bool = False
    #: Lease crashes: seconds of kills of the ``coordinated`` lease's holder, and the pause between
    #: kills (each kill also waits until the branch moved again: about the lease's expiry).
    lease_seconds: float = 20
    lease_kill_every: tuple[float, float] = (0.5, 1.5)

    def commits_for(self, backend: str) -> int:
        if backend in SLOW_COMPARE_AND_SWAP and self.scale_commits_slow is not None:
            return self.scale_commits_slow
        return self.scale_commits


#: Measured here (2 shared cores): with 8 writers on one branch, Cassandra's LWTs, DynamoDB Local and
#: FerretDB (whose writes lochkit serialises per process) make 4-6 commits/s; PostgreSQL about 40.
SLOW_COMPARE_AND_SWAP = frozenset({"cassandra", "scylladb", "dynamodb", "mongodb"})

PROFILES = {
    "ci": Profile(
        "ci",
        sweep_steps=1,
        kill_seconds=4,
        restarts=1,
        toxic_seconds=2,
        toxics=("latency", "reset-peer", "half-open", "down"),
        scale_writers=8,
        scale_commits=200,
        scale_commits_slow=25,
        scale_threads=True,
        fuzz_inputs=10_000,
        lease_seconds=20,
        lease_kill_every=(0.5, 1.5),
    ),
    "long": Profile(
        "long",
        sweep_steps=None,
        kill_seconds=120,
        restarts=10,
        toxic_seconds=10,
        toxics=None,
        scale_writers=8,
        scale_commits=1000,
        fuzz_inputs=1_000_000,
        lease_seconds=300,
        lease_kill_every=(1.0, 5.0),
    ),
}


@dataclass
class _Backend:
    target: Target
    control: ServerControl | None
    server: str
    #: Why its server cannot be restarted on its data (its provisioner's declaration), if so.
    not_restartable: str | None = None
    #: Options its restart test commits with, and why (its provisioner's declaration), if any.
    restart_options: RestartOptions | None = None


@contextlib.contextmanager
def _backend(name: str, url: str | None, work: Path, log: Log) -> Iterator[_Backend]:
    """The backend's server (restartable, crash-safe) or store, for the whole campaign. Every part
    works in a scratch repository of its own (see :mod:`persist_spi.logic.ownership`)."""
    repository = new_scratch_id("torture")
    if url is not None:
        target = Target.open(name, url, repository_id=repository)
        try:
            yield _Backend(target, None, "external server")
        finally:
            target.close()
        return
    if name == "rocksdb":
        yield _Backend(
            Target.open(name, f"rocksdb://{work / 'rocksdb'}", repository_id=repository), None, "embedded"
        )
        return
    if name == "inmemory":
        yield _Backend(
            Target.open(name, f"inmemory://{repository}", repository_id=repository), None, "embedded"
        )
        return
    provisioner = provisioners().get(name)
    if provisioner is None:
        raise LookupError(f"{name}: no local server is known; pass --url to run against your own")
    not_restartable = provisioner.not_restartable.get(name)
    if not_restartable is None:
        log(f"{name}: starting a restartable local server")
        provisioned = provisioner.restartable_process(name, work / "server")
    else:
        log(f"{name}: starting a local server (it cannot be restarted on its data)")
        provisioned = provisioner.local_process(name, work / "server")
    try:
        target = Target.open(name, provisioned.url, provisioned.options, repository_id=repository)
        try:
            yield _Backend(
                target,
                provisioned.control,
                provisioned.server,
                not_restartable,
                provisioner.restart_options.get(name),
            )
        finally:
            target.close()
    finally:
        provisioned.stop()


def guard_servers(urls: dict[str, str], *, allow_existing_data: bool) -> None:
    """Refuse (ExistingDataRefused) a user's server that holds someone's data, before anything
    starts: the campaign writes only into scratch repositories, and only into a database that
    holds nobody else's unless the user opts in."""
    for name, url in urls.items():
        adapter = backend_factory(name).create(url, {})
        try:
            adapter.setup_schema()
            guard_database(
                adapter,
                allow_existing=allow_existing_data,
                writes_into="only into scratch repositories of its own, and erases them when nothing failed",
            )
        finally:
            adapter.close()


def _erase_scratch(target: Target, figures: BackendFigures, log: Log) -> None:
    """On the user's server: the campaign's repositories go when it passed, and stay (named) when
    it found a problem, for a look with ``lochkit check --repository``."""
    made = sorted(target.made_repositories)
    if not made:
        return
    if figures.problems:
        log(f"{target.backend}: kept the campaign's repositories for inspection: {', '.join(made)}")
        return
    target.erase(made)
    log(f"{target.backend}: erased the campaign's repositories ({len(made)})")


def _fresh(target: Target, part: str) -> Target:
    """The same backend on a repository of the part's own."""
    return target.for_repository(f"{target.repository_id}-{part}")


def _ledger(figures: BackendFigures, verdict: RunVerdict | None) -> None:
    if verdict is None:
        return
    ledger = verdict.ledger
    figures.commits_acknowledged += ledger.acknowledged
    figures.commits_checked += verdict.commits_checked
    figures.ambiguous += ledger.ambiguous
    figures.lost += len(ledger.lost)
    figures.duplicated += len(ledger.duplicated)


def _faults(figures: BackendFigures, result: FaultRunResult) -> None:
    figures.longest_call = max(figures.longest_call, result.longest_call)
    figures.add_errors(result.errors_by_type())
    _ledger(figures, result.verdict)
    figures.problems += [f"{result.kind}: {p}" for p in result.problems]


def run_backend(
    name: str,
    profile: Profile,
    parts: Sequence[str],
    seed: int,
    work: Path,
    *,
    url: str | None,
    toxiproxy_api: str | None,
    log: Log,
) -> BackendFigures:
    figures = BackendFigures(name)
    started = time.monotonic()
    with _backend(name, url, work, log) as backend:
        target = backend.target
        figures.server = backend.server
        figures.writers = "processes" if target.multi_process else "threads in one process"
        if not target.multi_process:
            figures.not_applicable["writer processes"] = target.single_process_reason
        runs = _Parts(name, figures, log)
        if "crash" in parts:
            if not target.capabilities.durable:
                figures.not_applicable["crash"] = "not durable: the data dies with the process"
            else:
                runs.run("crash injection", lambda: _crash(target, profile, seed, work, figures, log))
        if "lease-crash" in parts:
            if not target.capabilities.durable:
                figures.not_applicable["lease crash"] = "not durable: the data dies with the process"
            else:
                runs.run("lease crashes", lambda: _lease(target, profile, seed, work, figures, log))
        if "server" in parts:
            control = backend.control
            if control is None:
                if url is not None:
                    figures.not_applicable["server faults"] = "external server: lochkit cannot restart it"
                else:
                    figures.not_applicable["server faults"] = (
                        backend.not_restartable or "embedded: no server process"
                    )
            else:
                runs.run(
                    "server restarts",
                    lambda: _server(
                        target, control, backend.restart_options, profile, seed, work, figures, log
                    ),
                )
        if "network" in parts:
            if target.url is None or name in ("rocksdb", "inmemory") or toxiproxy_api is None:
                figures.not_applicable["network faults"] = (
                    "embedded: no network between lochkit and the store"
                )
            else:
                api = toxiproxy_api
                runs.run("network faults", lambda: _network(target, api, profile, seed, work, figures, log))
        if "scale" in parts:
            runs.run("linearizability at scale", lambda: _scale(target, profile, seed, work, figures, log))
        if url is not None:
            _erase_scratch(target, figures, log)
    figures.seconds = time.monotonic() - started
    return figures


@dataclass
class _Parts:
    """Runs the parts of one backend; one failing does not keep the others from running."""

    backend: str
    figures: BackendFigures
    log: Log

    def run(self, what: str, part: Callable[[], None]) -> None:
        self.log(f"{self.backend}: {what}")
        started = time.monotonic()
        try:
            part()
        except Exception as e:  # reported with the part's name; the campaign goes on
            self.figures.problems.append(f"{what} failed: {type(e).__name__}: {e}")
            self.log(f"  {what} FAILED: {type(e).__name__}: {e}")
        self.log(f"  ({what}: {time.monotonic() - started:.0f} s)")


def _crash(
    target: Target, profile: Profile, seed: int, work: Path, figures: BackendFigures, log: Log
) -> None:
    sweep = crash_sweep(
        _fresh(target, "sweep"), work / "sweep", steps_per_operation=profile.sweep_steps, log=log
    )
    figures.crash_points += sweep.points
    figures.crash_kills += sweep.kills
    figures.half_done_repaired += sweep.repaired
    figures.problems += [f"crash sweep: {p}" for p in sweep.problems]
    kills = random_kills(
        _fresh(target, "kills"),
        work / "kills",
        writers=3 if target.multi_process else 1,
        threads=1 if target.multi_process else 3,
        branches=["k1", "k2"],
        seconds=profile.kill_seconds,
        kill_every=(0.5, 2.0),
        seed=seed,
        log=log,
    )
    figures.random_kills += kills.kills
    figures.problems += [f"random kills: {p}" for p in kills.problems]
    _ledger(figures, kills.verdict)


def _lease(
    target: Target, profile: Profile, seed: int, work: Path, figures: BackendFigures, log: Log
) -> None:
    result = lease_crashes(
        _fresh(target, "lease"),
        work / "lease",
        writers=3,
        seconds=profile.lease_seconds,
        kill_every=profile.lease_kill_every,
        seed=seed,
        slow_commits=target.backend in SLOW_COMPARE_AND_SWAP,
        log=log,
    )
    figures.lease = LeaseFigures(
        writers=result.writers,
        kills=len(result.kills),
        kills_holding=result.kills_holding,
        expired=result.expired,
        longest_stall=result.longest_stall,
        lease_seconds=result.lease_seconds,
        stall_bound=result.stall_bound,
        fewest_commits_after_a_kill=result.fewest_commits_after_a_kill,
        tickets_skipped=result.skipped,
    )
    figures.problems += [f"lease crashes: {p}" for p in result.problems]
    _ledger(figures, result.verdict)


def _server(
    target: Target,
    control: ServerControl,
    declared: RestartOptions | None,
    profile: Profile,
    seed: int,
    work: Path,
    figures: BackendFigures,
    log: Log,
) -> None:
    restarts = _fresh(target, "restarts")
    if declared is not None:
        restarts = restarts.with_options(declared.options)
        figures.declared["server faults"] = declared.describe()
        log(f"  {target.backend}: {declared.describe()}")
    result = server_restarts(
        restarts, control, work / "restarts", restarts=profile.restarts, seed=seed, log=log
    )
    figures.server_restarts += result.faults
    _faults(figures, result)


def _network(
    target: Target, api: str, profile: Profile, seed: int, work: Path, figures: BackendFigures, log: Log
) -> None:
    result = network_faults(
        _fresh(target, "network"),
        api,
        work / "network",
        toxics=[t for t in TOXICS if profile.toxics is None or t.name in profile.toxics],
        seconds_each=profile.toxic_seconds,
        seed=seed,
        log=log,
    )
    figures.toxics += result.faults
    _faults(figures, result)


def _scale(
    target: Target, profile: Profile, seed: int, work: Path, figures: BackendFigures, log: Log
) -> None:
    commits = profile.commits_for(target.backend)
    scale = linearizability_at_scale(
        _fresh(target, "scale"),
        work / "scale",
        writers=profile.scale_writers,
        commits=commits,
        threads=profile.scale_threads,
        seed=seed,
        log=log,
    )
    mode = "processes" if scale.processes else "threads"
    figures.scale = f"{profile.scale_writers} {mode} x {commits}"
    if scale.verdict is not None:
        verdict = scale.verdict.linearizability.get("contended")
        figures.linearizable = verdict.linearizable if verdict is not None else None
    figures.history_operations = scale.history_operations
    figures.problems += [f"scale: {p}" for p in scale.problems]
    _ledger(figures, scale.verdict)


def run_fuzz(
    profile: Profile, seed: int, work: Path, log: Log, targets: Sequence[str] | None = None
) -> list[FuzzFigures]:
    from reliability.fuzz.engine import run_target
    from reliability.fuzz.targets import TARGETS

    out = []
    for name in targets or sorted(TARGETS):
        run = run_target(name, profile.fuzz_inputs, seed, work / "fuzz")
        out.append(
            FuzzFigures(
                name,
                run.engine,
                run.inputs,
                run.seconds,
                len(run.crashes) or int(bool(run.report)),
                TARGETS[name].description,
            )
        )
        state = (
            "ok"
            if run.ok
            else f"CRASH: {run.report.splitlines()[1] if len(run.report.splitlines()) > 1 else run.report}"
        )
        log(f"  fuzz {name:<24} {run.inputs:>9,} inputs in {run.seconds:6.1f} s ({run.engine}): {state}")
        if run.crashes:
            log(f"    crashing input kept at {run.crashes[0]}; add it under tests/fuzz_regressions/{name}/")
    return out


def run_campaign(
    backends: Sequence[str],
    profile: Profile,
    *,
    parts: Sequence[str] = PARTS,
    seed: int = 1,
    work: Path | None = None,
    urls: dict[str, str] | None = None,
    log: Log = print,
) -> CampaignReport:
    report = CampaignReport(
        profile.name,
        seed,
        tuple(p for p in PARTS if p in parts),
        started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        machine=snippets.machine(),
    )
    work = work or Path(tempfile.mkdtemp(prefix="lochkit-torture-"))
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        toxiproxy_api = None
        if "network" in parts and any(b not in ("rocksdb", "inmemory") for b in backends):
            from provisioning.servers.toxiproxy import start_toxiproxy

            proxy = start_toxiproxy(_mkdir(work / "toxiproxy"))
            stack.callback(proxy.stop)
            toxiproxy_api = proxy.api
        for name in backends if set(parts) - {"fuzz"} else ():  # --only fuzz: no backend to open
            try:
                figures = run_backend(
                    name,
                    profile,
                    parts,
                    seed,
                    _mkdir(work / name),
                    url=(urls or {}).get(name),
                    toxiproxy_api=toxiproxy_api,
                    log=log,
                )
                if set(parts) - {"fuzz"} and not figures.commits_checked:
                    # A run that verified nothing proves nothing (pytest's "no tests collected").
                    figures.problems.append("no commit was checked: no part requested ran here")
                report.backends.append(figures)
            except Exception as e:  # one backend's setup failing must not hide the others' figures
                report.problems.append(f"{name}: {type(e).__name__}: {e}")
                log(f"{name}: FAILED: {type(e).__name__}: {e}")
    if "fuzz" in parts:
        log("fuzzing every decoder")
        report.fuzz = run_fuzz(profile, seed, work, log)
        if not sum(f.inputs for f in report.fuzz):
            report.problems.append("fuzzing ran no input")
    report.seconds = time.monotonic() - started
    return report


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
