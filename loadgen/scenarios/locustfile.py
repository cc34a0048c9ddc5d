"""lochkit's locustfile: Nessie's perftest simulations against a lochkit backend or a Nessie server.

``lochkit scenario NAME ...`` runs locust with this file; it can also be given to ``locust -f``
directly (with ``--scenario NAME`` and the scenario's user classes, as ``lochkit scenario --dry-run``
prints them). Every locust process (local, master or worker) opens the target from the same target
options; the master or the local process runs the scenario's setup once before users start. A
backend one process alone can open (inmemory, rocksdb) is the exception: each worker loads a store
of its own and sets it up, and the master opens none. Each process that runs users writes its own
run directory (``run.json``, ``events.parquet``), the master a ``run.json`` with the totals of all
workers.

Importing locust first matters: it monkey-patches the standard library for gevent, which must
happen before anything imports ``ssl`` (boto3, urllib3).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import time
from pathlib import Path
from typing import Any

import locust  # noqa: F401  (first: gevent's monkey-patching)
from locust import events
from locust import log as locust_log
from locust.runners import MasterRunner, WorkerRunner

from loadgen.scenarios import SCENARIOS
from loadgen.scenarios.commit_to_branch import CommitToBranchUser  # noqa: F401  (locust's user classes)
from loadgen.scenarios.create_many_branches import CreateManyBranchesUser  # noqa: F401
from loadgen.scenarios.key_list_spilling import KeyListSpillingUser  # noqa: F401
from loadgen.scenarios.mixed_workloads import MixedReader, MixedUiUser, MixedWriter  # noqa: F401
from loadgen.scenarios.run import CURRENT, ScenarioRun
from persist_spi import hints

_resources = contextlib.ExitStack()
#: How hints name this command's options (locust parses them, not lochkit's command line).
_HINTS = hints.for_command("lochkit scenario", ("--url", "--provision", hints.ALLOW_EXISTING_DATA))
_state: dict[str, Any] = {}


def add_arguments(parser: Any) -> None:
    """lochkit's options on locust's parser (also printed by ``lochkit scenario NAME --help``)."""
    from loadgen.targets.opening import add_target_arguments
    from persist_spi.versionstore.policies import POLICY_NAMES

    add_target_arguments(parser, short_options=False, writes_test_data=True)
    group = parser.add_argument_group("lochkit scenario")
    # Set by 'lochkit scenario NAME' (or given to 'locust -f' directly): NAME names it to users.
    group.add_argument("--scenario", choices=sorted(SCENARIOS), help=argparse.SUPPRESS)
    group.add_argument(
        "--policy",
        choices=POLICY_NAMES,
        help="commit policy (default: the version store's, nessie unless its config says otherwise)",
    )
    group.add_argument("--sim-rate", type=float, default=0.0, help="ops/s per user, 0: as fast as possible")
    group.add_argument("--out", metavar="DIR", help="run directory (default: a new one under .lochkit/runs/)")
    group.add_argument(
        "--metrics-port", type=int, metavar="PORT", help="serve Prometheus metrics on this port (0: any)"
    )
    for scenario in SCENARIOS.values():
        importlib.import_module(scenario.module).add_arguments(group)
    # The scenario's options (not the target's, which is opened at start-up) can be edited in the
    # web UI; they are read again when a test starts.
    for action in group._group_actions:
        action.include_in_web_ui = action.dest.startswith("sim_") or action.dest == "policy"
        action.is_secret = action.is_required = action.is_multiple = False


def _fail(message: str, code: int = 2) -> None:
    """End the process with ``message`` and exit code ``code`` (2: a usage error)."""
    print(f"lochkit scenario: {message}", file=sys.stderr)
    _resources.close()
    raise SystemExit(code)


def _web_ui_address_problem(host: str, port: int) -> str | None:
    """Why the web UI could not listen on ``host:port`` (locust binds it later, in a greenlet
    whose failure would otherwise leave an idle run that ends "ok"), or None."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gevent's listener
            probe.bind((host, port))
    except OSError as e:
        shown = f"[{host}]" if ":" in host else host or "*"
        return (
            f"the web UI cannot listen on {shown}:{port} ({e.strerror}); is another locust or server "
            "using it? Choose another with --web-port"
        )
    return None


def _own_store_per_process(opts: Any) -> bool:
    """Whether the target is an in-process backend that one process alone can open (``inmemory``
    lives in its process's memory, ``rocksdb`` locks its directory). Each locust process that runs
    users then loads a store of its own: in distributed mode the master opens none (it runs no
    users; a store it set up would be seen by no worker, and a directory it held would be locked
    for a worker on the same machine), and every worker runs the scenario's setup on its own."""
    from loadgen.targets.opening import NESSIE
    from persist_spi.registry import UnknownBackend, backend_factory

    backend = getattr(opts, "backend", None)
    if getattr(opts, "nessie_uri", None) or backend in (None, NESSIE):
        return False
    try:
        return not backend_factory(backend).capabilities.multi_process
    except UnknownBackend:  # open_target says what is wrong with the name
        return False


