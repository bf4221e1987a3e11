// charts/qr-platform rendered by a real helm, for the chart tests: the manifests, one of them, its
// environment, and the NOTES.txt an install would print.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect } from "vitest";
import { parseAllDocuments } from "yaml";
import { obtainHelm } from "../../test-tools/kube-binaries.ts";

export const chart = resolve(import.meta.dirname, "../../../charts/qr-platform");

/** The values an install must set (values.yaml says so); every render starts from them. */
export const REQUIRED_VALUES = [
  "--set",
  "databaseUrl.secretName=qrp-db",
  "--set",
  "internalSecret.name=qrp-internal",
  "--set",
  "shortLinkBaseUrl=https://qr.example",
  "--set",
  "operator.tls.clusterIssuer=letsencrypt",
];

let helmBin: string | undefined;
/** Runs helm; the first call may take a minute to unpack the binary (see tools/test-tools/kube-binaries.ts). */
export function helm(...args: string[]) {
  helmBin ??= obtainHelm();
  const result = spawnSync(helmBin, args, { encoding: "utf8" });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: any;
  [field: string]: any;
};

/** Every manifest `helm template qrp` renders with the required values and `extra` arguments. */
export function render(...extra: string[]): Manifest[] {
  const result = helm("template", "qrp", chart, ...REQUIRED_VALUES, ...extra);
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null);
}

export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} rendered`);
  return found;
}

/** The first container's environment: each variable's value, or its valueFrom. */
export function envOf(deployment: Manifest): Record<string, unknown> {
  const container = deployment.spec.template.spec.containers[0];
  return Object.fromEntries(
    container.env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]),
  );
}

export const fromSecret = (name: string, key: string) => ({ secretKeyRef: { name, key } });

/**
 * The NOTES.txt `helm install` would print. helm template never renders it and helm install needs a
 * cluster, so a copy of the chart renders the same text as a manifest field.
 */
export function renderNotes(...extra: string[]): string {
  const copy = mkdtempSync(join(tmpdir(), "qrp-notes-"));
  try {
    cpSync(chart, copy, { recursive: true });
    const notes = readFileSync(join(chart, "templates/NOTES.txt"), "utf8");
    writeFileSync(
      join(copy, "templates/notes-under-test.yaml"),
      `{{- define "notes-under-test" }}${notes}{{- end }}\nnotes: {{ include "notes-under-test" . | toJson }}\n`,
    );
    const result = helm(
      "template",
      "qrp",
      copy,
      ...REQUIRED_VALUES,
      ...extra,
      "--show-only",
      "templates/notes-under-test.yaml",
    );
    expect(result.status, result.stderr).toBe(0);
    return (parseAllDocuments(result.stdout)[0]!.toJS() as { notes: string }).notes;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
