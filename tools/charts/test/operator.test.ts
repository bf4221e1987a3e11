// The chart's domain operator: its Deployment, identity, least-privilege RBAC, values and their schema.
import { beforeAll, describe, expect, it } from "vitest";
import { ENTRY_POINTS } from "../../build/build.ts";
import { chart, envOf, find, fromSecret, helm, type Manifest, REQUIRED_VALUES, render, renderNotes } from "./render.ts";

const OPERATOR = "qrp-operator";
const operatorKinds = [
  "Deployment",
  "Service",
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
];
const httpRoute = ["--set", "operator.route.kind=HTTPRoute", "--set", "operator.route.gateway.name=public"];
const ingressAnnotation = ["--set", "operator.tls.mode=ingress-annotation"];
const operatorOf = (manifests: Manifest[]) =>
  manifests.filter((m) => m.metadata.labels?.["app.kubernetes.io/component"] === "operator");

// The complete rule lists: a verb or resource added to the templates fails here until it is added on purpose.
const CLUSTER_RULES = [
  {
    apiGroups: ["qr-platform.io"],
    resources: ["customdomains"],
    verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
  },
  { apiGroups: ["qr-platform.io"], resources: ["customdomains/status"], verbs: ["patch", "update"] },
  { apiGroups: ["qr-platform.io"], resources: ["customdomains/finalizers"], verbs: ["update"] },
];
const routeRule = (apiGroup: string, resource: string) => ({
  apiGroups: [apiGroup],
  resources: [resource],
  verbs: ["get", "list", "watch", "create", "patch", "delete"],
});
const INGRESS_RULE = routeRule("networking.k8s.io", "ingresses");
const HTTPROUTE_RULE = routeRule("gateway.networking.k8s.io", "httproutes");
const CERTIFICATES_WRITTEN = {
  apiGroups: ["cert-manager.io"],
  resources: ["certificates"],
  verbs: ["get", "list", "watch", "create", "patch", "delete"],
};
const CERTIFICATES_READ = {
  apiGroups: ["cert-manager.io"],
  resources: ["certificates"],
  verbs: ["get", "list", "watch"],
};
const NAMESPACE_RULES = [
  { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
  { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
];

describe("charts/qr-platform: the domain operator", () => {
  beforeAll(() => {
    expect(helm("version", "--short").stdout).toMatch(/^v3\./);
  }, 180_000);

  it("runs two replicas of dist/operator.js under their own ServiceAccount, probed on /healthz and /readyz", () => {
    const manifests = render();
    const deployment = find(manifests, "Deployment", OPERATOR);
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.metadata.labels).toMatchObject({
      "app.kubernetes.io/component": "operator",
      "app.kubernetes.io/instance": "qrp",
    });
    // The image runs the operator's bundle from dist/ like every component's.
    expect(container.command).toEqual(["node", "--enable-source-maps", "dist/operator.js"]);
    expect(ENTRY_POINTS.operator).toBe("services/operator/src/main.ts");
    expect(container.ports).toEqual([
      { name: "health", containerPort: 8080, protocol: "TCP" },
      { name: "metrics", containerPort: 9464, protocol: "TCP" },
    ]);
    // Not a gRPC service: HTTP probes, and liveness never waits on the informers or the leader Lease.
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health" });
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health" });
    expect(container).not.toHaveProperty("startupProbe");

    // Only the operator's pods carry an API token; its ServiceAccount mounts none by itself.
    expect(pod.serviceAccountName).toBe(OPERATOR);
    expect(pod.automountServiceAccountToken).toBe(true);
    expect(find(manifests, "ServiceAccount", OPERATOR).automountServiceAccountToken).toBe(false);
    for (const other of manifests.filter((m) => m.kind === "Deployment" && m.metadata.name !== OPERATOR)) {
      expect(other.spec.template.spec.automountServiceAccountToken, other.metadata.name).toBe(false);
      expect(other.spec.template.spec, other.metadata.name).not.toHaveProperty("serviceAccountName");
    }

    // Its metrics Service, which a ServiceMonitor selects like every other component's.
    const service = find(manifests, "Service", OPERATOR);
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([{ name: "metrics", port: 9464, targetPort: "metrics", protocol: "TCP" }]);
    expect(
      operatorOf(manifests)
        .map((m) => m.kind)
        .sort(),
    ).toEqual([...operatorKinds].sort());
  });

  it("gives the operator its environment, from the defaults", () => {
    const env = envOf(find(render("--namespace", "qrp-system"), "Deployment", OPERATOR));
    expect(env).toEqual({
      POD_NAME: { fieldRef: { fieldPath: "metadata.name" } },
      OPERATOR_NAMESPACE: "qrp-system",
      HEALTH_PORT: "8080",
      LOG_LEVEL: "info",
      LINKS_URL: "http://qrp-links:9090",
      TENANCY_URL: "http://qrp-tenancy:9090",
      ADMIN_TOKEN: fromSecret("qrp-internal", "ADMIN_TOKEN"),
      // The chart's own redirect Service and port.
      REDIRECTOR_SERVICE: "qrp-links-redirect",
      REDIRECTOR_PORT: "8081",
      ROUTE_KIND: "Ingress",
      TLS_MODE: "certificate",
      CLUSTER_ISSUER: "letsencrypt",
      LEASE_NAME: "qrp-operator",
      LEASE_DURATION_SECONDS: "15",
      FULL_RESYNC_SECONDS: "300",
      REVERIFY_INTERVAL_SECONDS: "86400",
      PENDING_CHECK_INTERVAL_SECONDS: "300",
      UNVERIFIED_DOMAIN_TTL_SECONDS: "604800",
      METRICS_PORT: "9464",
    });
    // The redirector follows the chart's own Service unless overridden.
    expect(envOf(find(render("--set", "links.redirectService.port=80"), "Deployment", OPERATOR))).toMatchObject({
      REDIRECTOR_PORT: "80",
    });
  });

  it("passes every value through: route, gateway, TLS mode, redirector, periods, log level", () => {
    const gateway = envOf(
      find(
        render(
          ...httpRoute,
          "--set",
          "operator.route.gateway.namespace=gateways",
          "--set",
          "operator.route.gateway.sectionName=https",
          // Ignored with HTTPRoute: it names an IngressClass.
          "--set",
          "operator.route.ingressClassName=nginx",
        ),
        "Deployment",
        OPERATOR,
      ),
    );
    expect(gateway).toMatchObject({
      ROUTE_KIND: "HTTPRoute",
      GATEWAY_NAME: "public",
      GATEWAY_NAMESPACE: "gateways",
      GATEWAY_SECTION_NAME: "https",
    });
    expect(gateway).not.toHaveProperty("ROUTE_INGRESS_CLASS");

    const annotated = envOf(
      find(render(...ingressAnnotation, "--set", "operator.route.ingressClassName=nginx"), "Deployment", OPERATOR),
    );
    expect(annotated).toMatchObject({
      ROUTE_KIND: "Ingress",
      ROUTE_INGRESS_CLASS: "nginx",
      TLS_MODE: "ingress-annotation",
    });
    expect(Object.keys(annotated).filter((key) => key.startsWith("GATEWAY_"))).toEqual([]);

    const tuned = render(
      "--set",
      "operator.replicas=3",
      "--set",
      "operator.redirector.serviceName=edge-redirector",
      "--set",
      "operator.redirector.port=8090",
      "--set",
      "operator.leaseDurationSeconds=30",
      "--set",
      "operator.fullResyncSeconds=600",
      // Past a million: helm reads such numbers from values files as floats, which must not print as 2.592e+07.
      "--set-json",
      "operator.reverifyIntervalSeconds=25920000",
      "--set",
      "operator.pendingCheckIntervalSeconds=60",
      "--set",
      "operator.unverifiedDomainTtlSeconds=1209600",
      "--set",
      "operator.logLevel=debug",
      "--set",
      "operator.resources.limits.memory=1Gi",
    );
    const deployment = find(tuned, "Deployment", OPERATOR);
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.spec.template.spec.containers[0].resources.limits).toEqual({ memory: "1Gi" });
    expect(envOf(deployment)).toMatchObject({
      REDIRECTOR_SERVICE: "edge-redirector",
      REDIRECTOR_PORT: "8090",
      LEASE_DURATION_SECONDS: "30",
      FULL_RESYNC_SECONDS: "600",
      REVERIFY_INTERVAL_SECONDS: "25920000",
      PENDING_CHECK_INTERVAL_SECONDS: "60",
      UNVERIFIED_DOMAIN_TTL_SECONDS: "1209600",
      LOG_LEVEL: "debug",
    });
  });

  it("grants exactly the least-privilege rules, for the route kind and TLS mode chosen", () => {
    const rulesOf = (manifests: Manifest[]) => ({
      cluster: find(manifests, "ClusterRole", OPERATOR).rules,
      namespace: find(manifests, "Role", OPERATOR).rules,
    });
    expect(rulesOf(render())).toEqual({
      cluster: CLUSTER_RULES,
      namespace: [INGRESS_RULE, CERTIFICATES_WRITTEN, ...NAMESPACE_RULES],
    });
    expect(rulesOf(render(...httpRoute))).toEqual({
      cluster: CLUSTER_RULES,
      namespace: [HTTPROUTE_RULE, CERTIFICATES_WRITTEN, ...NAMESPACE_RULES],
    });
    // cert-manager's ingress-shim makes the Certificates: the operator only reads them.
    expect(rulesOf(render(...ingressAnnotation))).toEqual({
      cluster: CLUSTER_RULES,
      namespace: [INGRESS_RULE, CERTIFICATES_READ, ...NAMESPACE_RULES],
    });

    const manifests = render("--namespace", "qrp-system");
    expect(find(manifests, "Role", OPERATOR).metadata).not.toHaveProperty("namespace");
    const subjects = [{ kind: "ServiceAccount", name: OPERATOR, namespace: "qrp-system" }];
    expect(find(manifests, "ClusterRoleBinding", OPERATOR)).toMatchObject({
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: OPERATOR },
      subjects,
    });
    expect(find(manifests, "RoleBinding", OPERATOR)).toMatchObject({
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: OPERATOR },
      subjects,
    });
    // No other component gets any RBAC.
    expect(manifests.filter((m) => m.kind.includes("Role")).map((m) => m.metadata.name)).toEqual([
      OPERATOR,
      OPERATOR,
      OPERATOR,
      OPERATOR,
    ]);
  });

  it("renders nothing of the operator when it is off, and needs no cluster issuer then", () => {
    const manifests = render("--set", "operator.enabled=false", "--set", "operator.tls.clusterIssuer=");
    expect(operatorOf(manifests)).toEqual([]);
    expect(manifests.filter((m) => m.kind === "Deployment")).toHaveLength(5);
    expect(renderNotes("--set", "operator.enabled=false")).not.toContain("customdomains");
  });

  it("tells in NOTES.txt how to see the custom domains", () => {
    const notes = renderNotes("--namespace", "qrp-system");
    expect(notes).toContain("kubectl get customdomains");
    expect(notes).toContain("kubectl describe customdomain <hostname>");
    expect(notes).toContain("an Ingress to qrp-links-redirect and a certificate from ClusterIssuer letsencrypt");
    expect(notes).toContain(
      "kubectl --namespace qrp-system logs --prefix -l app.kubernetes.io/instance=qrp,app.kubernetes.io/component=operator",
    );
    expect(renderNotes(...httpRoute)).toContain("an HTTPRoute on Gateway default/public to qrp-links-redirect");
  });

  it("passes helm lint --strict with each route kind and TLS mode", () => {
    for (const values of [
      [],
      httpRoute,
      ingressAnnotation,
      ["--set", "operator.route.ingressClassName=nginx", "--set", "operator.logLevel=debug"],
    ]) {
      const result = helm("lint", "--strict", chart, ...REQUIRED_VALUES, ...values);
      expect(result.status, values.join(" ") + result.stdout + result.stderr).toBe(0);
    }
  });

  it("refuses bad operator values with a schema error, and a missing cluster issuer by name", () => {
    const cases: [string[], RegExp][] = [
      [
        ["--set", "operator.route.kind=Gateway"],
        /operator\.route\.kind must be one of the following: "Ingress", "HTTPRoute"/,
      ],
      [
        ["--set", "operator.route.kind=HTTPRoute"],
        /operator\.route\.gateway\.name: String length must be greater than or equal to 1/,
      ],
      [
        ["--set", "operator.route.kind=HTTPRoute", "--set", "operator.route.gateway.namespace=gateways"],
        /operator\.route\.gateway\.name/,
      ],
      // cert-manager's ingress-shim reads the annotation from Ingresses only.
      [[...httpRoute, ...ingressAnnotation], /operator\.route\.kind does not match: "Ingress"/],
      [["--set", "operator.tls.mode=acme"], /operator\.tls\.mode must be one of the following/],
      [["--set", "operator.fullResyncSeconds=-1"], /operator\.fullResyncSeconds: Must be greater than or equal to 1/],
      [
        ["--set", "operator.reverifyIntervalSeconds=0"],
        /operator\.reverifyIntervalSeconds: Must be greater than or equal to 1/,
      ],
      [
        ["--set", "operator.pendingCheckIntervalSeconds=-300"],
        /operator\.pendingCheckIntervalSeconds: Must be greater than or equal to 1/,
      ],
      [
        ["--set", "operator.unverifiedDomainTtlSeconds=-1"],
        /operator\.unverifiedDomainTtlSeconds: Must be greater than or equal to 1/,
      ],
      [
        ["--set", "operator.leaseDurationSeconds=2"],
        /operator\.leaseDurationSeconds: Must be greater than or equal to 5/,
      ],
      [["--set-string", "operator.fullResyncSeconds=300"], /operator\.fullResyncSeconds: Invalid type/],
      [["--set", "operator.replicas=-1"], /operator\.replicas: Must be greater than or equal to 0/],
      [["--set", "operator.redirector.port=70000"], /operator\.redirector\.port: Must be less than or equal to 65535/],
      [
        ["--set", "operator.redirector.serviceName=Not_A_Service"],
        /operator\.redirector\.serviceName: Does not match pattern/,
      ],
      [["--set", "operator.tls.clusterIssuer=Lets Encrypt"], /operator\.tls\.clusterIssuer: Does not match pattern/],
      [["--set", "operator.logLevel=verbose"], /operator\.logLevel must be one of the following/],
      [["--set", "operator.route.gateway.nmae=public"], /Additional property nmae is not allowed/],
    ];
    for (const [values, message] of cases) {
      const result = helm("template", "qrp", chart, ...REQUIRED_VALUES, ...values);
      expect(result.status, values.join(" ")).not.toBe(0);
      expect(result.stderr, values.join(" ")).toMatch(/values don't meet the specifications of the schema/);
      expect(result.stderr, values.join(" ")).toMatch(message);
    }
    const withoutIssuer = helm("template", "qrp", chart, ...REQUIRED_VALUES, "--set", "operator.tls.clusterIssuer=");
    expect(withoutIssuer.status).not.toBe(0);
    expect(withoutIssuer.stderr).toMatch(/operator\.tls\.clusterIssuer is required: the cert-manager ClusterIssuer/);
  });
});
