// The Helm chart under charts/qr-platform: lint, render, and the values schema, with a real helm.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { PROCESSES, processEnvironment } from "@qrplatform/platform/layout";
import { parser as promql } from "@prometheus-io/lezer-promql";
import { exportedMetricNames } from "./exported-metrics.ts";
import { schemaProblems } from "./kubernetes-schemas.ts";
import { chart, envOf, find, fromSecret, helm, REQUIRED_VALUES as required, render } from "./render.ts";
import { ENTRY_POINTS } from "../../build/build.ts";

// The gRPC services are the layout's processes but the edge. The chart also runs the domain operator,
// which is no process of the layout (it runs only in Kubernetes): operator.test.ts covers it.
const grpcServices = (Object.keys(PROCESSES) as (keyof typeof PROCESSES)[]).filter((name) => name !== "edge");

describe("charts/qr-platform", () => {
  beforeAll(() => {
    expect(helm("version", "--short").stdout).toMatch(/^v3\./);
  }, 180_000);

  it("passes helm lint --strict, with the defaults and with the required values", () => {
    const bare = helm("lint", "--strict", chart);
    expect(bare.status, bare.stdout + bare.stderr).toBe(0);
    const filled = helm("lint", "--strict", chart, ...required);
    expect(filled.status, filled.stdout + filled.stderr).toBe(0);
  });

  it("renders a Deployment and a Service per process, with the standard labels", () => {
    const manifests = render();
    for (const name of Object.keys(PROCESSES)) {
      const deployment = find(manifests, "Deployment", `qrp-${name}`);
      const service = find(manifests, "Service", `qrp-${name}`);
      expect(deployment.metadata.labels).toMatchObject({
        "app.kubernetes.io/name": "qr-platform",
        "app.kubernetes.io/instance": "qrp",
        "app.kubernetes.io/component": name,
        "app.kubernetes.io/managed-by": "Helm",
        "app.kubernetes.io/version": "0.1.0",
      });
      expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
      expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    }
    const redirect = find(manifests, "Service", "qrp-links-redirect");
    expect(redirect.spec.ports).toEqual([{ name: "http", port: 8081, targetPort: "redirect", protocol: "TCP" }]);
    expect(manifests.some((m) => m.kind === "Ingress")).toBe(false);
  });

  it("runs every pod non-root on a read-only root filesystem without capabilities", () => {
    const deployments = render().filter((m) => m.kind === "Deployment");
    const components = deployments.map((deployment) => deployment.metadata.labels!["app.kubernetes.io/component"]);
    expect(components.sort()).toEqual([...Object.keys(PROCESSES), "operator"].sort());
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      const container = pod.containers[0];
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      expect(container.securityContext).toMatchObject({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
      });
      expect(pod.terminationGracePeriodSeconds).toBe(30);
      expect(pod.volumes).toContainEqual({ name: "tmp", emptyDir: {} });
      expect(container.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
      const name = deployment.metadata.labels!["app.kubernetes.io/component"];
      // The image's compiled entry point of the component.
      expect(container.command).toEqual(["node", "--enable-source-maps", `dist/${name}.js`]);
    }
    // dist/ holds exactly the names ENTRY_POINTS builds: the layout's processes (the operator's, operator.test.ts).
    expect(Object.keys(ENTRY_POINTS)).toEqual(expect.arrayContaining(Object.keys(PROCESSES)));
  });

  it("probes the gRPC services with native gRPC probes and the edge on /healthz and /readyz", () => {
    const manifests = render();
    for (const name of grpcServices) {
      const container = find(manifests, "Deployment", `qrp-${name}`).spec.template.spec.containers[0];
      expect(container.ports).toContainEqual({ name: "grpc", containerPort: 9090, protocol: "TCP" });
      // A database outage turns readiness off, never liveness: pods are not restarted for it.
      expect(container.startupProbe.grpc).toEqual({ port: 9090, service: "liveness" });
      expect(container.livenessProbe.grpc).toEqual({ port: 9090, service: "liveness" });
      // The redirector keeps answering from its cache without the database, so links stays ready until it drains.
      expect(container.readinessProbe.grpc).toEqual(
        name === "links" ? { port: 9090, service: "accepting" } : { port: 9090 },
      );
    }
    const edge = find(manifests, "Deployment", "qrp-edge").spec.template.spec.containers[0];
    expect(edge.ports).toEqual([
      { name: "http", containerPort: 8080, protocol: "TCP" },
      { name: "metrics", containerPort: 9464, protocol: "TCP" },
    ]);
    expect(edge.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
    expect(edge.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "http" });
  });

  it("wires the environment as docs/configuration.md describes", () => {
    const manifests = render(
      "--set",
      "dnsResolver=10.0.0.10:53",
      "--set",
      "publicBaseUrl=https://api.qr.example",
      "--set",
      "redisUrl.secretName=qrp-redis",
    );
    const env = (name: string) => envOf(find(manifests, "Deployment", `qrp-${name}`));
    const internal = (key: string) => fromSecret("qrp-internal", key);
    const database = fromSecret("qrp-db", "DATABASE_URL");

    for (const name of grpcServices) {
      expect(env(name)).toMatchObject({
        GRPC_PORT: "9090",
        SERVICE_TOKEN: internal("SERVICE_TOKEN"),
        ADMIN_TOKEN: internal("ADMIN_TOKEN"),
        LOG_LEVEL: "info",
      });
    }
    for (const name of ["tenancy", "catalog", "links"]) {
      expect(env(name)).toMatchObject({ DATABASE_URL: database, PAGE_TOKEN_SECRET: internal("PAGE_TOKEN_SECRET") });
    }
    expect(env("links")).toMatchObject({
      VISITOR_KEY_SECRET: internal("VISITOR_KEY_SECRET"),
      SCAN_SPOOL_DIR: "/tmp/scan-spool",
    });
    expect(env("links")).not.toHaveProperty("TRUSTED_PROXIES");
    expect(env("rendering")).not.toHaveProperty("DATABASE_URL");
    expect(env("rendering")).toMatchObject({
      RENDER_CONCURRENCY: "2",
      RENDER_CONCURRENCY_PER_ACCOUNT: "2",
      RENDER_QUEUE_PER_ACCOUNT: "32",
    });
    const sized = find(
      render("--set", "rendering.concurrency=4", "--set", "rendering.queuePerAccount=8"),
      "Deployment",
      "qrp-rendering",
    );
    expect(envOf(sized)).toMatchObject({ RENDER_CONCURRENCY: "4", RENDER_QUEUE_PER_ACCOUNT: "8" });
    expect(env("catalog")).toMatchObject({
      TENANCY_URL: "http://qrp-tenancy:9090",
      LINKS_URL: "http://qrp-links:9090",
      RENDERING_URL: "http://qrp-rendering:9090",
      WEBHOOK_TIMEOUT_SECONDS: "10",
      WEBHOOK_CONCURRENCY: "16",
      WEBHOOK_ACCOUNT_CONCURRENCY: "4",
      WEBHOOK_ENDPOINT_CONCURRENCY: "2",
      WEBHOOK_SCAN_PERIOD_SECONDS: "60",
      REDIS_URL: fromSecret("qrp-redis", "REDIS_URL"),
    });
    expect(env("catalog")).not.toHaveProperty("WEBHOOK_RETRY_SCHEDULE_SECONDS");
    const tuned = render(
      "--set",
      "catalog.webhooks.timeoutSeconds=5",
      "--set",
      "catalog.webhooks.retryScheduleSeconds={30,600,3600}",
    );
    expect(envOf(find(tuned, "Deployment", "qrp-catalog"))).toMatchObject({
      WEBHOOK_TIMEOUT_SECONDS: "5",
      WEBHOOK_RETRY_SCHEDULE_SECONDS: "30,600,3600",
    });
    expect(env("links")).toMatchObject({
      SHORT_LINK_BASE_URL: "https://qr.example",
      CUSTOM_DOMAIN_SCHEME: "https",
      DNS_RESOLVER: "10.0.0.10:53",
      REDIRECT_PORT: "8081",
      REDIS_URL: fromSecret("qrp-redis", "REDIS_URL"),
    });
    expect(env("edge")).toEqual({
      HOST: "0.0.0.0",
      PORT: "8080",
      LOG_LEVEL: "info",
      TENANCY_URL: "http://qrp-tenancy:9090",
      CATALOG_URL: "http://qrp-catalog:9090",
      LINKS_URL: "http://qrp-links:9090",
      RENDERING_URL: "http://qrp-rendering:9090",
      EXPORT_CACHE_BYTES: "33554432",
      CONSOLE_ENABLED: "true",
      SERVICE_TOKEN: internal("SERVICE_TOKEN"),
      REDIS_URL: fromSecret("qrp-redis", "REDIS_URL"),
      SHORT_LINK_BASE_URL: "https://qr.example",
      PUBLIC_BASE_URL: "https://api.qr.example",
      METRICS_PORT: "9464",
    });
    expect(envOf(find(render("--set", "edge.exportCacheBytes=0"), "Deployment", "qrp-edge"))).toMatchObject({
      EXPORT_CACHE_BYTES: "0",
    });
    expect(() => render("--set", "edge.exportCacheBytes=-1")).toThrow();
    expect(envOf(find(render("--set", "edge.consoleEnabled=false"), "Deployment", "qrp-edge"))).toMatchObject({
      CONSOLE_ENABLED: "false",
    });
    expect(() => render("--set-string", "edge.consoleEnabled=yes")).toThrow();
    for (const name of ["edge", "links", "tenancy", "catalog"])
      expect(envOf(find(render(), "Deployment", `qrp-${name}`))).not.toHaveProperty("REDIS_URL");
  });

  it("gives every process of the layout the variables the layout says it needs", () => {
    const manifests = render("--set", "redisUrl.secretName=qrp-redis");
    const placement = {
      host: "0.0.0.0",
      ports: { tenancy: 9090, catalog: 9090, links: 9090, rendering: 9090, edge: 8080 },
      redirectPort: 8081,
      secrets: { SERVICE_TOKEN: "s", ADMIN_TOKEN: "a", PAGE_TOKEN_SECRET: "p", VISITOR_KEY_SECRET: "v" },
      databaseUrl: "postgres://db",
      redisUrl: "redis://redis",
      dataDir: "/data",
    };
    for (const name of Object.keys(PROCESSES) as (keyof typeof PROCESSES)[]) {
      const rendered = Object.keys(envOf(find(manifests, "Deployment", `qrp-${name}`)));
      // DATA_DIR only matters without DATABASE_URL (PGlite), which the chart always sets.
      const needed = Object.keys(processEnvironment(name, placement)).filter((key) => key !== "DATA_DIR");
      expect(rendered, name).toEqual(expect.arrayContaining(needed));
    }
  });

  it("gives every process the OTLP settings when an endpoint is set, and none without one", () => {
    const manifests = render(
      "--set",
      "otel.endpoint=http://otel-collector.observability:4318",
      "--set",
      "otel.sampler=parentbased_traceidratio",
      "--set-string",
      "otel.samplerArg=0.25",
      // --set reads 0.001 as a string (helm parses only integers as numbers): the schema takes both.
      "--set",
      "otel.hotPathRatio=0.001",
    );
    for (const name of Object.keys(PROCESSES)) {
      expect(envOf(find(manifests, "Deployment", `qrp-${name}`))).toMatchObject({
        OTEL_SERVICE_NAME: name,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector.observability:4318",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        TRACES_HOT_PATH_RATIO: "0.001",
      });
      expect(
        Object.keys(envOf(find(render(), "Deployment", `qrp-${name}`))).filter((key) => key.includes("OTEL")),
      ).toEqual([]);
    }
  });

  it("renders the optional Ingress and the helm test pod", () => {
    const manifests = render("--set", "ingress.enabled=true", "--set", "ingress.redirectHosts[0]=qr.example");
    const ingress = find(manifests, "Ingress", "qrp");
    const backends = ingress.spec.rules.map((rule: any) => [rule.host, rule.http.paths[0].backend.service.name]);
    expect(backends).toEqual([
      ["api.qr.example", "qrp-edge"],
      ["qr.example", "qrp-links-redirect"],
    ]);

    const test = helm("template", "qrp", chart, ...required, "--show-only", "templates/tests/test-connection.yaml");
    expect(test.status, test.stderr).toBe(0);
    const pod = parseAllDocuments(test.stdout)[0]!.toJS();
    expect(pod.metadata.annotations["helm.sh/hook"]).toBe("test");
    expect(pod.spec.containers[0].args).toEqual(["http://qrp-edge:8080/readyz"]);
  });

  describe("metrics", () => {
    const monitors = [
      "--set",
      "metrics.serviceMonitor.enabled=true",
      "--set",
      "metrics.podMonitor.enabled=true",
      "--set",
      "metrics.prometheusRule.enabled=true",
    ];
    const monitoringKinds = ["ServiceMonitor", "PodMonitor", "PrometheusRule"];
    let exported: ReadonlySet<string>;
    beforeAll(async () => {
      exported = await exportedMetricNames();
    }, 60_000);

    /** The metric names a PromQL expression reads; fails when it does not parse. */
    function metricsOf(expr: string): string[] {
      const tree = promql.parse(expr);
      const names: string[] = [];
      tree.iterate({
        enter: (node) => {
          if (node.type.isError) throw new Error(`not PromQL at ${node.from}: ${expr}`);
          if (node.name === "Identifier" && node.node.parent?.name === "VectorSelector")
            names.push(expr.slice(node.from, node.to));
        },
      });
      expect(names.length, expr).toBeGreaterThan(0);
      return names;
    }
    /** A name the processes export: a family's own, or a histogram's _bucket, _sum or _count. */
    const isExported = (name: string) => exported.has(name) || exported.has(name.replace(/_(bucket|sum|count)$/, ""));

    it("gives every container and every Service a metrics port, and every process its METRICS_PORT", () => {
      const manifests = render();
      for (const name of [...grpcServices, "edge"]) {
        const container = find(manifests, "Deployment", `qrp-${name}`).spec.template.spec.containers[0];
        expect(container.ports).toContainEqual({ name: "metrics", containerPort: 9464, protocol: "TCP" });
        expect(envOf(find(manifests, "Deployment", `qrp-${name}`)).METRICS_PORT).toBe("9464");
        expect(find(manifests, "Service", `qrp-${name}`).spec.ports).toContainEqual({
          name: "metrics",
          port: 9464,
          targetPort: "metrics",
          protocol: "TCP",
        });
      }
      expect(manifests.filter((m) => [...monitoringKinds, "ConfigMap"].includes(m.kind))).toEqual([]);
    });

    it("renders no monitors without the Prometheus operator's API, even when enabled", () => {
      expect(render(...monitors).filter((m) => monitoringKinds.includes(m.kind))).toEqual([]);
    });

    it("renders the ServiceMonitor, PodMonitor and PrometheusRule where monitoring.coreos.com/v1 is served", () => {
      const manifests = render(
        ...monitors,
        "--set",
        "metrics.serviceMonitor.labels.release=prom",
        "--api-versions",
        "monitoring.coreos.com/v1",
      );
      const serviceMonitor = find(manifests, "ServiceMonitor", "qrp");
      const podMonitor = find(manifests, "PodMonitor", "qrp");
      const rule = find(manifests, "PrometheusRule", "qrp");
      for (const resource of [serviceMonitor, podMonitor, rule])
        expect((resource as unknown as { apiVersion: string }).apiVersion).toBe("monitoring.coreos.com/v1");
      expect(serviceMonitor.metadata.labels).toMatchObject({ release: "prom" });
      expect(serviceMonitor.spec.endpoints).toEqual([{ port: "metrics", path: "/metrics", interval: "30s" }]);
      expect(podMonitor.spec.podMetricsEndpoints).toEqual([{ port: "metrics", path: "/metrics", interval: "30s" }]);
      // Both select every component's Services and pods, and only this release's.
      for (const name of [...grpcServices, "edge"]) {
        const service = find(manifests, "Service", `qrp-${name}`);
        const pod = find(manifests, "Deployment", `qrp-${name}`).spec.template.metadata;
        expect(service.metadata.labels).toMatchObject(serviceMonitor.spec.selector.matchLabels);
        expect(pod.labels).toMatchObject(podMonitor.spec.selector.matchLabels);
      }
      expect(serviceMonitor.spec.selector.matchLabels).toEqual({
        "app.kubernetes.io/name": "qr-platform",
        "app.kubernetes.io/instance": "qrp",
      });

      const rules = rule.spec.groups.flatMap((group: { rules: unknown[] }) => group.rules) as {
        alert: string;
        expr: string;
        for: string;
        labels: { severity: string };
        annotations: { summary: string; description: string };
      }[];
      expect(rules.map((r) => r.alert).sort()).toEqual([
        "QrpApiServerErrors",
        "QrpRedirectLatencyHigh",
        "QrpRpcServerFaults",
        "QrpScansNotStored",
      ]);
      for (const r of rules) {
        expect(r.for, r.alert).toMatch(/^\d+m$/);
        expect(["warning", "critical"]).toContain(r.labels.severity);
        expect(r.annotations.summary.length).toBeGreaterThan(10);
        expect(r.annotations.description.length).toBeGreaterThan(60);
        for (const name of metricsOf(r.expr)) expect(isExported(name), `${r.alert} reads ${name}`).toBe(true);
      }
      const byAlert = Object.fromEntries(rules.map((r) => [r.alert, r.expr]));
      expect(byAlert.QrpScansNotStored).toMatch(/> 600\s*$/);
      expect(byAlert.QrpRedirectLatencyHigh).toMatch(/> 0.25\s*$/);
      const tuned = render(
        ...monitors,
        "--set",
        "metrics.prometheusRule.scansNotStoredMinutes=3",
        "--api-versions",
        "monitoring.coreos.com/v1",
      );
      expect(JSON.stringify(find(tuned, "PrometheusRule", "qrp").spec)).toContain("> 180");
    });

    it("ships the Grafana dashboard as a labelled ConfigMap, querying only metrics the processes export", () => {
      const file = readFileSync(resolve(chart, "dashboards/qr-platform.json"), "utf8");
      const configMap = find(render("--set", "metrics.dashboards.enabled=true"), "ConfigMap", "qrp-dashboards");
      expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: "1" });
      expect((configMap as unknown as { data: Record<string, string> }).data["qr-platform.json"]).toBe(file.trimEnd());
      const dashboard = JSON.parse(file) as { uid: string; panels: { type: string; targets?: { expr: string }[] }[] };
      expect(dashboard.uid).toBe("qr-platform");
      const exprs = dashboard.panels.flatMap((panel) => panel.targets ?? []).map((target) => target.expr);
      expect(exprs.length).toBeGreaterThan(15);
      const queried = new Set<string>();
      // Grafana's variables are replaced as Grafana does before the query reaches Prometheus.
      for (const expr of exprs)
        for (const name of metricsOf(expr.replaceAll("$__rate_interval", "1m").replaceAll("$namespace", "default")))
          queried.add(name);
      expect([...queried].filter((name) => !isExported(name))).toEqual([]);
      // Every series the issue names has a panel.
      for (const name of [
        "http_server_request_duration_seconds_count",
        "grpc_server_handled_total",
        "qrp_redirects_total",
        "qrp_scans_buffered",
        "qrp_scans_spooled",
        "qrp_scans_stored_total",
        "qrp_scan_oldest_unstored_age_seconds",
        "qrp_quota_decisions_total",
        "qrp_render_cache_total",
        "qrp_db_pool_connections",
        "nodejs_eventloop_lag_p99_seconds",
      ]) {
        expect(queried, name).toContain(name);
      }
    });
  });

  it("renders only manifests the Kubernetes API accepts, with every option off and on", () => {
    const everythingOn = [
      "--include-crds",
      "--api-versions",
      "monitoring.coreos.com/v1",
      "--set",
      "ingress.enabled=true",
      "--set",
      "ingress.className=nginx",
      "--set",
      "ingress.redirectHosts[0]=qr.example",
      "--set",
      "ingress.tls[0].secretName=qrp-tls",
      "--set",
      "ingress.tls[0].hosts[0]=api.qr.example",
      "--set",
      "ingress.annotations.cert-manager\\.io/cluster-issuer=letsencrypt",
      "--set",
      "metrics.serviceMonitor.enabled=true",
      "--set",
      "metrics.podMonitor.enabled=true",
      "--set",
      "metrics.prometheusRule.enabled=true",
      "--set",
      "metrics.dashboards.enabled=true",
      "--set",
      "otel.endpoint=http://otel-collector.observability:4318",
      "--set",
      "redisUrl.secretName=qrp-redis",
      "--set",
      "links.trustedProxies[0]=10.0.0.0/8",
      "--set",
      "imagePullSecrets[0].name=registry",
    ];
    const renders = {
      defaults: render(),
      everythingOn: render(...everythingOn),
      httpRoute: render(
        ...everythingOn,
        "--set",
        "operator.route.kind=HTTPRoute",
        "--set",
        "operator.route.gateway.name=public",
      ),
      ingressAnnotation: render(
        "--set",
        "operator.tls.mode=ingress-annotation",
        "--set",
        "operator.route.ingressClassName=nginx",
      ),
      withoutOperator: render("--set", "operator.enabled=false", "--set", "operator.tls.clusterIssuer="),
    };
    const kinds = new Set<string>();
    for (const [name, manifests] of Object.entries(renders)) {
      for (const manifest of manifests) {
        kinds.add(manifest.kind);
        expect(schemaProblems(manifest), `${name}: ${manifest.kind} ${manifest.metadata.name}`).toEqual([]);
      }
    }
    expect([...kinds].sort()).toEqual([
      "ClusterRole",
      "ClusterRoleBinding",
      "ConfigMap",
      "CustomResourceDefinition",
      "Deployment",
      "Ingress",
      "Pod",
      "PodMonitor",
      "PrometheusRule",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
      "ServiceMonitor",
    ]);
  });

  it("finds what the Kubernetes API would refuse: a wrong type, a missing field, an unknown field", () => {
    const deployment = find(render(), "Deployment", "qrp-edge");
    const container = deployment.spec.template.spec.containers[0];
    expect(schemaProblems({ ...deployment, spec: { ...deployment.spec, replicas: "two" } })).toEqual([
      "data/spec/replicas must be integer",
    ]);
    const { selector: _, ...withoutSelector } = deployment.spec;
    expect(schemaProblems({ ...deployment, spec: withoutSelector })).toEqual([
      "data/spec must have required property selector",
    ]);
    const misspelled = {
      ...deployment,
      spec: {
        ...deployment.spec,
        template: {
          ...deployment.spec.template,
          spec: {
            ...deployment.spec.template.spec,
            containers: [{ ...container, readinesProbe: container.readinessProbe }],
          },
        },
      },
    };
    expect(schemaProblems(misspelled)).toEqual(["unknown field .spec.template.spec.containers[0].readinesProbe"]);
    expect(schemaProblems({ apiVersion: "v1", kind: "Secret" })).toEqual([
      "no schema for v1 Secret: add its model to KINDS",
    ]);
  });

  it("refuses values that break the schema, and missing required values", () => {
    const cases: string[][] = [
      ["--set", "metrics.port=0"],
      ["--set", "metrics.serviceMonitor.interval=often"],
      ["--set", "metrics.prometheusRule.serverErrorRatio=2"],
      ["--set-string", "tenancy.replicas=two"],
      ["--set", "customDomainScheme=ftp"],
      ["--set", "edge.service.port=70000"],
      ["--set", "shortLinkBaseUrl=qr.example"],
      ["--set", "image.pullPolicy=Sometimes"],
      ["--set", "otel.protocol=zipkin"],
      ["--set", "otel.hotPathRatio=2"],
      ["--set", "otel.hotPathRatio=lots"],
    ];
    for (const values of cases) {
      const result = helm("template", "qrp", chart, ...required, ...values);
      expect(result.status, values.join(" ")).not.toBe(0);
      expect(result.stderr).toMatch(/values don't meet the specifications of the schema/);
    }
    const missing = helm("template", "qrp", chart);
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toMatch(/is required/);
  });
});
