// @vitest-environment happy-dom
// @vitest-environment-options {"url": "http://127.0.0.1:8080/console/qr-codes/new"}
// The "New QR code" form against a stand-in API: the preview is the API's drawing of the editor's
// design (POST /qr-codes/preview, which stores nothing), one per pause in the editing, a newer one
// abandoning the one before; refusals land beside the control that caused them; and "Create" sends
// the form as the API's create body.
import { h, render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { NewQrCodePage } from "../src/pages/new-qr-code.tsx";
import { json, mountWithSession, routeNotFound } from "./support/stand-in-api.ts";

const WORKSPACE = "8c1d3b0e-7a55-4d59-9d5e-0f7c2a6b1e01";

/** The refusals the API gives a design, as the create and the preview both answer them. */
function refusalOf(design: Record<string, any>): Response | undefined {
  if (design.cornerDotShape !== design.cornerSquareShape) {
    return json(400, {
      error: {
        code: "validation_error",
        message: "Invalid request.",
        request_id: "req_shapes",
        details: {
          fields: [
            {
              field: "design.cornerDotShape",
              reason: "mismatched_corner_shapes",
              message: "must match the corner square",
            },
          ],
        },
      },
    });
  }
  if (design.frame?.type === "circle") {
    return json(403, {
      error: {
        code: "premium_frames_required",
        message: "Circle frames and frame labels need the premium frames add-on on this account.",
        request_id: "req_premium",
        details: {
          fields: [
            { field: "design.frame.type", reason: "addon_required", message: "needs the premium_frames add-on" },
          ],
        },
      },
    });
  }
  return undefined;
}

function fakeApi() {
  const calls: { method: string; path: string; body?: any; signal: AbortSignal }[] = [];
  /** While set, previews wait for it before answering. */
  let held: Promise<void> | undefined;
  const fetch = vi.fn(async (request: Request) => {
    const path = new URL(request.url).pathname.replace("/api/v1", "");
    const body = request.method === "POST" || request.method === "PATCH" ? await request.json() : undefined;
    calls.push({ method: request.method, path, body, signal: request.signal });
    if (request.method === "GET" && path === "/workspaces") {
      return json(200, { data: [{ id: WORKSPACE, name: "Spring", qr_code_count: 0 }], next_cursor: null });
    }
    if (request.method === "POST" && path === "/qr-codes/preview") {
      if (held) await held;
      return (
        refusalOf(body.design) ??
        new Response(new Uint8Array([137, 80, 78, 71]), { headers: { "Content-Type": "image/png" } })
      );
    }
    if (request.method === "POST" && path === `/workspaces/${WORKSPACE}/qr-codes`) {
      return (
        refusalOf(body.design) ??
        json(400, {
          error: {
            code: "validation_error",
            message: "Invalid request.",
            request_id: "req_dest",
            details: {
              fields: [
                { field: "destination_url", reason: "short_link_destination", message: "must not be a short link" },
              ],
            },
          },
        })
      );
    }
    return routeNotFound();
  });
  return {
    fetch,
    calls,
    hold() {
      let release!: () => void;
      held = new Promise((resolve) => {
        release = resolve;
      });
      return () => {
        held = undefined;
        release();
      };
    },
  };
}

function control(id: string) {
  return document.getElementById(id) as HTMLInputElement & HTMLSelectElement;
}
async function change(id: string, value: string, event = "input") {
  await act(() => {
    const element = control(id);
    element.value = value;
    element.dispatchEvent(new Event(event, { bubbles: true }));
  });
}

describe("the New QR code form", () => {
  let root: HTMLElement;
  let unmount: () => void;
  let api: ReturnType<typeof fakeApi>;
  beforeEach(async () => {
    api = fakeApi();
    ({ root, unmount } = await mountWithSession(h(NewQrCodePage, {}), api.fetch));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    unmount();
  });

  const previews = () => api.calls.filter((c) => c.method === "POST" && c.path === "/qr-codes/preview");
  const drawn = (count: number) => vi.waitFor(() => expect(previews()).toHaveLength(count), { timeout: 5000 });
  const image = () => root.querySelector('img[alt="QR code preview"]')?.getAttribute("src");

  it("previews the design through the preview operation, storing nothing, and draws again when it changes", async () => {
    await drawn(1);
    expect(previews()[0]!.body).toEqual({
      design: {
        foreground: "#000000",
        background: "#ffffff",
        style: "square",
        cornerSquareShape: "square",
        cornerDotShape: "square",
        size: 1024,
      },
      format: "png",
      size: 384,
    });
    await vi.waitFor(() => expect(image()).toMatch(/^blob:/));
    const first = image();
    const revoked = vi.spyOn(URL, "revokeObjectURL");

    await change("design-style", "dots", "change");
    await drawn(2);
    expect(previews()[1]!.body.design.style).toBe("dots");
    await vi.waitFor(() => expect(image()).not.toBe(first));
    expect(revoked).toHaveBeenCalledWith(first);
    // Only previews and the workspace list: no code is created, paused or deleted for them.
    expect(api.calls.filter((c) => c.path !== "/qr-codes/preview").map((c) => `${c.method} ${c.path}`)).toEqual([
      "GET /workspaces",
    ]);

    // Leaving the page releases the image and sends nothing.
    const last = image();
    const before = api.calls.length;
    await act(() => render(null, root));
    expect(revoked).toHaveBeenCalledWith(last);
    expect(api.calls).toHaveLength(before);
  });

  it("waits for a pause before drawing: several quick changes make one preview", async () => {
    await drawn(1);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      for (const colour of ["#111111", "#222222", "#333333"]) {
        await change("design-foreground", colour);
        await act(async () => {
          await vi.advanceTimersByTimeAsync(300);
        });
      }
      expect(previews()).toHaveLength(1);
      await act(async () => {
        await vi.advanceTimersByTimeAsync(600);
      });
    } finally {
      vi.useRealTimers();
    }
    await drawn(2);
    expect(previews()[1]!.body.design.foreground).toBe("#333333");
  });

  it("abandons a drawing still under way when a newer design replaces it", async () => {
    await drawn(1);
    await vi.waitFor(() => expect(image()).toMatch(/^blob:/));
    const first = image();
    const release = api.hold();
    await change("design-style", "dots", "change");
    await drawn(2);
    await change("design-style", "rounded", "change");
    await vi.waitFor(() => expect(previews()[1]!.signal.aborted).toBe(true), { timeout: 5000 });
    release();
    await drawn(3);
    await vi.waitFor(() => expect(image()).not.toBe(first));
    expect(previews()[2]!.body.design.style).toBe("rounded");
  });

  it("shows a refused design beside the control that caused it", async () => {
    await drawn(1);
    await change("design-cornerSquareShape", "circle", "change");
    await vi.waitFor(
      () =>
        expect(root.querySelector("#design-cornerDotShape-error")?.textContent).toBe("must match the corner square"),
      {
        timeout: 5000,
      },
    );
    expect(control("design-cornerDotShape").getAttribute("aria-invalid")).toBe("true");
    expect(control("design-cornerDotShape").getAttribute("aria-describedby")).toBe("design-cornerDotShape-error");
    await change("design-cornerDotShape", "circle", "change");
    await drawn(3);
    await vi.waitFor(() => expect(root.querySelector("#design-cornerDotShape-error")).toBeNull());
  });

  it("shows premium_frames_required beside the frame shape", async () => {
    await drawn(1);
    await act(() => {
      control("design-frameEnabled").click();
    });
    await change("design-frameType", "circle", "change");
    await vi.waitFor(
      () => expect(root.querySelector("#design-frameType-error")?.textContent).toMatch(/premium frames add-on/),
      { timeout: 5000 },
    );
    expect(control("design-frameType").getAttribute("aria-invalid")).toBe("true");
    await change("design-frameType", "rounded", "change");
    await vi.waitFor(() => expect(root.querySelector("#design-frameType-error")).toBeNull(), { timeout: 5000 });
  });

  it("creates with the form as the API's body, and puts a refused field's reason beside it", async () => {
    await drawn(1);
    await change("code-name", "Menu");
    await change("code-destination", "https://example.com/menu");
    await change("code-tags", "print, , spring ");
    await change("code-utm-source", "poster");
    await act(() => {
      root.querySelector("form")!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    });
    await vi.waitFor(() => expect(root.querySelector("#code-destination-error")).not.toBeNull());
    const create = api.calls.find((c) => c.method === "POST" && c.body?.name === "Menu")!;
    expect(create.body).toEqual({
      name: "Menu",
      destination_url: "https://example.com/menu",
      tags: ["print", "spring"],
      utm: { source: "poster" },
      design: {
        foreground: "#000000",
        background: "#ffffff",
        style: "square",
        cornerSquareShape: "square",
        cornerDotShape: "square",
        size: 1024,
      },
    });
    expect(root.querySelector("#code-destination-error")?.textContent).toBe("must not be a short link");
    expect(control("code-destination").getAttribute("aria-invalid")).toBe("true");
  });
});
