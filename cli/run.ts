#!/usr/bin/env node
// The vep command as built (packages/vep/build.mjs): the package's bin, and the checkout's through bin/vep.mjs.
import { main } from "./main";

process.exitCode = await main(process.argv);
