import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createClient } from "@connectrpc/connect";
import { LinkService } from "@qrplatform/api/links";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import { remoteTransport } from "@qrplatform/platform";
import { freePort } from "@qrplatform/testing";
import { credentials, linksProcessEnv } from "./support/links-stack.js";

// The links service as its own process: gRPC and the redirector on their ports, stopped by SIGTERM.

const REPO_ROOT = fileURLToPath(new URL("../../..", import.meta.url));

let child: ChildProcess;
let output = "";
let dataDir: string;
let scratch: ScratchDatabase | undefined;
let grpcPort: number;
let redirectPort: number;

beforeAll(async () => {
  scratch = await createScratchDatabase();
  dataDir = mkdtempSync(join(tmpdir(), "qrp-links-"));
  [grpcPort, redirectPort] = await Promise.all([freePort(), freePort()]);
  child = spawn(process.execPath, ["--import", "tsx", "services/links/src/main.ts"], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      ...linksProcessEnv({
        grpcPort,
        redirectPort,
        dataDir,
        shortLinkBaseUrl: `http://127.0.0.1:${redirectPort}`,
        databaseUrl: scratch?.url,
      }),
      METRICS_PORT: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const deadline = Date.now() + 50_000;
  while (!/gRPC listening/.test(output) || !/redirector listening/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`links did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  await scratch?.drop();
});

it("serves gRPC and redirects on their own ports, then stops gracefully on SIGTERM", async () => {
  const links = createClient(
    LinkService,
    remoteTransport({ baseUrl: `http://127.0.0.1:${grpcPort}`, token: credentials.serviceToken }),
  );
  const { link } = await links.createLink({
    accountId: randomUUID(),
    destinationUrl: "https://example.com/",
    queryParameters: { utm_source: "qr" },
  });
  expect(link?.canonicalUrl).toBe(`http://127.0.0.1:${redirectPort}/${link!.slug}`);

  // The canonical URL is served by this very process; localhost is the same loopback host.
  for (const url of [link!.canonicalUrl, `http://localhost:${redirectPort}/${link!.slug}`]) {
    const answer = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(url, resolve).on("error", reject),
    );
    answer.resume();
    expect(answer.statusCode).toBe(302);
    expect(answer.headers.location).toBe("https://example.com/?utm_source=qr");
  }

  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  expect(await exited).toBe(0);
  expect(output).toMatch(/shutting down/);
});
