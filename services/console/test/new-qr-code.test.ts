// @vitest-environment happy-dom
// @vitest-environment-options {"url": "http://127.0.0.1:8080/console/qr-codes/new"}
// The "New QR code" form against a stand-in API: the preview is drawn from a draft with the editor's
// design (and the draft it replaces is deleted), refusals land beside the control that caused them,
// and "Create" sends the form as the API's create body.
import { h, render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { consoleClient } from "../src/api.ts";
import { NewQrCodePage } from "../src/pages/new-qr-code.tsx";
import { SessionContext } from "../src/ui.tsx";

const WORKSPACE = "8c1d3b0e-7a55-4d59-9d5e-0f7c2a6b1e01";

function json(status: number, body: unknown) {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

function fakeApi() {
  const calls: { method: string; path: string; body?: any }[] = [];
  let drafts = 0;
  const fetch = vi.fn(async (request: Request) => {
    const path = new URL(request.url).pathname.replace("/api/v1", "");
    const body = request.method === "POST" || request.method === "PATCH" ? await request.json() : undefined;
    calls.push({ method: request.method, path, body });
    if (request.method === "GET" && path === "/workspaces") {
      return json(200, { data: [{ id: WORKSPACE, name: "Spring", qr_code_count: 0 }], next_cursor: null });
    }
    if (request.method === "POST" && path === `/workspaces/${WORKSPACE}/qr-codes`) {
      if (body.design.cornerDotShape !== body.design.cornerSquareShape) {
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
      if (body.name !== "Console preview") {
        return json(400, {
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
        });
      }
      drafts++;
      return json(201, { id: `00000000-0000-4000-8000-00000000000${drafts}` });
    }
    if (request.method === "PATCH") return json(200, {});
    if (request.method === "DELETE") return json(200, { deleted: true });
    if (path.endsWith("/export"))
      return new Response(new Uint8Array([137, 80, 78, 71]), { headers: { "Content-Type": "image/png" } });
    return json(404, { error: { code: "route_not_found", message: "No.", request_id: "req_404" } });
  });
  return { fetch, calls };
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
  let api: ReturnType<typeof fakeApi>;
  beforeEach(async () => {
    api = fakeApi();
    root = document.createElement("div");
    document.body.append(root);
    const session = {
      api: consoleClient("qrp_test", () => {}, { fetch: api.fetch as unknown as typeof fetch }),
      refreshAccount: () => {},
    };
    await act(() => render(h(SessionContext.Provider, { value: session }, h(NewQrCodePage, {})), root));
  });
  afterEach(() => {
    render(null, root);
    root.remove();
  });

  const drafts = () => api.calls.filter((c) => c.method === "POST" && c.body?.name === "Console preview");
  const drawn = (count: number) => vi.waitFor(() => expect(drafts()).toHaveLength(count), { timeout: 5000 });

  it("previews the design through a draft, replacing and deleting the draft when the design changes", async () => {
    await drawn(1);
    expect(drafts()[0]!.body.design).toMatchObject({ style: "square", foreground: "#000000" });
    expect(root.querySelector('img[alt="QR code preview"]')?.getAttribute("src")).toMatch(/^blob:/);

    await change("design-style", "dots", "change");
    await drawn(2);
    expect(drafts()[1]!.body.design.style).toBe("dots");
    await vi.waitFor(() =>
      expect(api.calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual([
        "/qr-codes/00000000-0000-4000-8000-000000000001",
      ]),
    );
  });

  it("deletes the last draft when the tab is closed or reloaded", async () => {
    await vi.waitFor(() => expect(root.querySelector('img[alt="QR code preview"]')).not.toBeNull());
    await act(() => {
      dispatchEvent(new PageTransitionEvent("pagehide"));
    });
    await vi.waitFor(() =>
      expect(api.calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual([
        "/qr-codes/00000000-0000-4000-8000-000000000001",
      ]),
    );
  });

  it("waits for a pause before drawing: several quick changes make one draft", async () => {
    await drawn(1);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      for (const colour of ["#111111", "#222222", "#333333"]) {
        await change("design-foreground", colour);
        await act(async () => {
          await vi.advanceTimersByTimeAsync(300);
        });
      }
      expect(drafts()).toHaveLength(1);
      await act(async () => {
        await vi.advanceTimersByTimeAsync(600);
      });
    } finally {
      vi.useRealTimers();
    }
    await drawn(2);
    expect(drafts()[1]!.body.design.foreground).toBe("#333333");
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
    await drawn(2);
    await vi.waitFor(() => expect(root.querySelector("#design-cornerDotShape-error")).toBeNull());
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
