// fieldValidation=Strict, which kubectl sends once the OpenAPI document lists it: unknown fields refused.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer } from "../src/index.js";
import { customDomainCrd } from "./support.js";

let fake: FakeKubeApiServer;

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ crds: [customDomainCrd] });
});

afterEach(() => fake.close());

describe("fieldValidation=Strict", () => {
  const path = "/apis/qr-platform.io/v1alpha1/customdomains";
  const send = (method: string, url: string, body: string, contentType = "application/json") =>
    fetch(`${fake.url}${url}`, { method, headers: { "content-type": contentType }, body }).then(async (res) => ({
      status: res.status,
      body: (await res.json()) as any,
    }));
  const applyYaml = (spec: string) =>
    `apiVersion: qr-platform.io/v1alpha1\nkind: CustomDomain\nmetadata:\n  name: go.example.com\nspec:\n${spec}`;

  it("refuses fields the CRD's schema does not declare, and takes the declared ones", async () => {
    const typo = await send(
      "PATCH",
      `${path}/go.example.com?fieldManager=kubectl&fieldValidation=Strict`,
      applyYaml("  acountId: x\n"),
      "application/apply-patch+yaml",
    );
    expect(typo.status).toBe(400);
    expect(typo.body).toMatchObject({ kind: "Status", reason: "BadRequest" });
    expect(typo.body.message).toContain('unknown field "spec.acountId"');
    expect(fake.get("customdomains.qr-platform.io", undefined, "go.example.com")).toBeUndefined();

    const nested = await send(
      "POST",
      `${path}?fieldValidation=Strict`,
      JSON.stringify({
        apiVersion: "qr-platform.io/v1alpha1",
        kind: "CustomDomain",
        metadata: { name: "a.example.com", labels: { any: "label" } },
        spec: { accountId: "7b0e3c52-61b4-4f7c-9d3e-1a2b3c4d5e6f" },
        status: { conditions: [{ type: "Ready", colour: "green" }] },
      }),
    );
    expect(nested.status).toBe(400);
    expect(nested.body.message).toContain('unknown field "status.conditions[0].colour"');

    const good = await send(
      "PATCH",
      `${path}/go.example.com?fieldManager=kubectl&fieldValidation=Strict`,
      applyYaml("  accountId: 7b0e3c52-61b4-4f7c-9d3e-1a2b3c4d5e6f\n"),
      "application/apply-patch+yaml",
    );
    expect(good.status).toBe(201);
    // Without Strict the fake stores what it is sent, as it always has.
    const lax = await send(
      "PATCH",
      `${path}/go.example.com?fieldManager=kubectl`,
      applyYaml("  accountId: 7b0e3c52-61b4-4f7c-9d3e-1a2b3c4d5e6f\n  extra: 1\n"),
      "application/apply-patch+yaml",
    );
    expect(lax.status).toBe(200);
  });
});
