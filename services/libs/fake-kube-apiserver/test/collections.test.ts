// Lists and watches scoped to a namespace, field and label selectors, paging, and the discovery
// documents client-node's KubernetesObjectApi reads to find a kind's URL.
import { CoreV1Api, KubeConfig, makeInformer, type KubernetesListObject, type V1Secret } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer } from "../src/index.js";
import { customDomainCrd, failure } from "./support.js";

let fake: FakeKubeApiServer;
let core: CoreV1Api;

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ crds: [customDomainCrd] });
  core = fake.kubeConfig().makeApiClient(CoreV1Api);
});

afterEach(() => fake.close());

const secret = (namespace: string, name: string, labels: Record<string, string> = {}) =>
  fake.put("secrets", { metadata: { name, namespace, labels }, type: "Opaque" });

describe("collections", () => {
  it("lists one namespace or all, by field selector metadata.name and by label selector", async () => {
    secret("qr", "a", { tier: "gold" });
    secret("qr", "b", { tier: "silver" });
    secret("other", "a", { tier: "gold" });

    const names = (list: { items: V1Secret[] }) =>
      list.items.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`);
    expect(names(await core.listNamespacedSecret({ namespace: "qr" }))).toEqual(["qr/a", "qr/b"]);
    expect(names(await core.listSecretForAllNamespaces({ fieldSelector: "metadata.name=a" }))).toEqual([
      "other/a",
      "qr/a",
    ]);
    expect(
      names(await core.listSecretForAllNamespaces({ labelSelector: "tier in (gold,bronze),tier!=silver" })),
    ).toEqual(["other/a", "qr/a"]);
    expect(names(await core.listNamespacedSecret({ namespace: "qr", labelSelector: "!tier" }))).toEqual([]);

    const unsupported = await failure(core.listNamespacedSecret({ namespace: "qr", fieldSelector: "type=Opaque" }));
    expect(unsupported.status).toMatchObject({ reason: "BadRequest", code: 400 });
    const malformed = await failure(core.listNamespacedSecret({ namespace: "qr", labelSelector: "tier in gold" }));
    expect(malformed.status).toMatchObject({ reason: "BadRequest", code: 400 });
  });

  it("pages a list with limit and continue", async () => {
    for (const name of ["a", "b", "c"]) secret("qr", name);
    const first = await core.listNamespacedSecret({ namespace: "qr", limit: 2 });
    expect(first.items.map((s) => s.metadata?.name)).toEqual(["a", "b"]);
    expect(first.metadata?.remainingItemCount).toBe(1);
    const rest = await core.listNamespacedSecret({ namespace: "qr", limit: 2, _continue: first.metadata!._continue! });
    expect(rest.items.map((s) => s.metadata?.name)).toEqual(["c"]);
    expect(rest.metadata?._continue).toBeUndefined();
  });

  it("deletes a collection by label selector", async () => {
    secret("qr", "a", { tier: "gold" });
    secret("qr", "b", { tier: "silver" });
    await core.deleteCollectionNamespacedSecret({ namespace: "qr", labelSelector: "tier=gold" });
    expect(fake.list("secrets").map((s) => s.metadata.name)).toEqual(["b"]);
  });

  it("ends a watch after its timeoutSeconds", async () => {
    secret("qr", "a");
    const response = await fetch(`${fake.url}/api/v1/namespaces/qr/secrets?watch=true&timeoutSeconds=1`);
    const events = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED a"]);
    expect(fake.openWatches()).toEqual([]);
  });

  it("watches one namespace only", async () => {
    const list = () => core.listNamespacedSecret({ namespace: "qr" }) as Promise<KubernetesListObject<V1Secret>>;
    const informer = makeInformer<V1Secret>(fake.kubeConfig(), "/api/v1/namespaces/qr/secrets", list);
    const added: string[] = [];
    informer.on("add", (s) => added.push(`${s.metadata?.namespace}/${s.metadata?.name}`));
    await informer.start();
    await vi.waitFor(() =>
      expect(fake.openWatches()).toEqual([
        { path: "/api/v1/namespaces/qr/secrets", resourceVersion: fake.resourceVersion() },
      ]),
    );

    secret("other", "x");
    secret("qr", "y");
    await vi.waitFor(() => expect(added).toEqual(["qr/y"]));
    await informer.stop();
  });

  it("is reachable through the kubeconfig YAML it writes for other processes", async () => {
    secret("qr", "from-yaml");
    const kc = new KubeConfig();
    kc.loadFromString(fake.kubeConfigYaml());
    const list = await kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: "qr" });
    expect(list.items.map((s) => s.metadata?.name)).toEqual(["from-yaml"]);
  });

  it("serves discovery for the core group, named groups and registered CRDs", async () => {
    const read = async (path: string) => (await (await fetch(`${fake.url}${path}`)).json()) as Record<string, any>;
    const coreGroup = await read("/api/v1");
    expect(coreGroup.resources).toContainEqual(
      expect.objectContaining({ name: "secrets", kind: "Secret", namespaced: true }),
    );
    const groups = await read("/apis");
    expect(groups.groups.map((g: { name: string }) => g.name)).toContain("qr-platform.io");
    const crd = await read("/apis/qr-platform.io/v1alpha1");
    expect(crd.resources).toEqual([
      expect.objectContaining({ name: "customdomains", kind: "CustomDomain", namespaced: false }),
      expect.objectContaining({ name: "customdomains/status", kind: "CustomDomain" }),
    ]);
    const unknown = await fetch(`${fake.url}/apis/example.com/v1/widgets`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ kind: "Status", reason: "NotFound", code: 404 });
  });
});
