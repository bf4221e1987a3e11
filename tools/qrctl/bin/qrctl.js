#!/usr/bin/env node
// Runs qrctl straight from its TypeScript sources, so it works from a checkout without a build step.
import { register } from "tsx/esm/api";

register();
const { run } = await import(new URL("../src/main.ts", import.meta.url).href);
process.exitCode = await run(process.argv.slice(2));
