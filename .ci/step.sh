# shellcheck shell=bash
# Sourced by .ci/run: the runs that go on whatever the others gave, and the run's exit code.
#
# step NAME COMMAND... runs COMMAND, records its exit code under NAME in `results` and goes on;
# `status` is the exit code of the first step that failed (0 while none has). pytest's "no tests
# collected" (exit code 5) is a failure like any other. COMMAND may be a shell function: bash does
# not stop one at a failing command inside it here (errexit is off), so it returns its failure itself.

status=0
results=()

step() {
  local name=$1 code=0
  shift
  "$@" || code=$?
  if [ "$code" -eq 5 ]; then
    echo "$name: exit code 5 (pytest: no tests collected), which fails the run" >&2
  fi
  results+=("$name $code")
  if [ "$status" -eq 0 ]; then status=$code; fi
}
