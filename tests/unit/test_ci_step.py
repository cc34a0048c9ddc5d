"""CI's ``step``: every run after the set-up goes on whatever the others gave, the script exits with
the code of the first that failed, and pytest's "no tests collected" (exit code 5) fails it."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

STEPS = """
set -euo pipefail
source .ci/step.sh
{steps}
echo "status $status"
printf '%s\\n' "${{results[@]}}"
exit "$status"
"""


def _run(*steps: str) -> subprocess.CompletedProcess[str]:
    script = STEPS.format(steps="\n".join(steps))
    return subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=False)


def test_every_step_runs_and_the_first_failure_is_the_exit_code() -> None:
    done = _run("step first true", "step second sh -c 'exit 3'", "step 'third one' false", "step last true")
    assert done.returncode == 3
    assert done.stdout.splitlines() == ["status 3", "first 0", "second 3", "third one 1", "last 0"]


def test_steps_that_all_pass_pass_the_run() -> None:
    done = _run("step first true", "step second sh -c 'exit 0'")
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["status 0", "first 0", "second 0"]


def test_no_tests_collected_fails_the_run_and_says_so() -> None:
    done = _run("step tests sh -c 'exit 5'", "step next true")
    assert done.returncode == 5
    assert done.stdout.splitlines() == ["status 5", "tests 5", "next 0"]
    assert "tests: exit code 5 (pytest: no tests collected), which fails the run" in done.stderr


def test_a_shell_function_is_a_step_with_the_code_it_returns() -> None:
    done = _run("check() { echo checking; return 2; }", "step check check", "step after true")
    assert done.returncode == 2
    assert done.stdout.splitlines() == ["checking", "status 2", "check 2", "after 0"]


def test_ci_runs_every_step_through_the_helper() -> None:
    """No step toggles errexit by hand: ``step`` is the one way a run goes on after a failure."""
    script = (ROOT / ".ci" / "run").read_text()
    assert "set +e" not in script
    assert "source .ci/step.sh" in script


def test_each_section_prints_its_wall_time_when_the_next_begins_and_in_the_summary() -> None:
    # SECONDS is bash's clock: setting it stands for time passing.
    done = _run(
        'section "first part"',
        "SECONDS=7",
        'section "second part"',
        "SECONDS=10",
        "section_end",
        "section_end",  # nothing open: prints nothing
        "printf '%s\\n' \"${sections[@]}\"",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "== first part",
        "-- first part: 7 s",
        "== second part",
        "-- second part: 3 s",
        "first part: 7 s",
        "second part: 3 s",
        "status 0",
        "",  # no step ran: no results
    ]


def test_every_part_of_ci_has_a_section_header() -> None:
    """Headers go through ``section`` (so every part's time is printed), none by a bare echo."""
    script = (ROOT / ".ci" / "run").read_text()
    assert script.count('\nsection "') >= 10
    assert 'echo "== done in' in script
    assert [line for line in script.splitlines() if line.lstrip().startswith('echo "== ')] == [
        'echo "== time per section"',
        'echo "== done in $(( $(date +%s) - started )) s, exit code $status (${summary%, })"',
    ]
