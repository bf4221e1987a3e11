#!/usr/bin/env node
// Runs qrctl straight from its TypeScript sources, so it works from a checkout without a build step.
// (The container image runs the compiled dist/qrctl.js instead.)
import { register } from "tsx/esm/api";

register();
await import(new URL("../src/cli.ts", import.meta.url).href);
