import http from "node:http";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { createLogger, KEEP_ALIVE_TIMEOUT_MS, listenHttp } from "../src/index.js";

const logger = createLogger({ service: "test", level: "silent" });

/** A GET over a fresh keep-alive agent, so the test sees what a pooled client would. */
function get(
  port: number,
  path: string,
  agent: http.Agent,
): Promise<{ status: number; body: string; connection?: string; keepAlive?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, agent }, (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            body,
            connection: res.headers.connection,
            keepAlive: res.headers["keep-alive"] as string | undefined,
          }),
        );
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

  it("keeps idle connections longer than clients do, so a client never reuses one the server is closing", async () => {
    const server = await listenHttp({
      logger,
      name: "test",
      host: "127.0.0.1",
      port: 0,
      handler: (_req, res) => res.end("fast"),
    });
    const agent = new http.Agent({ keepAlive: true });
    const answer = await get(server.port, "/", agent);
    expect(answer.keepAlive).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    agent.destroy();
    await server.close();
  });

  /** A raw connection to the server that resolves `ended` when the server ends it. */
  async function rawConnection(port: number, send: string) {
    const socket = net.connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.on("error", () => {});
    let received = "";
    socket.on("data", (chunk) => (received += chunk));
    const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write(send);
    return { ended, received: () => received };
  }

  it("ends, after the close grace, connections that are neither idle nor busy", async () => {
    const server = await listenHttp({
      logger,
      name: "test",
      host: "127.0.0.1",
      port: 0,
      closeGraceMs: 100,
      // Answers without reading the body, so the request never ends and its connection never turns idle.
      handler: (_req, res) => res.end("refused"),
    });
    const halfHeaders = await rawConnection(server.port, "GET / HTTP/1.1\r\nHost: test\r\n");
    const unreadBody = await rawConnection(
      server.port,
      "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 1000\r\n\r\npart",
    );
    await expect.poll(() => unreadBody.received()).toMatch(/refused/);
    await server.close();
    await Promise.all([halfHeaders.ended, unreadBody.ended]);
  });

  it("ends a request still running after the close grace", async () => {
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    const server = await listenHttp({
      logger,
      name: "test",
      host: "127.0.0.1",
      port: 0,
      closeGraceMs: 100,
      handler: () => started(),
    });
    const never = get(server.port, "/", new http.Agent());
    await inFlight;
    await server.close();
    await expect(never).rejects.toThrow(/socket hang up|ECONNRESET/);
  });
});
