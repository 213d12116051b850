// Preloaded into a process under test (NODE_OPTIONS=--import) to stand in for a hostile DNS:
// the names in FAKE_DNS ("name=address,name=address") resolve to the given addresses; every
// other name goes to the real resolver. Installed by fakeDnsEnv() in test/support/fake-dns.ts; never in production.
import dns from "node:dns";
import { syncBuiltinESMExports } from "node:module";

const table = new Map(
  (process.env.FAKE_DNS ?? "")
    .split(",")
    .filter(Boolean)
    .map((entry) => entry.split("=").map((s) => s.trim())),
);
const realLookup = dns.lookup;

dns.lookup = function lookup(hostname, ...rest) {
  const address = table.get(String(hostname).toLowerCase());
  if (address === undefined) return realLookup.call(this, hostname, ...rest);
  const [options, callback] = rest;
  const cb = typeof options === "function" ? options : callback;
  const opts = typeof options === "object" && options !== null ? options : {};
  const family = address.includes(":") ? 6 : 4;
  if (opts.all) process.nextTick(cb, null, [{ address, family }]);
  else process.nextTick(cb, null, address, family);
};
// ESM `import { lookup } from "node:dns"` sees the replacement too.
syncBuiltinESMExports();
