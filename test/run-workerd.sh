#!/bin/sh
# The workerd project (test/workerd/) in a vitest of its own, its output printed once it ends so
# that it does not interleave with the main run's. @cloudflare/vitest-pool-workers can leave a run
# stalled after the project's last file, with no output and no exit (a known bug of the pool): a
# run still going after WORKERD_TIMEOUT seconds (240, many times a normal run: docs/testing.md) is
# stopped, with what it started, and tried once more.
limit=${WORKERD_TIMEOUT:-240}
log=$(mktemp)
for try in 1 2; do
  timeout -k 10 "$limit" vitest run --project workerd >"$log" 2>&1
  code=$?
  cat "$log"
  [ "$code" -ne 124 ] && [ "$code" -ne 137 ] && break
  echo "test/run-workerd.sh: the workerd project was still running after ${limit} s (try $try of 2): stopped" >&2
done
rm -f "$log"
exit "$code"
