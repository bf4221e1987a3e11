// The CustomDomain CRD (charts/qr-platform/crds/): a valid apiextensions.k8s.io/v1 definition whose
// openAPIV3Schema takes the CRs the operator writes and refuses malformed ones, as the API server would,
// and whose printer columns read fields that exist.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ErrorObject } from "ajv";
import addFormatsModule from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { fieldsOf, schemaProblems } from "./kubernetes-schemas.ts";
import { chart, helm, REQUIRED_VALUES } from "./render.ts";

// ajv-formats is CommonJS with `exports.default`; under Node's ESM interop the default import is the module.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const crdFile = join(chart, "crds/customdomains.qr-platform.io.yaml");
const crdText = readFileSync(crdFile, "utf8");
const crd = parse(crdText);
const version = crd.spec.versions[0];
type Schema = {
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  [keyword: string]: unknown;
};
const openApiSchema: Schema = version.schema.openAPIV3Schema;

/**
 * The schema as the API server applies it to a CR. Kubernetes' x-kubernetes-* extensions are registered:
 * list-type is a marker, list-map-keys refuses two items with the same keys (two Ready conditions).
 */
function crValidator() {
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: "x-kubernetes-list-type",
    schemaType: "string",
    metaSchema: { enum: ["atomic", "set", "map"] },
  });
  ajv.addKeyword({
    keyword: "x-kubernetes-list-map-keys",
    type: "array",
    schemaType: "array",
    errors: false,
    validate: (keys: string[], list: Record<string, unknown>[]) =>
      new Set(list.map((item) => JSON.stringify(keys.map((key) => item[key])))).size === list.length,
  });
  return ajv.compile(openApiSchema);
}
const validateCr = crValidator();
const problemsOf = (cr: unknown) =>
  validateCr(cr) ? [] : (validateCr.errors as ErrorObject[]).map((e) => `${e.instancePath} ${e.message}`);

const condition = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: `${type} is ${status}`,
  lastTransitionTime: "2026-01-10T09:00:00Z",
  observedGeneration: 2,
});
/** A CR as the operator writes it for a verified, served domain. */
const servedCr = () => ({
  apiVersion: "qr-platform.io/v1alpha1",
  kind: "CustomDomain",
  metadata: { name: "links.acme.example", labels: { "app.kubernetes.io/managed-by": "qr-platform-operator" } },
  spec: { accountId: "7b0e5d2c-3f4a-4b8e-9c1d-2e3f4a5b6c7d", domainId: "0f9e8d7c-6b5a-4a3b-8c2d-1e0f9a8b7c6d" },
  status: {
    observedGeneration: 2,
    verification: {
      state: "verified",
      challengeRecordName: "_qr-platform-challenge.links.acme.example",
      challengeRecordValue: "qrp-verify=3q2+7w",
      lastCheckTime: "2026-01-10T08:59:00Z",
    },
    route: { kind: "Ingress", name: "links.acme.example", namespace: "qrp-system" },
    certificate: { name: "links.acme.example", secretName: "links.acme.example-tls", notAfter: "2026-04-10T09:00:00Z" },
    conditions: [
      condition("Verified", "True", "Verified"),
      condition("RouteAdmitted", "True", "Admitted"),
      condition("CertificateReady", "True", "Ready"),
      condition("Ready", "True", "Serving"),
    ],
  },
});

