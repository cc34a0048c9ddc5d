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

# section TITLE: the header of the next part of the run ("== TITLE"), after closing the part before
# it. Each part's wall time is printed when it ends ("-- TITLE: N s") and kept in `sections` for the
# summary at the end, so a CI log says where its time went.
sections=()
section_title=""
section_started=0

section() {
  section_end
  section_title=$1
  section_started=$SECONDS
  echo "== $1"
}

# section_end: closes the open part, if any (the last one before the summary).
section_end() {
  if [ -n "$section_title" ]; then
    local took=$((SECONDS - section_started))
    echo "-- $section_title: $took s"
    sections+=("$section_title: $took s")
    section_title=""
  fi
}
