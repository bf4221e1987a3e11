import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, createLogger, readConfig, type HttpServer } from "@qrplatform/platform";
import { operatorEnv, periodsOf, provisioningOf } from "../src/config.js";
import { serveHealth, type Readiness } from "../src/health.js";
import { credentials } from "@qrplatform/testing";

const required = {
  OPERATOR_NAMESPACE: "qr-platform",
  LINKS_URL: "http://links:9090",
  ADMIN_TOKEN: credentials.adminToken,
  REDIRECTOR_SERVICE: "qr-platform-links",
  CLUSTER_ISSUER: "letsencrypt",
};

describe("the operator's configuration", () => {
  it("has the documented defaults", () => {
    const config = readConfig(operatorEnv, required);
    expect(config).toMatchObject({
      REDIRECTOR_PORT: 8081,
      ROUTE_KIND: "Ingress",
      TLS_MODE: "certificate",
      LEASE_NAME: "qr-platform-operator",
      LEASE_DURATION_SECONDS: 15,
      HEALTH_PORT: 8080,
      METRICS_PORT: 9464,
    });
    expect(periodsOf(config)).toEqual({
      fullResyncMs: 300_000,
      reverifyMs: 86_400_000,
      pendingCheckMs: 300_000,
      unverifiedTtlMs: 604_800_000,
    });
    expect(provisioningOf(config)).toEqual({
      namespace: "qr-platform",
      route: { kind: "Ingress" },
      redirector: { service: "qr-platform-links", port: 8081 },
      tls: { mode: "certificate", clusterIssuer: "letsencrypt" },
    });
  });

  it("builds the Gateway parent of HTTPRoutes", () => {
    const config = readConfig(operatorEnv, {
      ...required,
      ROUTE_KIND: "HTTPRoute",
      GATEWAY_NAME: "public",
      GATEWAY_NAMESPACE: "gateways",
      GATEWAY_SECTION_NAME: "",
    });
    expect(provisioningOf(config).route).toEqual({
      kind: "HTTPRoute",
      parentRef: { name: "public", namespace: "gateways" },
    });
  });

  it("names every bad variable at once", () => {
    const read = () =>
      readConfig(operatorEnv, {
        ...required,
        ADMIN_TOKEN: "short",
        ROUTE_KIND: "HTTPRoute",
        LEASE_DURATION_SECONDS: "0",
      });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(/ADMIN_TOKEN: must be at least 32 characters/);
    expect(read).toThrow(/LEASE_DURATION_SECONDS/);
    expect(() => readConfig(operatorEnv, { ...required, ROUTE_KIND: "HTTPRoute" })).toThrow(
      /GATEWAY_NAME: is required when ROUTE_KIND is HTTPRoute/,
    );
    expect(() =>
      readConfig(operatorEnv, {
        ...required,
        ROUTE_KIND: "HTTPRoute",
        GATEWAY_NAME: "g",
        TLS_MODE: "ingress-annotation",
      }),
    ).toThrow(/TLS_MODE/);
    expect(() => readConfig(operatorEnv, { ...required, CLUSTER_ISSUER: undefined })).toThrow(/CLUSTER_ISSUER/);
  });
});

describe("the health endpoints", () => {
  let server: HttpServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  it("answer /healthz always and /readyz once the caches are filled", async () => {
    let state: Readiness = { ready: false, waitingFor: ["customdomains", "domains"] };
    server = await serveHealth({
      readiness: () => state,
      host: "127.0.0.1",
      port: 0,
      logger: createLogger({ service: "test", level: "silent" }),
    });
    const base = `http://127.0.0.1:${server.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const waiting = await fetch(`${base}/readyz`);
    expect(waiting.status).toBe(503);
    expect(await waiting.json()).toEqual({ ready: false, waitingFor: ["customdomains", "domains"] });
    state = { ready: true, waitingFor: [] };
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    expect((await fetch(`${base}/healthz`, { method: "POST" })).status).toBe(405);
  });
});
