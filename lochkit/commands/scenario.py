"""``lochkit scenario NAME [options] [locust options]``: one of Nessie's perftest simulations on locust.

Everything after NAME goes to locust with lochkit's locustfile (``loadgen/scenarios/locustfile.py``): the
target options (``--backend``, ``--url``, ``--uri``...), the scenario's ``--sim-*`` options,
``--policy``, ``--out``, ``--metrics-port``, and any locust option (``--users``, ``-r``, ``-t``,
``--master``, ``--worker``, ``--json-file``...). ``-t`` takes lochkit's duration forms too; locust's
``-u`` is ``--users`` here, since ``-u`` is ``--uri`` in lochkit's other commands. Headless unless
``--web`` is given. See ``docs/scenarios.md`` for each scenario and the web UI and master/worker
recipes."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from persist_spi.errors import InputError, UsageError

if TYPE_CHECKING:
    from loadgen.scenarios import Scenario

NAME = "scenario"
HELP = "Nessie's perftest simulations on locust (commit-to-branch, create-many-branches, ...; see --help)"
OWN_PARSER = True


def locust_argv(name: str, rest: Sequence[str]) -> list[str]:
    """The locust command line for scenario ``name`` with the user's further arguments."""
    from loadgen.scenarios import SCENARIOS

    if name not in SCENARIOS:
        raise UsageError(f"unknown scenario '{name}'; scenarios: {', '.join(sorted(SCENARIOS))}")
    import importlib.util

    # Found, not imported: importing it would import locust, which monkey-patches this process.
    spec = importlib.util.find_spec("loadgen.scenarios.locustfile")
    assert spec is not None
    assert spec.origin is not None
    locustfile = Path(spec.origin)
    rest = list(rest)
    web = "--web" in rest
    if web:
        rest.remove("--web")
    rest = _run_time_for_locust(rest)
    argv = [sys.executable, "-m", "locust", "-f", str(locustfile), "--scenario", name]
    if not web and "--worker" not in rest:
        argv.append("--headless")
    if not any(a in ("-u", "--users") or a.startswith("--users=") for a in rest):
        argv += ["--users", str(_default_users(name, rest))]
    return [*argv, *_duration_defaults(SCENARIOS[name], rest), *rest, *SCENARIOS[name].users]


#: locust's own spelling of -t: whole seconds, or whole hours, minutes and seconds (1h30m).
_LOCUST_RUN_TIME = re.compile(r"\d+|(?=\d)(\d+h)?(\d+m)?(\d+s)?")


def _run_time_for_locust(rest: Sequence[str]) -> list[str]:
    """``rest`` with the value of ``-t`` / ``--run-time`` in locust's spelling: a value in any of
    lochkit's duration forms (PT30S, 500ms, 2.5) becomes whole seconds, rounded up; one locust
    reads already is left as given. ValueError naming the forms for anything else."""
    from loadgen.durations import parse_duration

    def locust_value(option: str, value: str) -> str:
        if _LOCUST_RUN_TIME.fullmatch(value.strip()):
            return value
        return f"{math.ceil(parse_duration(value, option))}s"

    out = list(rest)
    for i, arg in enumerate(out):
        option, equals, value = arg.partition("=")
        if option == "--run-time" and equals:
            out[i] = f"--run-time={locust_value(option, value)}"
        elif arg in ("-t", "--run-time") and i + 1 < len(out):
            out[i + 1] = locust_value(arg, out[i + 1])
    return out


def _duration_defaults(scenario: Scenario, rest: Sequence[str]) -> list[str]:
    """Nessie's defaults that depend on the run's duration, for options the user did not give:
    key-list-spilling and mixed-workloads run for their simulations' default durations (60 s and
    20 s), and commit-to-branch given a duration commits until it ends (``sim.commits`` is 0 then,
    100 otherwise). Added on the command line, so --dry-run shows them and a master sends them to
    its workers (which ignore -t)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("-t", "--run-time")
    parser.add_argument("--sim-commits")
    given, _ = parser.parse_known_args(rest)
    defaults: list[str] = []
    run_time = given.run_time
    if run_time is None and scenario.default_run_time is not None and "--worker" not in rest:
        run_time = scenario.default_run_time
        defaults += ["-t", run_time]
    if scenario.name == "commit-to-branch" and given.sim_commits is None and _is_duration(run_time):
        defaults += ["--sim-commits", "0"]
    return defaults


def _is_duration(run_time: str | None) -> bool:
    """Whether locust's -t value limits the run (0, in any unit, does not)."""
    return run_time is not None and re.fullmatch(r"(0+[hms]?)+", run_time.strip()) is None


def _default_users(name: str, rest: Sequence[str]) -> int:
    """One user (Nessie's sim.users default); mixed-workloads: the sum of its populations."""
    if name != "mixed-workloads":
        return 1
    parser = argparse.ArgumentParser(add_help=False)
    for population in ("writers", "readers", "ui-users"):
        parser.add_argument(f"--sim-{population}-users", type=int, default=1)
    known, _ = parser.parse_known_args(rest)
    return int(known.sim_writers_users + known.sim_readers_users + known.sim_ui_users_users)


def run_raw(argv: Sequence[str]) -> int:
    from loadgen.scenarios import SCENARIOS

    if not argv or argv[0] in ("-h", "--help"):
        print(
            "usage: lochkit scenario NAME [target options] [--sim-* options] [--policy P] [--out DIR]\n"
            "                        [--metrics-port PORT] [--web] [--users N] [locust options]\n\n"
            f"scenarios: {', '.join(sorted(SCENARIOS))}\n"
            "'lochkit scenario NAME --help' lists lochkit's options; 'python -m locust --help' locust's."
        )
        return 0 if argv else 2
    if argv[0] in SCENARIOS and ("-h" in argv or "--help" in argv):
        _print_help(argv[0])
        return 0
    dry_run = "--dry-run" in argv
    rest = [a for a in argv[1:] if a != "--dry-run"]
    if any(a == "--scenario" or a.startswith("--scenario=") for a in rest):
        print(
            f"lochkit scenario: the scenario is NAME, the first argument ({argv[0]}); leave out --scenario",
            file=sys.stderr,
        )
        return 2
    if "-u" in rest:
        # locust's short form, which means --uri in lochkit's other commands.
        print(
            "lochkit scenario: -u is deprecated and will be removed; use --users (in lochkit, -u is --uri)",
            file=sys.stderr,
        )
        rest = ["--users" if a == "-u" else a for a in rest]
    try:
        command = locust_argv(argv[0], rest)
    except InputError as e:
        print(f"lochkit scenario: {e}", file=sys.stderr)
        return 2
    if dry_run:
        print(" ".join(command))
        return 0
    os.execv(command[0], command)
    return 0  # not reached


def _print_help(name: str) -> None:
    """lochkit's options of the scenario (locust's own --help does not show a locustfile's)."""
    from loadgen.durations import FORMS
    from loadgen.scenarios.locustfile import add_arguments

    parser = argparse.ArgumentParser(
        prog=f"lochkit scenario {name}",
        description="Options lochkit adds to locust's (see 'python -m locust --help' for those: --users "
        "N, -r spawn rate, -t run time, --web-*, --master/--worker, --json-file, ...). -t takes "
        f"lochkit's durations ({FORMS}), rounded up to whole seconds. --web: the web UI instead of "
        "--headless. --dry-run: print the locust command line.",
    )
    add_arguments(parser)
    parser.print_help()
