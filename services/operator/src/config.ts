// The operator's environment (see docs/configuration.md), read once at start with zod like every
// qr-platform process, and turned into the operator's settings.
import { hostname } from "node:os";
import { z } from "zod";
import { logLevelVar, metricsEnv, optionalVar, portVar, secretVar } from "@qrplatform/platform";
import type { OperatorPeriods, ProvisioningSettings } from "./operator.js";

const seconds = (defaultSeconds: number) => z.coerce.number().int().positive().default(defaultSeconds);

export const operatorEnv = z
  .object({
    KUBECONFIG: optionalVar(z.string()),
    OPERATOR_NAMESPACE: z.string().min(1),
    LINKS_URL: z.string().url(),
    TENANCY_URL: optionalVar(z.string().url()),
    ADMIN_TOKEN: secretVar(),
    REDIRECTOR_SERVICE: z.string().min(1),
    REDIRECTOR_PORT: portVar(8081),
    ROUTE_KIND: z.enum(["Ingress", "HTTPRoute"]).default("Ingress"),
    ROUTE_INGRESS_CLASS: optionalVar(z.string()),
    GATEWAY_NAME: optionalVar(z.string()),
    GATEWAY_NAMESPACE: optionalVar(z.string()),
    GATEWAY_SECTION_NAME: optionalVar(z.string()),
    TLS_MODE: z.enum(["certificate", "ingress-annotation"]).default("certificate"),
    CLUSTER_ISSUER: z.string().min(1),
    LEASE_NAME: z.string().min(1).default("qr-platform-operator"),
    LEASE_DURATION_SECONDS: seconds(15),
    POD_NAME: z.string().min(1).default(hostname()),
    HEALTH_HOST: z.string().default("0.0.0.0"),
    HEALTH_PORT: portVar(8080),
    LOG_LEVEL: logLevelVar(),
    FULL_RESYNC_SECONDS: seconds(300),
    REVERIFY_INTERVAL_SECONDS: seconds(86_400),
    PENDING_CHECK_INTERVAL_SECONDS: seconds(300),
    UNVERIFIED_DOMAIN_TTL_SECONDS: seconds(604_800),
  })
  .merge(metricsEnv)
  .refine((env) => env.ROUTE_KIND !== "HTTPRoute" || env.GATEWAY_NAME !== undefined, {
    path: ["GATEWAY_NAME"],
    message: "is required when ROUTE_KIND is HTTPRoute",
  })
  .refine((env) => env.ROUTE_KIND !== "HTTPRoute" || env.TLS_MODE === "certificate", {
    path: ["TLS_MODE"],
    message: "must be certificate when ROUTE_KIND is HTTPRoute (the annotation is an Ingress's)",
  });

export type OperatorConfig = z.infer<typeof operatorEnv>;

export function provisioningOf(config: OperatorConfig): ProvisioningSettings {
  return {
    namespace: config.OPERATOR_NAMESPACE,
    route:
      config.ROUTE_KIND === "HTTPRoute"
        ? {
            kind: "HTTPRoute",
            parentRef: {
              name: config.GATEWAY_NAME!,
              ...(config.GATEWAY_NAMESPACE && { namespace: config.GATEWAY_NAMESPACE }),
              ...(config.GATEWAY_SECTION_NAME && { sectionName: config.GATEWAY_SECTION_NAME }),
            },
          }
        : { kind: "Ingress", ...(config.ROUTE_INGRESS_CLASS && { ingressClassName: config.ROUTE_INGRESS_CLASS }) },
    redirector: { service: config.REDIRECTOR_SERVICE, port: config.REDIRECTOR_PORT },
    tls: { mode: config.TLS_MODE, clusterIssuer: config.CLUSTER_ISSUER },
  };
}

export function periodsOf(config: OperatorConfig): OperatorPeriods {
  return {
    fullResyncMs: config.FULL_RESYNC_SECONDS * 1000,
    reverifyMs: config.REVERIFY_INTERVAL_SECONDS * 1000,
    pendingCheckMs: config.PENDING_CHECK_INTERVAL_SECONDS * 1000,
    unverifiedTtlMs: config.UNVERIFIED_DOMAIN_TTL_SECONDS * 1000,
  };
}
