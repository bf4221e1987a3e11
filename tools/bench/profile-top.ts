// What a V8 CPU profile (`--cpu-prof`, as BENCH_CPU_PROF writes them) spent its busy time on: the
// functions with the most self time, and the same time grouped by where the code lives (a package in
// node_modules, node's own code, the platform's code), each as a share of the samples that were not idle.
// In a folder that `npm run bench:api` wrote (BENCH_CPU_PROF), only the samples taken while the
// process's target was under load count, operation by operation (its load-windows.json says when):
// start-up and the filling of the database are left out.
//
//   tsx tools/bench/profile-top.ts <file.cpuprofile or a folder of them> [how many rows, 15]
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Samples that are not the process's work: waiting for I/O, and the profiler itself. */
const NOT_WORK = new Set(["(idle)", "(program)", "(garbage collector)"]);

/** Where a function's code lives: a package, node's own code, or the file of ours. */
function placeOf(url: string): string {
  if (url === "") return "(native)";
  if (url.startsWith("node:"))
    return `node:${url
      .slice(5)
      .split("/")
      .slice(0, url.startsWith("node:internal/") ? 2 : 1)
      .join("/")}`;
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules) return inModules[1]!;
  const ours = /\/(services|tools)\/(.+)$/.exec(url);
  return ours ? `${ours[1]}/${ours[2]}` : url;
}

/** When a target was loaded with an operation, in microseconds of the monotonic clock (as api.ts writes them). */
interface LoadWindow {
  target: string;
  operation: string;
  from: number;
  to: number;
}

/** The benchmark's target a profiled process belongs to, from the file's name (`edge-<time>.cpuprofile`). */
function targetOf(file: string): string {
  const process = basename(file).split("-")[0]!;
  return process === "ceiling" || process === "embedded" ? process : "services";
}

function summarise(file: string, rows: number, window?: LoadWindow): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.from || at > window.to)) return;
    self.set(id, (self.get(id) ?? 0) + delta);
  });
  const functions = new Map<string, number>();
  const places = new Map<string, number>();
  let work = 0;
  let gc = 0;
  let total = 0;
  for (const [id, micros] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    total += micros;
    if (functionName === "(garbage collector)") gc += micros;
    if (NOT_WORK.has(functionName)) continue;
    work += micros;
    const place = placeOf(url);
    const name = `${functionName || "(anonymous)"} ${place}${url ? `:${lineNumber + 1}` : ""}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
    places.set(place, (places.get(place) ?? 0) + micros);
  }
  const share = (micros: number) => `${((100 * micros) / work).toFixed(1).padStart(5)} %`;
  const during = window ? ` during ${window.operation}` : "";
  console.log(
    `\n## ${basename(file)}${during}: ${(work / 1000).toFixed(0)} ms of JavaScript work, ${((100 * work) / total).toFixed(0)} % of the profile; GC ${(gc / 1000).toFixed(0)} ms`,
  );
  console.log("\nself time by function:");
  for (const [name, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, rows))
    console.log(`  ${share(micros)}  ${name}`);
  console.log("\nself time by place:");
  for (const [name, micros] of [...places].sort((a, b) => b[1] - a[1]).slice(0, rows))
    console.log(`  ${share(micros)}  ${name}`);
}

const [target, rows = "15"] = process.argv.slice(2);
if (!target) throw new Error("usage: profile-top.ts <file.cpuprofile | folder> [rows]");
const folder = statSync(target).isDirectory();
const files = folder
  ? readdirSync(target)
      .filter((name) => name.endsWith(".cpuprofile"))
      .sort()
      .map((name) => join(target, name))
  : [target];
const windowsFile = join(target, "load-windows.json");
const windows =
  folder && existsSync(windowsFile) ? (JSON.parse(readFileSync(windowsFile, "utf8")) as LoadWindow[]) : undefined;
for (const file of files) {
  if (!windows) summarise(file, Number(rows));
  else for (const window of windows.filter((w) => w.target === targetOf(file))) summarise(file, Number(rows), window);
}