def _open(environment: Any, web_ui: Any = None, **_: Any) -> None:
    from loadgen.runs import RunDirectory, default_run_dir
    from loadgen.targets.opening import TargetError, check_target_arguments, open_target
    from loadgen.targets.policy import apply_policy
    from persist_spi.errors import InputError, LochkitError, Unreachable
    from persist_spi.exit_codes import UNAVAILABLE
    from provisioning.base import ProvisioningFailed

    opts = environment.parsed_options
    if opts is None or getattr(opts, "list_commands", False):
        return
    if opts.scenario is None:
        _fail("give --scenario NAME (" + ", ".join(sorted(SCENARIOS)) + ")")
    if web_ui is not None:  # checked before a target is opened, so nothing is started for nothing
        problem = _web_ui_address_problem(web_ui.host, web_ui.port)
        if problem is not None:
            _fail(problem)
    scenario = SCENARIOS[opts.scenario]
    module = importlib.import_module(scenario.module)
    master = isinstance(environment.runner, MasterRunner)
    role = "master" if master else "worker" if isinstance(environment.runner, WorkerRunner) else "local"
    own_store = _own_store_per_process(opts)
    target = None
    try:
        check_target_arguments(opts)  # also where this process opens no target (a master)
        options = module.options(opts)
        if not (master and own_store):
            with hints.running(_HINTS):  # messages name this command's options
                target = _resources.enter_context(open_target(opts, purpose="load"))
            opts.policy = apply_policy(target, opts.policy)
    except InputError as e:
        _fail(str(e))
    except Unreachable as e:
        _fail(str(e), UNAVAILABLE)
    except (TargetError, LochkitError, ProvisioningFailed, OSError) as e:
        _fail(str(e), 1)
    # Names derived from the start time (branch, table prefix) must stay the same when the options
    # are read again at test start (a worker receives the master's).
    for derived, option in (("branch", "sim_branch"), ("table_prefix", "sim_table_prefix")):
        if getattr(opts, option, None) is None and hasattr(options, derived):
            setattr(opts, option, getattr(options, derived))
    if opts.metrics_port is not None:
        from loadgen.metrics import serve_metrics

        metrics = serve_metrics(opts.metrics_port)
        _resources.callback(metrics.stop)
        if target is not None:
            metrics.instrument(target)
    if scenario.name == "mixed-workloads":
        module.set_populations(options)
    path = Path(opts.out) if opts.out else default_run_dir(f"scenario-{scenario.name}")
    if role == "worker":
        path = path / f"worker-{environment.runner.client_id}"
    parameters = {k: v for k, v in vars(opts).items() if isinstance(v, str | int | float | bool | type(None))}
    parameters["locust_role"] = role
    facts = target.facts() if target is not None else _per_worker_store_facts(opts)
    run_dir = RunDirectory(path, f"scenario-{scenario.name}", sys.argv, facts, parameters, None)
    run = None if target is None else ScenarioRun(target, options, None if master else run_dir.events)
    _state.update(
        policy=opts.policy,
        environment=environment,
        run_dir=run_dir,
        scenario=scenario,
        module=module,
        role=role,
        run=run,
        setup_on_each_worker=role == "worker" and own_store,
        set_up_for=None,
        started=time.perf_counter(),
    )
    if run is None:
        return
    # The scenario's setup runs where the users' data lives, here at start-up (so --run-time is the
    # users' time alone): on the master or the local process, or on each worker that has a store of
    # its own. Users wait for CURRENT, so it runs before any of them starts.
    setup = getattr(module, "setup", None)
    sets_up = role == "local" or (master and not own_store) or _state["setup_on_each_worker"]
    if setup is not None and sets_up:
        setup(run)
    _state["set_up_for"] = options
    if _state.pop("test_started_early", False):
        # The master's spawn message (and its options) reached this worker while it was starting,
        # possibly after the options above were read: its users must run with the master's.
        _setup(environment)
    CURRENT.append(run)


def _per_worker_store_facts(opts: Any) -> dict[str, Any]:
    """The master's ``target`` in run.json when each worker has a store of its own."""
    return {
        "kind": "lochkit",
        "backend": opts.backend,
        "server_version": "",
        "provisioning": "embedded",
        "url": opts.url,
        "notes": [
            (
                f"{opts.backend} can be opened by one process only: each worker loaded a store of its "
                "own and ran the scenario's setup on it; the master opened none"
            )
        ],
    }


