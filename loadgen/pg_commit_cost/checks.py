"""The refusals before anything starts: configurations that do not exist, outputs that cannot be
written, a machine without /proc's figures or without PostgreSQL's server binaries."""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

from conformance import snippets
from loadgen.pg_commit_cost.errors import CannotMeasure
from loadgen.pg_commit_cost.options import CONFIGS, NAME
from loadgen.pg_commit_cost.proc import PROC


def parse_configs(text: str) -> tuple[str, ...]:
    """``--configs``' comma-separated names, in order and without repeats."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in CONFIGS]
    if unknown or not names:
        what = (
            f"unknown configuration {', '.join(repr(n) for n in unknown)}" if unknown else "no configuration"
        )
        raise CannotMeasure(
            f"--configs {text!r}: {what}; give a comma-separated list of {', '.join(CONFIGS)}"
        )
    return names


def proc_problem(proc: Path = PROC) -> str | None:
    """Why this machine's /proc cannot give the CPU figures; None if it can."""
    needed = [proc / "self" / "stat", proc / "self" / "schedstat", proc / "thread-self" / "schedstat"]
    missing = [str(path) for path in needed if not path.is_file()]
    if not missing:
        return None
    if not (proc / "self" / "stat").is_file():
        return (
            f"it reads every process's CPU time from Linux's {proc}, and this {platform.system()} "
            f"system has no {missing[0]}; run it on Linux"
        )
    return (
        f"it reads CPU and run-queue times from {proc}/PID/schedstat, and this kernel does not "
        f"provide {', '.join(missing)}; run it on a Linux kernel built with CONFIG_SCHED_INFO "
        "(every distribution kernel is)"
    )


def binaries_problem(bindir: Path | None) -> str | None:
    """Why no private PostgreSQL server can be started here; None if its binaries were found."""
    if bindir is not None:
        return None
    return (
        "it starts a PostgreSQL server of its own, and PostgreSQL's server binaries (initdb, postgres) "
        "are not installed: looked in $LOCHKIT_POSTGRES_BINDIR, /usr/lib/postgresql/*/bin and the PATH. "
        "Install them with 'lochkit servers install postgres' (as root; on Debian it is apt-get install "
        "postgresql), or set LOCHKIT_POSTGRES_BINDIR to the directory holding initdb"
    )


def check_machine() -> None:
    """Refuse, before anything starts, a machine the measurement cannot run on."""
    from provisioning.servers.postgres import server_bindir

    for problem in (proc_problem(), binaries_problem(server_bindir())):
        if problem:
            raise CannotMeasure(f"{NAME} cannot run here: {problem}")


def check_outputs(args: argparse.Namespace) -> None:
    for option in ("--markdown-out", "--json"):
        problem = snippets.out_problem(option, getattr(args, option.lstrip("-").replace("-", "_")))
        if problem:
            raise CannotMeasure(problem)
    if args.report and args.json:
        raise CannotMeasure("--json saves a new run and --report reads saved ones; give one of them")
