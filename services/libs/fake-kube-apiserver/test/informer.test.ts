// client-node's informer (list, then watch from the list's resourceVersion) against the fake: events,
// selectors, a watch that ends, a connection that breaks, and a resourceVersion that is too old.
import {
  CustomObjectsApi,
  makeInformer,
  type KubernetesListObject,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer } from "../src/index.js";
import { customDomain, customDomainCrd, customDomains } from "./support.js";

const path = "/apis/qr-platform.io/v1alpha1/customdomains";
const managedBy = "app.kubernetes.io/managed-by=qr-platform-operator";

let fake: FakeKubeApiServer;
let api: CustomObjectsApi;
let running: { stop(): Promise<void> }[];

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ crds: [customDomainCrd] });
  api = fake.kubeConfig().makeApiClient(CustomObjectsApi);
  running = [];
});

afterEach(async () => {
  for (const informer of running) await informer.stop();
  await fake.close();
});

/**
 * An informer on CustomDomains that records what it saw as "add a.example.com", "update …", "delete …",
 * and the errors it reported while running. client-node's informer.stop() aborts the watch and reports
 * that AbortError through "error" too, so `stop` marks the informer stopped first.
 */
function watchDomains(labelSelector?: string) {
  const list = () =>
    api.listClusterCustomObject({ ...customDomains, ...(labelSelector ? { labelSelector } : {}) }) as Promise<
      KubernetesListObject<KubernetesObject>
    >;
  const informer = makeInformer<KubernetesObject>(fake.kubeConfig(), path, list, labelSelector);
  const seen: string[] = [];
  const errors: unknown[] = [];
  const afterStop: unknown[] = [];
  const state = { stopped: false };
  for (const verb of ["add", "update", "delete"] as const) {
    informer.on(verb, (o) => seen.push(`${verb} ${o.metadata?.name}`));
  }
  informer.on("error", (err) => {
    (state.stopped ? afterStop : errors).push(err);
  });
  const handle = {
    informer,
    seen,
    errors,
    afterStop,
    state,
    start: async () => {
      state.stopped = false;
      await informer.start();
    },
    stop: async () => {
      state.stopped = true;
      await informer.stop();
    },
  };
  running.push(handle);
  return handle;
}

const watchOpen = () => vi.waitFor(() => expect(fake.openWatches()).toHaveLength(1));

