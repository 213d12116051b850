#!/bin/sh
# npm test: the type check (npm run typecheck: TypeScript 7's native compiler, docs/testing.md),
# the lint (npm run lint: Biome, then knip) and every vitest project at once. The run fails if
# any fails; arguments go to vitest. `--quick` first (npm run test:quick): only the projects that
# start no FFmpeg and no process per test.
#
# The workerd project runs in a vitest of its own (test/run-workerd.sh, under a watchdog) unless
# the arguments name projects: @cloudflare/vitest-pool-workers can leave a run stalled after that
# project's last file, with no output and no exit (a known bug of the pool, still open), and a CI
# run can stand so until its time limit.
npm run -s typecheck &
typecheck=$!
npm run -s lint &
lint=$!
workerd=
if [ "${1:-}" = "--quick" ]; then
  shift
  set -- --project unit --project api --project dispatch "$@"
  sh test/run-workerd.sh &
  workerd=$!
else
  case " $* " in
    *" --project "* | *" --project="*) ;;
    *)
      set -- --project '!workerd' "$@"
      sh test/run-workerd.sh &
      workerd=$!
      ;;
  esac
fi
vitest run "$@"
tests=$?
workerd_tests=0
if [ -n "$workerd" ]; then
  wait "$workerd"
  workerd_tests=$?
fi
wait "$typecheck"
typechecked=$?
wait "$lint"
linted=$?
[ "$typechecked" -eq 0 ] && [ "$linted" -eq 0 ] || exit 1
[ "$tests" -eq 0 ] || exit "$tests"
exit "$workerd_tests"
