#!/bin/sh
# npm test: the type check (npm run typecheck: TypeScript 7's native compiler, docs/testing.md),
# the lint (npm run lint: Biome, then knip) and every vitest project at once. The run fails if
# any fails; arguments go to vitest. `--quick` first (npm run test:quick): only the projects that
# start no FFmpeg and no process per test.
#
# Without arguments the projects run in vitests side by side: MAIN, and BESIDE (the files that
# mostly wait: whole services held down, retry delays) on the cores MAIN leaves idle, each
# printing its output when it ends. With arguments that name no project, one vitest runs all but
# workerd. Either way the workerd project runs in a vitest of its own (test/run-workerd.sh, under
# a watchdog) unless the arguments name projects: @cloudflare/vitest-pool-workers can leave a run
# stalled after that project's last file, with no output and no exit (a known bug of the pool,
# still open), and a CI run can stand so until its time limit. MAIN, BESIDE and workerd are every
# project of vitest.config.ts (test/unit/test-tooling/run-all.test.ts checks it).
MAIN="unit render cloud cli security api dispatch"
BESIDE="e2e security-media faults"
QUICK_MAIN="unit"
QUICK_BESIDE="api dispatch"

npm run -s typecheck &
typecheck=$!
npm run -s lint &
lint=$!

projects() {
  for name in "$@"; do printf -- '--project %s ' "$name"; done
}

# The runs beside the main one print their output once they end, usually before it does; each
# is kept in a log of its own for the verdict.
side_log=$(mktemp)
workerd_log=$(mktemp)
trap 'rm -f "$side_log" "$workerd_log"' EXIT
logged() {
  log=$1
  shift
  "$@" >"$log" 2>&1
  code=$?
  cat "$log"
  return "$code"
}
# A vitest of its own for the projects named.
beside() {
  # shellcheck disable=SC2046 # one word per project flag and name
  logged "$side_log" vitest run $(projects "$@")
}
workerd_run() {
  logged "$workerd_log" sh test/run-workerd.sh
}

# The run's last lines: each part's outcome, then the failures the runs beside printed earlier,
# so that the tail of a long log (all a CI page may show) says what failed.
outcome() {
  if [ "$2" -eq 0 ]; then echo "  $1: passed"; else echo "  $1: FAILED (exit $2)"; fi
}
failures() {
  if [ "$2" -ne 0 ]; then grep -E "FAIL |Unhandled (Error|Rejection)" "$1" | sed 's/^/    /'; fi
}
verdict() {
  echo
  echo "npm test:"
  outcome "type check" "$typechecked"
  outcome "lint" "$linted"
  outcome "vitest ${main:-$*}" "$tests"
  if [ -n "$side" ]; then outcome "vitest $side_projects" "$side_tests"; fi
  if [ -n "$workerd" ]; then outcome "vitest workerd" "$workerd_tests"; fi
  failures "$side_log" "$side_tests"
  failures "$workerd_log" "$workerd_tests"
}

workerd=
side=
side_projects=
main=
if [ "${1:-}" = "--quick" ]; then
  shift
  if [ "$#" -eq 0 ]; then
    main=$QUICK_MAIN
    side_projects=$QUICK_BESIDE
    beside $QUICK_BESIDE &
    side=$!
  else
    set -- --project unit --project api --project dispatch "$@"
  fi
  workerd_run &
  workerd=$!
elif [ "$#" -eq 0 ]; then
  main=$MAIN
  side_projects=$BESIDE
  beside $BESIDE &
  side=$!
  workerd_run &
  workerd=$!
else
  case " $* " in
    *" --project "* | *" --project="*) ;;
    *)
      set -- --project '!workerd' "$@"
      workerd_run &
      workerd=$!
      ;;
  esac
fi
if [ -n "$main" ]; then
  # shellcheck disable=SC2046,SC2086 # one word per project flag and name
  vitest run $(projects $main)
else
  vitest run "$@"
fi
tests=$?
side_tests=0
if [ -n "$side" ]; then
  wait "$side"
  side_tests=$?
fi
workerd_tests=0
if [ -n "$workerd" ]; then
  wait "$workerd"
  workerd_tests=$?
fi
wait "$typecheck"
typechecked=$?
wait "$lint"
linted=$?
verdict "$@"
[ "$typechecked" -eq 0 ] && [ "$linted" -eq 0 ] || exit 1
[ "$tests" -eq 0 ] || exit "$tests"
[ "$side_tests" -eq 0 ] || exit "$side_tests"
exit "$workerd_tests"
