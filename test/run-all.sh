#!/bin/sh
# npm test: the type check and every vitest project at once. tsc keeps one core busy for 30 to
# 50 s, while the first files mostly wait on the services they start; run one after the other,
# the two took that much longer. The run fails if either fails; arguments go to vitest.
tsc --noEmit &
typecheck=$!
vitest run "$@"
tests=$?
wait "$typecheck" || exit 1
exit "$tests"
