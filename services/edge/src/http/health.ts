import { createClient, type Transport } from "@connectrpc/connect";
import type { Router } from "express";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@qrplatform/api/grpc-health";

/**
 * Liveness and readiness. `/healthz` answers while the process runs; `/readyz` answers 200 only when
 * every backing service reports SERVING and the edge is not draining, so a load balancer stops sending
 * traffic before shutdown and while a dependency is down.
 */
export function registerHealthRoutes(
  router: Router,
  upstreams: Record<string, Transport>,
  isDraining: () => boolean,
): void {
  const checks = Object.entries(upstreams).map(([name, transport]) => ({
    name,
    health: createClient(Health, transport),
  }));

  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });

  router.get("/readyz", async (_req, res) => {
    const results = await Promise.all(
      checks.map(async ({ name, health }) => {
        try {
          const { status } = await health.check({ service: "" }, { timeoutMs: 2_000 });
          return [name, status === ServingStatus.SERVING ? "serving" : "not_serving"] as const;
        } catch {
          return [name, "unreachable"] as const;
        }
      }),
    );
    const ready = !isDraining() && results.every(([, status]) => status === "serving");
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? "ready" : "not_ready", draining: isDraining(), services: Object.fromEntries(results) });
  });
}