describe("charts/qr-platform: the CustomDomain CRD", () => {
  beforeAll(() => {
    expect(helm("version", "--short").stdout).toMatch(/^v3\./);
  }, 180_000);

  it("is a valid apiextensions.k8s.io/v1 CustomResourceDefinition that helm installs from crds/", () => {
    expect(schemaProblems(crd)).toEqual([]);
    expect(crd.spec).toMatchObject({
      group: "qr-platform.io",
      scope: "Cluster",
      names: { kind: "CustomDomain", plural: "customdomains", singular: "customdomain" },
    });
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: "v1alpha1", served: true, storage: true, subresources: { status: {} } });
    // crds/ is applied as is, never templated, and kept on uninstall.
    expect(crdText).not.toContain("{{");
    const result = helm("template", "qrp", chart, ...REQUIRED_VALUES, "--include-crds");
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("name: customdomains.qr-platform.io");
    expect(helm("template", "qrp", chart, ...REQUIRED_VALUES).stdout).not.toContain("customdomains.qr-platform.io");
  });

  it("has a structural schema: every node says its type", () => {
    const untyped: string[] = [];
    const walk = (schema: Schema, path: string) => {
      if (!schema.type) untyped.push(path);
      for (const [name, property] of Object.entries(schema.properties ?? {})) walk(property, `${path}.${name}`);
      if (schema.items) walk(schema.items, `${path}[]`);
    };
    walk(openApiSchema, "");
    expect(untyped).toEqual([]);
  });

  it("takes the CRs the operator writes, and a bare registration request made with kubectl", () => {
    expect(problemsOf(servedCr())).toEqual([]);
    const pending = servedCr();
    pending.status.verification.state = "pending";
    pending.status.conditions = [
      condition("Verified", "False", "PendingVerification"),
      condition("Ready", "False", "PendingVerification"),
    ];
    expect(problemsOf(pending)).toEqual([]);
    expect(
      problemsOf({
        apiVersion: "qr-platform.io/v1alpha1",
        kind: "CustomDomain",
        metadata: { name: "go.acme.example" },
        spec: { accountId: "7B0E5D2C-3F4A-4B8E-9C1D-2E3F4A5B6C7D" },
      }),
    ).toEqual([]);
  });

  it("refuses malformed CRs with the field at fault", () => {
    const cases: [string, (cr: any) => void, string][] = [
      ["no spec", (cr) => delete cr.spec, " must have required property 'spec'"],
      ["no account", (cr) => delete cr.spec.accountId, "/spec must have required property 'accountId'"],
      ["an account id that is no uuid", (cr) => (cr.spec.accountId = "acme"), "/spec/accountId must match pattern"],
      ["a domain id that is no uuid", (cr) => (cr.spec.domainId = "42"), "/spec/domainId must match pattern"],
      [
        "an unknown condition status",
        (cr) => (cr.status.conditions[3].status = "Maybe"),
        "/status/conditions/3/status must be equal to one of the allowed values",
      ],
      [
        "a condition without a reason",
        (cr) => delete cr.status.conditions[0].reason,
        "/status/conditions/0 must have required property 'reason'",
      ],
      [
        "a reason that is not CamelCase",
        (cr) => (cr.status.conditions[0].reason = "not verified"),
        "/status/conditions/0/reason must match pattern",
      ],
      [
        "a transition time that is no date",
        (cr) => (cr.status.conditions[1].lastTransitionTime = "yesterday"),
        '/status/conditions/1/lastTransitionTime must match format "date-time"',
      ],
      [
        "two Ready conditions",
        (cr) => cr.status.conditions.push(condition("Ready", "False", "RoutePending")),
        '/status/conditions must pass "x-kubernetes-list-map-keys" keyword validation',
      ],
      [
        "an unknown verification state",
        (cr) => (cr.status.verification.state = "done"),
        "/status/verification/state must be equal to one of the allowed values",
      ],
      [
        "an unknown route kind",
        (cr) => (cr.status.route.kind = "Route"),
        "/status/route/kind must be equal to one of the allowed values",
      ],
      [
        "a negative observed generation",
        (cr) => (cr.status.observedGeneration = -1),
        "/status/observedGeneration must be >= 0",
      ],
    ];
    for (const [what, breakIt, problem] of cases) {
      const cr = servedCr();
      breakIt(cr);
      // Exactly one problem each, beginning with the field at fault.
      expect(
        problemsOf(cr).map((found) => found.slice(0, problem.length)),
        what,
      ).toEqual([problem]);
    }
  });

  it("prints hostname, account, Ready, reason and age, each column reading a field the schema has", () => {
    const columns = version.additionalPrinterColumns as {
      name: string;
      type: string;
      jsonPath: string;
      priority?: number;
    }[];
    // kubectl always prints NAME, which is the hostname; the rest at priority 0 show without -o wide.
    expect(columns.filter((column) => !column.priority).map((column) => column.name)).toEqual([
      "Account",
      "Ready",
      "Reason",
      "Age",
    ]);
    const objectMeta = fieldsOf("V1ObjectMeta");
    for (const column of columns) {
      const leaf = schemaAt(column.jsonPath, objectMeta);
      const expected = column.type === "date" ? { type: "string", format: "date-time" } : { type: column.type };
      expect(leaf, `${column.name}: ${column.jsonPath}`).toMatchObject(expected);
    }
    // The check itself refuses a path into nothing.
    expect(() => schemaAt('.status.conditions[?(@.kind=="Ready")].status', objectMeta)).toThrow(/no field kind/);
    expect(() => schemaAt(".spec.account", objectMeta)).toThrow(/no field account/);
  });
});

/**
 * The schema node a printer column's JSONPath reads, such as .status.conditions[?(@.type=="Ready")].reason.
 * metadata is ObjectMeta (its fields and client-node's types of them), which the API server knows and the
 * CRD leaves open. Throws on a path into nothing.
 */
function schemaAt(jsonPath: string, objectMeta: Record<string, string>): Schema {
  const steps = [...jsonPath.matchAll(/\.([A-Za-z0-9_-]+)|\[\?\(@\.([A-Za-z0-9_]+)=="[^"]*"\)\]|\[(?:\*|\d+)\]/g)];
  expect(steps.map((step) => step[0]).join(""), `${jsonPath} is a path of fields, filters and indexes`).toBe(jsonPath);
  if (steps[0]?.[1] === "metadata") {
    const type = steps.length === 2 ? objectMeta[steps[1]![1]!] : undefined;
    if (!type) throw new Error(`${jsonPath}: no such field of ObjectMeta`);
    return type === "Date" ? { type: "string", format: "date-time" } : { type };
  }
  let node = openApiSchema;
  for (const [, field, filterField] of steps) {
    if (field) {
      const next = node.properties?.[field];
      if (!next) throw new Error(`${jsonPath}: no field ${field}`);
      node = next;
    } else {
      if (node.type !== "array" || !node.items) throw new Error(`${jsonPath}: a filter or index on a non-list`);
      node = node.items;
      if (filterField && !node.properties?.[filterField])
        throw new Error(`${jsonPath}: no field ${filterField} in the list's items`);
    }
  }
  return node;
}