describe("informer", () => {
  it("lists, then sees adds, updates and deletes made through the API and directly", async () => {
    fake.put("customdomains.qr-platform.io", customDomain("before.example.com"));
    const { informer, seen, start } = watchDomains();
    await start();
    expect(seen).toEqual(["add before.example.com"]);
    await watchOpen();

    await api.createClusterCustomObject({ ...customDomains, body: customDomain("a.example.com") });
    fake.put(
      "customdomains.qr-platform.io",
      customDomain("a.example.com", { domainId: "4f9e1c3a-0b7d-4e2f-8a6c-5d1e2f3a4b5c" }),
    );
    await api.deleteClusterCustomObject({ ...customDomains, name: "before.example.com" });

    await vi.waitFor(() =>
      expect(seen).toEqual([
        "add before.example.com",
        "add a.example.com",
        "update a.example.com",
        "delete before.example.com",
      ]),
    );
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(["a.example.com"]);
    expect((informer.get("a.example.com") as { spec?: { domainId?: string } }).spec?.domainId).toBe(
      "4f9e1c3a-0b7d-4e2f-8a6c-5d1e2f3a4b5c",
    );
  });

  it("follows a label selector: objects enter and leave the view as their labels change", async () => {
    const { seen, start } = watchDomains(managedBy);
    await start();
    await watchOpen();
    expect(fake.requests({ method: "GET" })[0]?.query.labelSelector).toBe(managedBy);

    const unlabelled = fake.put("customdomains.qr-platform.io", customDomain("b.example.com"));
    const labelled = {
      ...unlabelled,
      metadata: { ...unlabelled.metadata, labels: { "app.kubernetes.io/managed-by": "qr-platform-operator" } },
    };
    fake.put("customdomains.qr-platform.io", labelled);
    fake.put("customdomains.qr-platform.io", { ...labelled, metadata: { ...labelled.metadata, labels: {} } });

    await vi.waitFor(() => expect(seen).toEqual(["add b.example.com", "delete b.example.com"]));
  });

  it("resumes by itself from its last resourceVersion when the server ends the watch", async () => {
    const { seen, errors, start } = watchDomains();
    await start();
    await watchOpen();
    const listedAt = fake.resourceVersion();

    expect(fake.dropWatches("end")).toBe(1);
    fake.put("customdomains.qr-platform.io", customDomain("after-drop.example.com"));

    await vi.waitFor(() => expect(seen).toEqual(["add after-drop.example.com"]));
    expect(errors).toEqual([]);
    const watches = fake.requests({ method: "GET" }).filter((r) => r.query.watch === "true");
    expect(watches.map((r) => r.query.resourceVersion)).toEqual([listedAt, listedAt]);
    expect(fake.requests({ method: "GET" }).filter((r) => r.query.watch === undefined)).toHaveLength(1);
  });

  it("stops with an error when the connection breaks; the caller restarts it and it catches up", async () => {
    const { informer, seen, errors, state, start } = watchDomains();
    // What a caller must do: client-node's informer stops on errors, so restart it (with backoff in real
    // code), unless the caller stopped it itself.
    let restarts = 0;
    informer.on("error", () => {
      if (state.stopped) return;
      restarts++;
      setImmediate(() => void informer.start());
    });
    await start();
    await watchOpen();

    fake.dropWatches("reset");
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    fake.put("customdomains.qr-platform.io", customDomain("after-reset.example.com"));

    await vi.waitFor(() => expect(seen).toEqual(["add after-reset.example.com"]));
    expect(restarts).toBe(1);
  });

  it("relists when its resourceVersion is older than the watch history (410 Gone)", async () => {
    fake.put("customdomains.qr-platform.io", customDomain("old.example.com"));
    const { seen, errors, afterStop, start, stop } = watchDomains();
    await start();
    await watchOpen();
    await stop();
    // The aborted watch reports itself later; restarting before that would let it abort the new watch.
    await vi.waitFor(() => expect(afterStop).toHaveLength(1));

    // While it is stopped: one object goes, one comes, and the history it would resume from is compacted.
    fake.delete("customdomains.qr-platform.io", undefined, "old.example.com");
    fake.put("customdomains.qr-platform.io", customDomain("new.example.com"));
    fake.compactWatchHistory();
    fake.clearRequests();

    await start();
    await vi.waitFor(() =>
      expect(seen).toEqual(["add old.example.com", "delete old.example.com", "add new.example.com"]),
    );
    expect(errors).toEqual([]);
    const gets = fake
      .requests({ method: "GET" })
      .map((r) => (r.query.watch ? `watch ${r.query.resourceVersion}` : "list"));
    expect(gets[0]).toMatch(/^watch \d+$/);
    expect(gets[1]).toBe("list");
    await watchOpen();
  });

  it("answers a stale watch as the real server does: 200, an ERROR event with a 410 Expired Status, end", async () => {
    fake.put("customdomains.qr-platform.io", customDomain("c.example.com"));
    fake.put("customdomains.qr-platform.io", customDomain("d.example.com"));
    const stale = Number(fake.resourceVersion()) - 1;
    fake.compactWatchHistory();

    const response = await fetch(`${fake.url}${path}?watch=true&resourceVersion=${stale}`);
    expect(response.status).toBe(200);
    const lines = (await response.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      {
        type: "ERROR",
        object: expect.objectContaining({ kind: "Status", status: "Failure", reason: "Expired", code: 410 }),
      },
    ]);
  });
});
