// The fair render queue on its own, with renders that finish when the test says so; and the renderer
// over it, for renders that wait for their turn instead of being refused.
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { RenderQrCodeRequestSchema } from "@qrplatform/api/rendering";
import { errorInfoOf } from "@qrplatform/platform";
import { RenderQueue, type RenderQueueOptions, type RunOptions } from "../src/render/render-queue.js";
import { Renderer, type Drawer } from "../src/render/renderer.js";

/** A queue whose renders are named, record when they start, and finish (or fail) on demand. */
function harness(options: RenderQueueOptions) {
  const queue = new RenderQueue(options);
  const started: string[] = [];
  const running = new Map<string, { finish(): void; signal: AbortSignal }>();
  const submit = (account: string, name: string, signal = new AbortController().signal, options?: RunOptions) =>
    queue.run(
      account,
      (workSignal) =>
        new Promise<string>((resolve, reject) => {
          started.push(name);
          running.set(name, { finish: () => resolve(name), signal: workSignal });
          workSignal.addEventListener("abort", () => reject(new Error(`${name} stopped`)), { once: true });
        }),
      signal,
      options,
    );
  const finish = async (name: string) => {
    running.get(name)!.finish();
    running.delete(name);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { queue, started, running, submit, finish };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

describe("render queue", () => {
  it("starts another account's waiting render before the 3rd of a burst", async () => {
    const { started, submit, finish } = harness({ concurrency: 2, perAccount: 2, queuedPerAccount: 100 });
    const burst = Array.from({ length: 100 }, (_, i) => submit("A", `A${i + 1}`));
    const other = submit("B", "B1");
    await settle();
    expect(started).toEqual(["A1", "A2"]);
    await finish("A1");
    expect(started).toEqual(["A1", "A2", "B1"]);
    await finish("B1");
    await expect(other).resolves.toBe("B1");
    await finish("A2");
    expect(started).toEqual(["A1", "A2", "B1", "A3", "A4"]);
    for (let i = 3; i <= 100; i++) await finish(`A${i}`);
    expect(await Promise.all(burst)).toHaveLength(100);
  });

  it("gives each waiting account one render in turn", async () => {
    const { started, submit, finish } = harness({ concurrency: 1, perAccount: 2, queuedPerAccount: 10 });
    const all = ["A1", "A2", "A3", "B1", "B2", "C1"].map((name) => submit(name[0]!, name));
    await settle();
    for (const name of ["A1", "B1", "C1", "A2", "B2", "A3"]) await finish(name);
    expect(started).toEqual(["A1", "B1", "C1", "A2", "B2", "A3"]);
    await Promise.all(all);
  });

  it("runs at most `perAccount` of one account and `concurrency` in all", async () => {
    const { queue, running, submit, finish } = harness({ concurrency: 3, perAccount: 2, queuedPerAccount: 10 });
    const a = Array.from({ length: 5 }, (_, i) => submit("A", `A${i}`));
    await settle();
    expect([...running.keys()]).toEqual(["A0", "A1"]);
    const b = Array.from({ length: 3 }, (_, i) => submit("B", `B${i}`));
    await settle();
    expect([...running.keys()]).toEqual(["A0", "A1", "B0"]);
    while (running.size > 0) {
      expect(running.size).toBeLessThanOrEqual(3);
      expect([...running.keys()].filter((name) => name.startsWith("A")).length).toBeLessThanOrEqual(2);
      await finish([...running.keys()][0]!);
    }
    await Promise.all([...a, ...b]);
    expect(queue.peakRunning).toBe(3);
  });

  it("refuses a render at once with render_queue_full when its account's queue is full, and only that account's", async () => {
    const { started, submit, finish } = harness({ concurrency: 1, perAccount: 1, queuedPerAccount: 2 });
    const accepted = ["A1", "A2", "A3"].map((name) => submit("A", name));
    const refused = await failure(submit("A", "A4"));
    expect(refused.code).toBe(Code.ResourceExhausted);
    expect(errorInfoOf(refused)?.reason).toBe("render_queue_full");
    const other = submit("B", "B1");
    for (const name of ["A1", "B1", "A2", "A3"]) await finish(name);
    expect(started).toEqual(["A1", "B1", "A2", "A3"]);
    await Promise.all([...accepted, other]);
  });

  it("drops a waiting render whose caller gave up: it never starts and its place goes to the next", async () => {
    const { started, submit, finish } = harness({ concurrency: 1, perAccount: 1, queuedPerAccount: 1 });
    const first = submit("A", "A1");
    const giveUp = new AbortController();
    const dropped = submit("A", "A2", giveUp.signal);
    await settle();
    giveUp.abort();
    expect((await failure(dropped)).code).toBe(Code.Canceled);
    // The queue has room again: the place A2 held is free.
    const next = submit("A", "A3");
    await finish("A1");
    await finish("A3");
    expect(started).toEqual(["A1", "A3"]);
    await Promise.all([first, next]);
    expect((await failure(submit("A", "A4", AbortSignal.abort()))).code).toBe(Code.Canceled);
    expect(started).toEqual(["A1", "A3"]);
  });

  it("stops a running render whose caller gave up and starts the next in its place", async () => {
    const { started, running, submit, finish } = harness({ concurrency: 1, perAccount: 1, queuedPerAccount: 5 });
    const giveUp = new AbortController();
    const stopped = submit("A", "A1", giveUp.signal);
    const next = submit("B", "B1");
    await settle();
    expect(started).toEqual(["A1"]);
    giveUp.abort();
    expect(running.get("A1")!.signal.aborted).toBe(true);
    await expect(stopped).rejects.toThrow("A1 stopped");
    await settle();
    expect(started).toEqual(["A1", "B1"]);
    await finish("B1");
    await expect(next).resolves.toBe("B1");
  });

  it("queues a render that waits for its turn past a full queue, in the account's order", async () => {
    const { started, submit, finish } = harness({ concurrency: 1, perAccount: 1, queuedPerAccount: 1 });
    const first = submit("A", "A1");
    const second = submit("A", "A2");
    expect(errorInfoOf(await failure(submit("A", "A3")))?.reason).toBe("render_queue_full");
    const waiting = ["A4", "A5"].map((name) => submit("A", name, undefined, { waitForTurn: true }));
    for (const name of ["A1", "A2", "A4", "A5"]) await finish(name);
    expect(started).toEqual(["A1", "A2", "A4", "A5"]);
    expect(await Promise.all([first, second, ...waiting])).toEqual(["A1", "A2", "A4", "A5"]);
  });
});

describe("renderer: renders that wait for their turn", () => {
  /** A drawer whose images are drawn when the test releases them. */
  function gatedDrawer() {
    const gates: (() => void)[] = [];
    const drawer: Drawer = {
      draw: () => new Promise((resolve) => gates.push(() => resolve(new Uint8Array([1])))),
      close: async () => undefined,
    };
    const releaseAll = async () => {
      for (;;) {
        if (gates.length === 0) await settle();
        if (gates.length === 0) return;
        gates.shift()!();
      }
    };
    return { drawer, releaseAll };
  }
  const request = (content: string, waitForTurn = false) =>
    create(RenderQrCodeRequestSchema, {
      content: `https://qr.example/${content}`,
      size: 128,
      accountId: "A",
      waitForTurn,
    });

  it("waits instead of being refused, even when it joins the same image asked for by a caller that is refused", async () => {
    const { drawer, releaseAll } = gatedDrawer();
    const renderer = new Renderer({ concurrency: 1, concurrencyPerAccount: 1, queuedPerAccount: 0, drawer });
    const running = renderer.render(request("a"));
    await settle();
    expect(errorInfoOf(await failure(renderer.render(request("b"))))?.reason).toBe("render_queue_full");
    const waits = renderer.render(request("c", true));
    // Asked for at once: the second joins the first's render, which the full queue refuses.
    const refused = renderer.render(request("d"));
    const joined = renderer.render(request("d", true));
    expect(errorInfoOf(await failure(refused))?.reason).toBe("render_queue_full");
    await settle();
    expect(renderer.queuedRenders).toBe(2);
    await releaseAll();
    await expect(Promise.all([running, waits, joined])).resolves.toHaveLength(3);
    expect(renderer.renders).toBe(3);
  });
});
