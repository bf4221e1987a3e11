import http from "node:http";
import { describe, expect, it } from "vitest";
import { createLogger, listenHttp } from "../src/index.js";

const logger = createLogger({ service: "test", level: "silent" });

/** A GET over a fresh keep-alive agent, so the test sees what a pooled client would. */
function get(port: number, path: string, agent: http.Agent): Promise<{ status: number; body: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, agent }, (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
      })
      .on("error", reject);
  });
}

describe("listenHttp", () => {
  it("lets in-flight requests finish on close, then refuses new connections", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    const server = await listenHttp({
      logger,
      name: "test",
      host: "127.0.0.1",
      port: 0,
      handler: (req, res) => {
        if (req.url === "/slow") {
          started();
          void released.then(() => res.end("finished"));
        } else res.end("fast");
      },
    });
    const agent = new http.Agent({ keepAlive: true });
    // An idle keep-alive connection must not hold the close open.
    expect((await get(server.port, "/fast", agent)).body).toBe("fast");

    const slow = get(server.port, "/slow", agent);
    await inFlight;
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);

    release();
    expect(await slow).toMatchObject({ status: 200, body: "finished" });
    await closing;
    expect(closed).toBe(true);
    await expect(get(server.port, "/fast", new http.Agent())).rejects.toThrow(/ECONNREFUSED/);
    agent.destroy();
  });
});
