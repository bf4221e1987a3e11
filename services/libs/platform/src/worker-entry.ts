import { extname } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The worker entry `name` beside the caller's file (`callerUrl`: its `import.meta.url`), with the
 * caller's own extension: `.ts` when the code runs as TypeScript (tsx, vitest), `.js` once compiled.
 */
export function workerEntry(name: string, callerUrl: string): URL {
  return new URL(`./${name}${extname(fileURLToPath(callerUrl))}`, callerUrl);
}

/**
 * What a thread needs to load `entry`. Node's own loader cannot read our TypeScript (its imports name
 * `.js` files that exist as `.ts`): under tsx the threads inherit tsx's loader with the parent's
 * options; anywhere else that runs TypeScript (vitest) they are given it. Compiled JavaScript needs
 * nothing.
 */
export function workerExecArgv(entry: URL): string[] | undefined {
  if (!entry.pathname.endsWith(".ts")) return undefined;
  if (process.execArgv.some((arg) => /\btsx\b/.test(arg))) return undefined;
  return ["--import", import.meta.resolve("tsx")];
}
