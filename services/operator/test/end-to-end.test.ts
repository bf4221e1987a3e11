// The SRE's journey, end to end: the platform as separate processes (compiled, real gRPC), two
// operator processes (dist/operator.js) against the fake Kubernetes API server, and qrctl as a real
// subprocess. A domain is added with qrctl and verified through the test DNS server; its CR, route and
// Certificate appear; stand-ins for cert-manager and the ingress controller do their part; the CR goes
// Ready, the tenant sees it serving, and a short link answers on the domain's Host. Deleting the domain
// removes everything the operator made. Then the leader is killed and the standby takes over.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { startFakeKubeApiServer, type FakeKubeApiServer, type StoredObject } from "@qrplatform/fake-kube-apiserver";
import { credentials, qrctlJson as parseQrctlJson, REPO_ROOT, runQrctl, type QrctlResult } from "@qrplatform/testing";
import { call, type Stack, startStack } from "@qrplatform/edge/testing";
import type { CustomDomain } from "../src/custom-domain.js";
import type { Certificate, Ingress } from "../src/kube/objects.js";
import { KubectlCli, parseTable } from "./support/kubectl.js";

const CRD = readFileSync(resolve(REPO_ROOT, "charts/qr-platform/crds/customdomains.qr-platform.io.yaml"), "utf8");
const NAMESPACE = "qrp";
const LEASE_SECONDS = 3;
const CUSTOM_DOMAINS = "customdomains.qr-platform.io";
const INGRESSES = "ingresses.networking.k8s.io";
const CERTIFICATES = "certificates.cert-manager.io";
const LEASES = "leases.coordination.k8s.io";

interface OperatorProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exited: Promise<unknown>;
  output(): string;
}

let stack: Stack;
let kube: FakeKubeApiServer;
let workDir: string;
let kubectl: KubectlCli;
const operators: OperatorProcess[] = [];

