// @vitest-environment happy-dom
// @vitest-environment-options {"url": "http://127.0.0.1:8080/console/qr-codes"}
// The QR-code list against a stand-in API: the search (after a pause in typing), the status and the
// workspace are the list request's own filters, "Load more" asks for the next page under the same
// filters, and a new filter starts over without the cursor of the old one.
import { h } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { QrCodesPage } from "../src/pages/qr-codes.tsx";
import { json, mountWithSession, routeNotFound } from "./support/stand-in-api.ts";

const WORKSPACE = "8c1d3b0e-7a55-4d59-9d5e-0f7c2a6b1e01";

function code(n: number) {
  return {
    id: `00000000-0000-4000-8000-0000000000${String(n).padStart(2, "0")}`,
    name: `Code ${n}`,
    status: "active",
    tags: [],
    workspace_id: WORKSPACE,
    total_scans: 0,
  };
}

/** Answers every list with two codes and a cursor naming the page after, and records each list's query. */
function fakeApi() {
  const lists: Record<string, string>[] = [];
  const fetch = vi.fn(async (request: Request) => {
    const url = new URL(request.url);
    const path = url.pathname.replace("/api/v1", "");
    if (path === "/workspaces") {
      return json(200, { data: [{ id: WORKSPACE, name: "Spring", qr_code_count: 4 }], next_cursor: null });
    }
    if (path === "/qr-codes") {
      const query = Object.fromEntries(url.searchParams);
      lists.push(query);
      const page = query.cursor ? 2 : 1;
      return json(200, { data: [code(page * 2 - 1), code(page * 2)], next_cursor: page === 1 ? "page-2" : null });
    }
    return routeNotFound();
  });
  return { fetch, lists };
}

describe("the QR-code list", () => {
  let root: HTMLElement;
  let unmount: () => void;
  let api: ReturnType<typeof fakeApi>;
  beforeEach(async () => {
    api = fakeApi();
    ({ root, unmount } = await mountWithSession(h(QrCodesPage, {}), api.fetch));
  });
  afterEach(() => unmount());

  const rows = () => [...root.querySelectorAll("tbody tr td:first-child")].map((cell) => cell.textContent);
  const lastList = () => api.lists.at(-1);
  async function change(id: string, value: string, event: "input" | "change") {
    await act(() => {
      const element = document.getElementById(id) as HTMLInputElement & HTMLSelectElement;
      element.value = value;
      element.dispatchEvent(new Event(event, { bubbles: true }));
    });
  }

  it("asks the API for the search and the status instead of filtering what is loaded", async () => {
    await vi.waitFor(() => expect(rows()).toEqual(["Code 1", "Code 2"]));
    expect(lastList()).toEqual({ limit: "50" });

    await change("code-search", "  Menu ", "input");
    await vi.waitFor(() => expect(lastList()).toEqual({ limit: "50", q: "Menu" }));
    await change("code-status", "paused", "change");
    await vi.waitFor(() => expect(lastList()).toEqual({ limit: "50", q: "Menu", status: "paused" }));
    await change("code-workspace", WORKSPACE, "change");
    await vi.waitFor(() =>
      expect(lastList()).toEqual({ limit: "50", q: "Menu", status: "paused", workspace_id: WORKSPACE }),
    );
    // The API's answer is shown as it is: nothing is filtered out here.
    await vi.waitFor(() => expect(rows()).toEqual(["Code 1", "Code 2"]));
  });

  it("asks once per pause in typing", async () => {
    await vi.waitFor(() => expect(api.lists).toHaveLength(1));
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      for (const typed of ["m", "me", "men"]) {
        await change("code-search", typed, "input");
        await act(async () => {
          await vi.advanceTimersByTimeAsync(100);
        });
      }
      expect(api.lists).toHaveLength(1);
      await act(async () => {
        await vi.advanceTimersByTimeAsync(300);
      });
    } finally {
      vi.useRealTimers();
    }
    await vi.waitFor(() => expect(api.lists).toHaveLength(2));
    expect(lastList()).toEqual({ limit: "50", q: "men" });
  });

  it("loads more under the same filters, and a new filter starts over without the old cursor", async () => {
    await change("code-status", "active", "change");
    await vi.waitFor(() => expect(lastList()).toEqual({ limit: "50", status: "active" }));
    await vi.waitFor(() => expect(rows()).toEqual(["Code 1", "Code 2"]));
    await act(() => {
      [...root.querySelectorAll("button")].find((b) => b.textContent === "Load more")!.click();
    });
    await vi.waitFor(() => expect(rows()).toEqual(["Code 1", "Code 2", "Code 3", "Code 4"]));
    expect(lastList()).toEqual({ limit: "50", status: "active", cursor: "page-2" });

    const before = api.lists.length;
    await change("code-status", "paused", "change");
    await vi.waitFor(() => expect(rows()).toEqual(["Code 1", "Code 2"]));
    expect(api.lists.slice(before)).toEqual([{ limit: "50", status: "paused" }]);
  });
});
