// Test support: `buf curl` as a subprocess. It must run asynchronously: the servers it talks to live in
// the test process, so a synchronous spawn would block the very event loop that has to answer it.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "./platform.js";

export const BUF = join(REPO_ROOT, "node_modules/.bin/buf");

/** What one buf invocation did. buf curl exits with 8 × the gRPC code when the RPC fails. */
export interface BufResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export function buf(args: string[], timeoutMs = 20_000): Promise<BufResult> {
  return new Promise((resolve, reject) => {
    execFile(BUF, args, { cwd: REPO_ROOT, timeout: timeoutMs, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") {
        reject(new Error(`buf ${args.join(" ")} did not run: ${error.message}\n${stderr}`));
        return;
      }
      resolve({ exitCode: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

/** `buf curl` over plaintext HTTP/2 with the given protocol (gRPC unless told otherwise). */
export function bufCurl(
  url: string,
  options: { protocol?: "grpc" | "grpcweb" | "connect"; token?: string; data?: object; extra?: string[] } = {},
): Promise<BufResult> {
  const args = ["curl", "--protocol", options.protocol ?? "grpc", "--http2-prior-knowledge"];
  if (options.token !== undefined) args.push("-H", `authorization: Bearer ${options.token}`);
  if (options.data !== undefined) args.push("-d", JSON.stringify(options.data));
  args.push(...(options.extra ?? []), url);
  return buf(args);
}

/** The JSON document a failed `buf curl` prints for the RPC error. */
export function bufErrorOf(result: BufResult): {
  code: string;
  message: string;
  details?: { type: string; value: string }[];
} {
  const text = `${result.stdout}\n${result.stderr}`;
  const start = text.indexOf("{");
  if (start < 0) throw new Error(`buf printed no error document:\n${text}`);
  return JSON.parse(text.slice(start, text.lastIndexOf("}") + 1));
}