/** One operator replica, as the chart runs it: the compiled entry point and the chart's environment. */
function startOperator(name: string, kubeconfig: string): OperatorProcess {
  const child = spawn(process.execPath, ["--enable-source-maps", "dist/operator.js"], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      KUBECONFIG: kubeconfig,
      OPERATOR_NAMESPACE: NAMESPACE,
      POD_NAME: name,
      LINKS_URL: stack.grpcUrls!.links,
      TENANCY_URL: stack.grpcUrls!.tenancy,
      ADMIN_TOKEN: credentials.adminToken,
      REDIRECTOR_SERVICE: "qrp-links-redirect",
      REDIRECTOR_PORT: "8081",
      CLUSTER_ISSUER: "letsencrypt",
      LEASE_NAME: "qrp-operator",
      LEASE_DURATION_SECONDS: String(LEASE_SECONDS),
      HEALTH_HOST: "127.0.0.1",
      HEALTH_PORT: "0",
      METRICS_PORT: "0",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const exited = new Promise((done) => child.once("exit", done));
  return { name, child, exited, output: () => out };
}

function qrctl(args: string[]): Promise<QrctlResult> {
  const onlyEnv = {
    PATH: process.env.PATH ?? "",
    QRCTL_TOKEN: credentials.adminToken,
    QRCTL_TENANCY_ADDRESS: stack.grpcUrls!.tenancy,
    QRCTL_LINKS_ADDRESS: stack.grpcUrls!.links,
  };
  return runQrctl([...args, "--json"], { bin: "sources", onlyEnv });
}

async function qrctlJson(args: string[]) {
  return parseQrctlJson(await qrctl(args));
}

/** Polls until `read` returns something (not undefined/false), failing with the operators' output. */
async function eventually<T>(
  what: string,
  read: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: not within ${timeoutMs} ms\n${operators.map((o) => `--- ${o.name}\n${o.output().slice(-4000)}`).join("\n")}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const condition = (cr: CustomDomain | undefined, type: string) => cr?.status?.conditions?.find((c) => c.type === type);
const customDomain = (hostname: string) =>
  kube.get(CUSTOM_DOMAINS, undefined, hostname) as (StoredObject & CustomDomain) | undefined;
const ingressOf = (hostname: string) =>
  kube.get(INGRESSES, NAMESPACE, hostname) as (StoredObject & Ingress) | undefined;
const certificateOf = (hostname: string) =>
  kube.get(CERTIFICATES, NAMESPACE, hostname) as (StoredObject & Certificate) | undefined;

function getOnHost(host: string, path: string): Promise<{ status: number; location?: string }> {
  const target = new URL(stack.redirectorUrl);
  return new Promise((done, fail) => {
    http
      .get({ host: target.hostname, port: target.port, path, headers: { host } }, (res) => {
        res.resume();
        done({ status: res.statusCode!, location: res.headers.location });
      })
      .on("error", fail);
  });
}

// The platform as processes, two operators and kubectl: the heaviest suite here, so it runs once, in
// the embedded pass. What it proves is the operator's work with the Kubernetes API, kubectl and the
// platform's gRPC, the same code on either database.
describe.skipIf(process.env.DATABASE_URL)("the domain operator, end to end", () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), "qrp-operator-e2e-"));
    [stack, kube] = await Promise.all([
      startStack("processes"),
      startFakeKubeApiServer({ crds: [CRD], namespace: NAMESPACE }),
    ]);
    const kubeconfig = join(workDir, "kubeconfig");
    writeFileSync(kubeconfig, kube.kubeConfigYaml());
    kubectl = new KubectlCli(kube);
    operators.push(startOperator("operator-a", kubeconfig), startOperator("operator-b", kubeconfig));
  }, 180_000);

  afterAll(async () => {
    for (const operator of operators) operator.child.kill("SIGKILL");
    await Promise.all(operators.map((o) => o.exited));
    await kube?.close();
    await stack?.close();
    kubectl?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it("takes a domain from qrctl to a Ready CR, serving, and removes everything with it", async () => {
    const hostname = "go.e2e-operator.example";
    const { account } = await stack.admin.createAccount({
      name: "Operator journey",
      subscriptionTier: SubscriptionTier.SCALE,
    });
    const key = (await stack.admin.createApiKey({ accountId: account!.id, scopes: [] })).secret;

    // The SRE adds the domain for the tenant; the CR appears, waiting for its TXT record.
    const added = await qrctlJson(["domains", "add", "--account", account!.id, "--hostname", hostname]);
    const pending = await eventually("the CR of the new domain", () => {
      const cr = customDomain(hostname);
      return condition(cr, "Verified")?.reason === "PendingVerification" && cr;
    });
    expect(pending.spec).toEqual({ accountId: account!.id, domainId: added.id });
    expect(pending.status?.verification).toMatchObject({
      state: "pending",
      challengeRecordName: added.verification.name,
      challengeRecordValue: added.verification.value,
    });
    expect(ingressOf(hostname)).toBeUndefined();

    // The tenant's DNS record is found: verified; the route and Certificate appear.
    stack.dns.setTxt(added.verification.name, added.verification.value);
    await qrctlJson(["domains", "verify", added.id]);
    const verifiedAt = performance.now();
    const ingress = await eventually("the domain's Ingress", () => ingressOf(hostname));
    const certificate = await eventually("the domain's Certificate", () => certificateOf(hostname));
    const cr = customDomain(hostname)!;
    for (const child of [ingress, certificate]) {
      expect(child.metadata.ownerReferences).toEqual([
        expect.objectContaining({
          apiVersion: "qr-platform.io/v1alpha1",
          kind: "CustomDomain",
          name: hostname,
          uid: cr.metadata.uid,
          controller: true,
        }),
      ]);
      expect(child.metadata.managedFields?.map((entry) => entry.manager)).toContain("qr-platform-operator");
    }
    expect(ingress.spec?.rules).toEqual([
      expect.objectContaining({
        host: hostname,
        http: expect.objectContaining({
          paths: [
            expect.objectContaining({ backend: { service: { name: "qrp-links-redirect", port: { number: 8081 } } } }),
          ],
        }),
      }),
    ]);
    expect(certificate.spec).toMatchObject({
      dnsNames: [hostname],
      issuerRef: { kind: "ClusterIssuer", name: "letsencrypt" },
    });

    // Stand-ins for the ingress controller and cert-manager do their part.
    const notAfter = new Date(Date.now() + 90 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
    kube.setStatus(INGRESSES, NAMESPACE, hostname, { loadBalancer: { ingress: [{ ip: "203.0.113.10" }] } });
    kube.setStatus(CERTIFICATES, NAMESPACE, hostname, {
      notAfter,
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "Ready",
          message: "Certificate is up to date and has not expired",
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    });
    const ready = await eventually("the CR Ready", () => {
      const current = customDomain(hostname);
      return condition(current, "Ready")?.status === "True" && current;
    });
    const verifiedToReadyMs = performance.now() - verifiedAt;
    console.log(`verified → Ready in ${verifiedToReadyMs.toFixed(0)} ms (stand-ins answered at once)`);
    expect(condition(ready, "Ready")).toMatchObject({ reason: "Serving" });
    expect(ready.status?.certificate).toMatchObject({ notAfter });

    // What the SRE reads with the real kubectl: the printer columns, the wide ones, the short name and
    // the category, the conditions and events in describe, the event list.
    const [wide] = parseTable(await kubectl.ok("get", "customdomains", "-o", "wide")).filter(
      (row) => row.NAME === hostname,
    );
    expect(wide).toEqual({
      NAME: hostname,
      ACCOUNT: account!.id,
      READY: "True",
      REASON: "Serving",
      "CERT-EXPIRES": notAfter,
      "DOMAIN-ID": added.id,
      AGE: expect.stringMatching(/^\d+s$/),
    });
    const short = parseTable(await kubectl.ok("get", "cdom"));
    expect(Object.keys(short[0]!)).toEqual(["NAME", "ACCOUNT", "READY", "REASON", "AGE"]);
    expect(short.find((row) => row.NAME === hostname)).toMatchObject({
      ACCOUNT: account!.id,
      READY: "True",
      REASON: "Serving",
    });
    expect(parseTable(await kubectl.ok("get", "qrplatform")).map((row) => row.NAME)).toContain(hostname);
    const described = await kubectl.ok("describe", "customdomain", hostname);
    expect(described).toMatch(/Kind:\s+CustomDomain/);
    for (const [type, status, reason] of [
      ["Verified", "True", "Verified"],
      ["RouteAdmitted", "True", "Admitted"],
      ["CertificateReady", "True", "Ready"],
      ["Ready", "True", "Serving"],
    ]) {
      expect(described, type).toMatch(
        new RegExp(`Reason:\\s+${reason}\\n\\s+Status:\\s+${status}\\n\\s+Type:\\s+${type}\\n`),
      );
    }
    expect(described).toMatch(
      /Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n[\s\S]*Normal\s+Serving\s+\S+\s+qr-platform-operator\s+/,
    );
    const events = parseTable(await kubectl.ok("get", "events", "-n", NAMESPACE)).filter(
      (row) => row.OBJECT === `customdomain/${hostname}`,
    );
    expect(events).toContainEqual(
      expect.objectContaining({ TYPE: "Normal", REASON: "Serving", MESSAGE: expect.stringMatching(/redirector/) }),
    );
    expect(events).toContainEqual(expect.objectContaining({ TYPE: "Warning", REASON: "PendingVerification" }));
    const explained = await kubectl.ok("explain", "customdomain.spec");
    expect(explained).toMatch(/KIND:\s+CustomDomain/);
    expect(explained).toMatch(/accountId\s+<string> -required-\n\s+The tenant account that owns the hostname/);

    // A CR the SRE applies (server-side, validated by the server: a misspelt field is refused) is
    // registered for its account.
    const applied = "applied.e2e-operator.example";
    const manifest = kubectl.writeFile(
      "custom-domain.yaml",
      `apiVersion: qr-platform.io/v1alpha1\nkind: CustomDomain\nmetadata:\n  name: ${applied}\nspec:\n  accountId: ${account!.id}\n`,
    );
    const typo = await kubectl.run(
      "apply",
      "--server-side",
      "-f",
      kubectl.writeFile(
        "typo.yaml",
        `apiVersion: qr-platform.io/v1alpha1\nkind: CustomDomain\nmetadata:\n  name: ${applied}\nspec:\n  acountId: ${account!.id}\n`,
      ),
    );
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toContain('unknown field "spec.acountId"');
    expect(customDomain(applied)).toBeUndefined();
    kube.clearRequests();
    expect(await kubectl.ok("apply", "--server-side", "-f", manifest)).toBe(
      `customdomain.qr-platform.io/${applied} serverside-applied\n`,
    );
    expect(kube.requests({ method: "PATCH", path: /customdomains\/applied/ }).map((r) => r.query)).toEqual([
      expect.objectContaining({ fieldManager: "kubectl", fieldValidation: "Strict" }),
    ]);
    const registered = await eventually("the applied CR registered", () => {
      const cr = customDomain(applied);
      return cr?.spec.domainId ? cr : undefined;
    });
    expect(registered.metadata.managedFields?.map((entry) => entry.manager)).toContain("kubectl");
    await eventually("the applied CR waiting for its TXT record", async () => {
      const [row] = parseTable(await kubectl.ok("get", "cdom", applied, "-o", "wide"));
      return row?.REASON === "PendingVerification" && row;
    }).then((row) =>
      expect(row).toMatchObject({ ACCOUNT: account!.id, READY: "False", "DOMAIN-ID": registered.spec.domainId }),
    );

    // The tenant sees it serving; the short link answers on the domain's Host.
    const listed = await eventually("the domain serving in the API", async () => {
      const page = await call(stack.baseUrl, "GET", "/domains", { key });
      const domain = page.body.data.find((d: { id: string }) => d.id === added.id);
      return domain?.serving?.status === "serving" && domain;
    });
    expect(listed.serving).toMatchObject({ route_admitted: true, certificate_ready: true, reason: "Serving" });
    expect(Date.parse(listed.serving.certificate_expires_at)).toBe(Date.parse(notAfter));
    const { body: workspace } = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Doors" } });
    const code = await call(stack.baseUrl, "POST", `/workspaces/${workspace.id}/qr-codes`, {
      key,
      body: {
        name: "Door",
        destination_url: "https://example.com/door",
        vanity_domain_id: added.id,
        vanity_slug: "door",
      },
    });
    expect(code.status).toBe(201);
    expect(await getOnHost(hostname, "/door")).toEqual({ status: 302, location: "https://example.com/door" });

    // Removing the domain (its code first) removes the CR, the route and the Certificate.
    expect((await call(stack.baseUrl, "DELETE", `/qr-codes/${code.body.id}`, { key })).status).toBe(200);
    await qrctlJson(["domains", "remove", added.id]);
    await eventually(
      "everything the operator made gone",
      () => !customDomain(hostname) && !ingressOf(hostname) && !certificateOf(hostname),
    );
  }, 120_000);

  it("has one leader; when it is killed the standby takes over within the lease period", async () => {
    const holder = () =>
      (kube.get(LEASES, NAMESPACE, "qrp-operator")?.spec as { holderIdentity?: string } | undefined)?.holderIdentity ||
      undefined;
    const leaderName = await eventually("a leader", () => holder());
    const leader = operators.find((o) => o.name === leaderName)!;
    const standby = operators.find((o) => o.name !== leaderName)!;

    leader.child.kill("SIGKILL");
    await leader.exited;
    const killedAt = performance.now();
    await eventually("the standby holding the lease", () => holder() === standby.name, (LEASE_SECONDS + 5) * 1000);
    const takeoverMs = performance.now() - killedAt;
    console.log(`leader killed → standby leading in ${takeoverMs.toFixed(0)} ms (lease ${LEASE_SECONDS} s)`);

    // The new leader acts: a new domain is projected.
    const { account } = await stack.admin.createAccount({
      name: "After takeover",
      subscriptionTier: SubscriptionTier.SCALE,
    });
    await qrctlJson(["domains", "add", "--account", account!.id, "--hostname", "after.e2e-operator.example"]);
    await eventually("the CR projected by the new leader", () => customDomain("after.e2e-operator.example"));
  }, 60_000);
});
