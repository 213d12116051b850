#!/usr/bin/env node
// The CLI runs from its TypeScript sources through tsx, as the rest of the project does.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../cli/main.ts");
process.exitCode = await main(process.argv);
