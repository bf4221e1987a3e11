// wrk (https://github.com/wg/wrk) as the redirect benchmark's load generator. It is C on epoll: on
// this machine it spent 19 µs of CPU a request (mostly the kernel's) where autocannon, in Node.js,
// spent 35, more than the bare server it loads, so that the bare server and the redirector answered
// at the generator's rate. Debian ships it (`apt-get install wrk`).
import { execFile } from "node:child_process";
import { randomInt } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

export interface WrkRequest {
  path: string;
  headers: Record<string, string>;
  /**
   * A header that carries a different public IPv4 address each time the request is sent, such as
   * X-Forwarded-For behind a load balancer: every request then comes from a visitor not seen before.
   */
  addressHeader?: string;
}

/** Where the address goes in a request with an `addressHeader`; the script splits the request there. */
const ADDRESS_PLACEHOLDER = "@address@";

export interface WrkResult {
  /** Responses completed, and those whose status was not 2xx or 3xx. */
  requests: number;
  badStatus: number;
  /** Connect, read, write and timeout errors together. */
  socketErrors: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
}

const run = promisify(execFile);

/**
 * The script: every connection cycles through the requests, built once as raw HTTP so the request
 * callback only picks one; `done` prints the figures as one JSON line. Given a pause, each connection
 * waits that long (ms, drawn so that its mean is `meanPauseMs`) after each answer.
 */
function script(requests: WrkRequest[], meanPauseMs: number | undefined): string {
  const lua = (text: string) => JSON.stringify(text); // a JSON string is a valid Lua string literal for ASCII
  const entries = requests.map((request) => {
    const headers = request.addressHeader
      ? { ...request.headers, [request.addressHeader]: ADDRESS_PLACEHOLDER }
      : request.headers;
    const formatted = `wrk.format("GET", ${lua(request.path)}, {${Object.entries(headers)
      // wrk.format adds wrk's own Host unless one is named "Host" exactly; a second Host would race the first.
      .map(([name, value]) => `[${lua(name.toLowerCase() === "host" ? "Host" : name)}] = ${lua(value)}`)
      .join(", ")}})`;
    return request.addressHeader ? `  around_address(${formatted}),` : `  ${formatted},`;
  });
  const pause =
    meanPauseMs === undefined
      ? ""
      : // wrk waits whole milliseconds: between floor and ceil of the mean, in the share that keeps the mean.
        `local low = math.floor(${meanPauseMs})
local high_share = ${meanPauseMs} - low
function delay()
  if math.random() < high_share then return low + 1 end
  return low
end
`;
  return `local requests
local next_index = 0
-- Requests with an address header are kept as the text before and after the address.
function around_address(raw)
  local first, last = raw:find(${lua(ADDRESS_PLACEHOLDER)}, 1, true)
  return { raw:sub(1, first - 1), raw:sub(last + 1) }
end
-- The n-th visitor's address: first octets 11 to 90 (no private, loopback or link-local range), then
-- the rest of n, so a run never sends one twice; each run starts at a random n, so runs do not share visitors.
local visitor = 0
local function address(n)
  return (11 + n % 80) .. "." .. (math.floor(n / 80) % 256) .. "." .. (math.floor(n / 20480) % 256) .. "." .. (1 + math.floor(n / 5242880) % 250)
end
function init(args)
  requests = {
${entries.join("\n")}
  }
  -- wrk never seeds Lua's generator, so every run would draw the same numbers: the starts come from here.
  next_index = ${randomInt(requests.length)}
  visitor = ${randomInt(2 ** 30)}
end
function request()
  next_index = next_index % #requests + 1
  local entry = requests[next_index]
  if type(entry) == "string" then return entry end
  visitor = visitor + 1
  return entry[1] .. address(visitor) .. entry[2]
end
${pause}
function done(summary, latency, _)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"badStatus":%d,"socketErrors":%d,"micros":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, e.status, e.connect + e.read + e.write + e.timeout, summary.duration,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

/**
 * Loads http://127.0.0.1:port with `connections` connections on one wrk thread for `seconds`, each
 * sending its next request as soon as its answer arrives, or after a pause of `meanPauseMs` on average.
 */
export async function wrk(options: {
  port: number;
  requests: WrkRequest[];
  seconds: number;
  connections: number;
  meanPauseMs?: number;
}): Promise<WrkResult> {
  const dir = await mkdtemp(join(tmpdir(), "qrp-wrk-"));
  try {
    const scriptFile = join(dir, "load.lua");
    await writeFile(scriptFile, script(options.requests, options.meanPauseMs));
    const { stdout } = await run(
      "wrk",
      [
        "-t1",
        `-c${options.connections}`,
        `-d${options.seconds}s`,
        "--timeout",
        "10s",
        "-s",
        scriptFile,
        `http://127.0.0.1:${options.port}`,
      ],
      { maxBuffer: 1 << 20 },
    ).catch((error: NodeJS.ErrnoException) => {
      throw error.code === "ENOENT"
        ? new Error("the redirect benchmark loads its servers with wrk: apt-get install wrk")
        : error;
    });
    const line = stdout.split("\n").find((text) => text.startsWith("{"));
    if (!line) throw new Error(`wrk printed no figures:\n${stdout}`);
    const figures = JSON.parse(line) as {
      requests: number;
      badStatus: number;
      socketErrors: number;
      micros: number;
      p50: number;
      p99: number;
    };
    return {
      requests: figures.requests,
      badStatus: figures.badStatus,
      socketErrors: figures.socketErrors,
      seconds: figures.micros / 1e6,
      p50Ms: figures.p50 / 1000,
      p99Ms: figures.p99 / 1000,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
