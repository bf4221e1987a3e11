// Injected failures as client-node sees them (500, 429 with Retry-After, a failing watch), and the
// request log tests read to check what a client sent.
import {
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  type KubernetesListObject,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer } from "../src/index.js";
import { customDomain, customDomainCrd, customDomains, failure } from "./support.js";

const ns = "qr";
let fake: FakeKubeApiServer;
let custom: CustomObjectsApi;
let core: CoreV1Api;

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ crds: [customDomainCrd], namespace: ns });
  custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
  core = fake.kubeConfig().makeApiClient(CoreV1Api);
});

afterEach(() => fake.close());

describe("fault injection", () => {
  it("fails the next matching request with 500 InternalError, then serves again", async () => {
    fake.failNext({ method: "GET", path: /customdomains/ });
    const failed = await failure(custom.listClusterCustomObject({ ...customDomains }));
    expect(failed.code).toBe(500);
    expect(failed.status).toMatchObject({ kind: "Status", reason: "InternalError", code: 500 });
    expect(fake.pendingFaults()).toBe(0);
    expect(await custom.listClusterCustomObject({ ...customDomains })).toMatchObject({
      kind: "CustomDomainList",
      items: [],
    });
  });

  it("answers 429 TooManyRequests with Retry-After for as many requests as asked, and only for matching ones", async () => {
    fake.failNext({ count: 2, status: 429, retryAfterSeconds: 3, method: "POST", path: /\/secrets$/ });
    const secret = { metadata: { name: "s" }, stringData: { a: "b" } };

    await custom.createClusterCustomObject({ ...customDomains, body: customDomain("unaffected.example.com") });
    for (let i = 0; i < 2; i++) {
      const throttled = await failure(core.createNamespacedSecret({ namespace: ns, body: secret }));
      expect(throttled.code).toBe(429);
      expect(throttled.headers["retry-after"]).toBe("3");
      expect(throttled.status).toMatchObject({
        reason: "TooManyRequests",
        code: 429,
        details: { retryAfterSeconds: 3 },
      });
    }
    await core.createNamespacedSecret({ namespace: ns, body: secret });
    expect(fake.get("secrets", ns, "s")).toBeDefined();
    expect(fake.requests({ method: "POST" }).map((r) => r.status)).toEqual([201, 429, 429, 201]);
  });

  it("fails a watch, which stops client-node's informer with the status code; a restart recovers", async () => {
    const list = () =>
      custom.listClusterCustomObject({ ...customDomains }) as Promise<KubernetesListObject<KubernetesObject>>;
    const informer = makeInformer<KubernetesObject>(
      fake.kubeConfig(),
      "/apis/qr-platform.io/v1alpha1/customdomains",
      list,
    );
    const errors: { statusCode?: number }[] = [];
    const added: string[] = [];
    informer.on("error", (err) => errors.push(err as { statusCode?: number }));
    informer.on("add", (o) => added.push(o.metadata!.name!));
    fake.failNext({ path: /watch=true/ });

    await informer.start();
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    expect(errors[0]?.statusCode).toBe(500);
    expect(fake.openWatches()).toEqual([]);

    fake.put("customdomains.qr-platform.io", customDomain("later.example.com"));
    await informer.start();
    await vi.waitFor(() => expect(added).toEqual(["later.example.com"]));
    await informer.stop();
  });

  it("logs every request with method, path, query, content type, accept and status", async () => {
    // A common slip: force=true without the apply content type. client-node then sends a JSON patch,
    // which the server refuses; the log shows why.
    const slip = await failure(
      custom.patchClusterCustomObject({
        ...customDomains,
        name: "absent.example.com",
        body: customDomain("absent.example.com"),
        fieldManager: "qr-platform-operator",
        force: true,
      }),
    );
    expect(slip.status).toMatchObject({ reason: "Invalid", code: 422 });
    expect(fake.requests()).toEqual([
      {
        method: "PATCH",
        path: "/apis/qr-platform.io/v1alpha1/customdomains/absent.example.com",
        query: { fieldManager: "qr-platform-operator", force: "true" },
        contentType: "application/json-patch+json",
        accept: "application/json, */*;q=0.8",
        status: 422,
      },
    ]);
    fake.clearRequests();
    expect(fake.requests()).toEqual([]);
  });
});