def _setup(environment: Any, **_: Any) -> None:
    """Before users start: the scenario's options again (the web UI may have changed them, and a
    worker receives the master's), its setup where each worker has a store of its own, and its
    commit policy."""
    from loadgen.targets.policy import apply_policy

    if "scenario" not in _state:
        # A worker connects to the master before locust fires init: it may be told to start its
        # users, with the master's options, before _open ran. _open applies them when done.
        _state["test_started_early"] = True
        return
    module, opts = _state["module"], environment.parsed_options
    options = module.options(opts)
    if _state["scenario"].name == "mixed-workloads":
        module.set_populations(options)
    run: ScenarioRun | None = _state["run"]
    if run is None:
        return
    run.options = options
    setup = getattr(module, "setup", None)
    if setup is not None and _state["setup_on_each_worker"] and _state["set_up_for"] != options:
        setup(run)  # new options (from the master's web UI): the worker's own store needs them too
        _state["set_up_for"] = options
    if opts.policy != _state["policy"]:
        apply_policy(run.target, opts.policy)
        _state["policy"] = opts.policy


def _finish(environment: Any, **_: Any) -> None:
    if "run_dir" not in _state:
        return
    # Locust may fire this before it stops the users; they must not outlive the target.
    with contextlib.suppress(Exception):
        environment.runner.stop()
    scenario = _state["scenario"]
    elapsed = time.perf_counter() - _state["started"]
    run: ScenarioRun | None = _state["run"]
    if _state["role"] == "master":
        doc = _master_totals(environment.stats, scenario.commit_action, elapsed)
        errors = _non_conflict_errors(environment.stats)
    else:
        assert run is not None
        doc = run.totals(scenario.commit_action, elapsed)
        doc["locust"] = {
            "requests": sum(run.outcomes.values()),
            "failures": sum(n for (_, outcome), n in run.outcomes.items() if outcome != "ok"),
        }
        errors = run.errors
    # A greenlet of locust's own that died (its web UI's server, say) is logged by locust, which
    # would exit 2 for it; the exit code set here replaces locust's, so the run must fail too.
    crashed = locust_log.unhandled_greenlet_exception
    _state["run_dir"].finish("ok" if errors == 0 and not crashed else "failed", doc)
    print(f"Run: {_state['run_dir'].path}", file=sys.stderr)
    if crashed:
        print("lochkit scenario: locust failed (its error is logged above); the run failed", file=sys.stderr)
    # Conflicts are expected under contention (KO in Nessie's simulations); other errors fail the run.
    environment.process_exit_code = 1 if errors or crashed else 0
    _resources.close()


def _master_totals(stats: Any, commit_action: str, elapsed_s: float) -> dict[str, Any]:
    """The totals of every worker, from the statistics they reported to the master."""

    def latency(entry: Any) -> dict[str, float]:
        if entry is None or entry.num_requests == 0:
            return {"p50_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
        return {
            "p50_ms": round(float(entry.get_response_time_percentile(0.5)), 3),
            "p99_ms": round(float(entry.get_response_time_percentile(0.99)), 3),
            "max_ms": round(float(entry.max_response_time), 3),
        }

    entries = {name: entry for (name, _), entry in stats.entries.items()}
    commit = entries.get(commit_action)
    commits = (commit.num_requests - commit.num_failures) if commit is not None else 0
    errors = _non_conflict_errors(stats)
    return {
        "elapsed_s": round(elapsed_s, 3),
        "commits": commits,
        "commits_per_s": round(commits / elapsed_s, 1) if elapsed_s > 0 else 0.0,
        "conflicts": stats.total.num_failures - errors,
        "errors": errors,
        "calls": stats.total.num_requests,
        "commit_latency": latency(commit),
        "latency_by_action": {name: latency(e) for name, e in sorted(entries.items())},
        "locust": {"requests": stats.total.num_requests, "failures": stats.total.num_failures},
    }


def _stop_when_users_are_done(**_: Any) -> None:
    """Users that ran their count (commits, branches) stop; a local run then ends by itself."""
    import gevent
    from locust.runners import LocalRunner

    runner = _state["environment"].runner if "environment" in _state else None
    if not isinstance(runner, LocalRunner):
        return

    def watch() -> None:
        while CURRENT and CURRENT[0].finished < runner.target_user_count:
            gevent.sleep(0.25)
        if _state["environment"].parsed_options.headless:
            runner.quit()
        else:
            runner.stop()  # the web UI stays up for another run

    gevent.spawn(watch)


def _non_conflict_errors(stats: Any) -> int:
    return sum(e.occurrences for e in stats.errors.values() if "Conflict" not in str(getattr(e, "error", "")))


events.init_command_line_parser.add_listener(add_arguments)  # type: ignore[no-untyped-call]
events.init.add_listener(_open)  # type: ignore[no-untyped-call]
events.test_start.add_listener(_setup)  # type: ignore[no-untyped-call]
events.spawning_complete.add_listener(_stop_when_users_are_done)  # type: ignore[no-untyped-call]
events.quitting.add_listener(_finish)  # type: ignore[no-untyped-call]
