#!/bin/sh
# npm test: the type check and every vitest project at once. The type check is TypeScript 7's
# native compiler (the typescript7 package; TypeScript 5 stays for the tools built on its API,
# and `tsc` on the PATH may be either): 6 s here against 27 s for TypeScript 5's, on cores the
# first vitest files need. The run fails if either fails; arguments go to vitest.
node "$(dirname "$0")/../node_modules/typescript7/bin/tsc" --noEmit &
typecheck=$!
vitest run "$@"
tests=$?
wait "$typecheck" || exit 1
exit "$tests"
