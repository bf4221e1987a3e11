// @vitest-environment happy-dom
// @vitest-environment-options {"url": "http://127.0.0.1:8080/console/"}
import { h, render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { App } from "../src/app.tsx";
import { json } from "./support/stand-in-api.ts";

const ACCOUNT = {
  id: "5b0c6f1e-5d1f-4c1c-9d51-6a2a3b1f0c11",
  name: "Acme <b>bold</b>",
  slug: "acme",
  subscription_tier: "origin",
  subscription_status: "active",
  addons: [],
  limits: { qr_codes: 100, custom_links: 100, hourly_requests: 1000 },
  usage: { qr_codes: 7 },
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
};
const KEY = `qrp_${"a".repeat(43)}`;

/** The API as the sign-in sees it: /account for the right key, 401 for any other. */
function fakeApi() {
  const requests: Request[] = [];
  const fetch = vi.fn(async (input: Request) => {
    requests.push(input);
    const url = new URL(input.url);
    if (input.headers.get("Authorization") !== `Bearer ${KEY}`) {
      return json(401, {
        error: { code: "invalid_api_key", message: "The API key is not valid.", request_id: "req_test401" },
      });
    }
    const quota = {
      "RateLimit-Limit": "1000",
      "RateLimit-Remaining": String(1000 - requests.length),
      "RateLimit-Reset": "3600",
    };
    if (url.pathname === "/api/v1/account") return json(200, ACCOUNT, quota);
    if (url.pathname === "/api/v1/workspaces") {
      // Fewer than the account holds: codes outside any workspace count too.
      return json(200, { data: [{ id: "w", name: "W", qr_code_count: 3 }], next_cursor: null }, quota);
    }
    return json(404, { error: { code: "route_not_found", message: "No such route.", request_id: "req_404" } });
  });
  return { fetch, requests };
}

async function settle() {
  for (let i = 0; i < 5; i++) await act(async () => new Promise((resolve) => setTimeout(resolve, 0)));
}

function field(label: string): HTMLInputElement {
  const target = [...document.querySelectorAll("label")].find((l) => l.textContent === label);
  return document.getElementById(target!.htmlFor) as HTMLInputElement;
}
function button(name: string): HTMLButtonElement {
  return [...document.querySelectorAll("button")].find((b) => b.textContent === name)!;
}

describe("signing in with an API key", () => {
  let root: HTMLElement;
  let api: ReturnType<typeof fakeApi>;
  beforeEach(() => {
    sessionStorage.clear();
    localStorage.clear();
    api = fakeApi();
    vi.stubGlobal("fetch", api.fetch);
    root = document.createElement("div");
    document.body.append(root);
  });
  afterEach(() => {
    render(null, root);
    root.remove();
    vi.unstubAllGlobals();
  });

  async function signIn(key: string) {
    await act(() => render(h(App, {}), root));
    const input = field("API key");
    input.value = key;
    await act(() => {
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(() => button("Sign in").click());
    await settle();
  }

  it("keeps the key in sessionStorage only, sends it only as a bearer header, and shows the account", async () => {
    await signIn(KEY);
    expect(sessionStorage.getItem("qrp.console.apiKey")).toBe(KEY);
    expect(localStorage.length).toBe(0);
    expect(document.cookie).toBe("");
    for (const request of api.requests) {
      expect(request.url).not.toContain(KEY);
      expect(request.headers.get("Authorization")).toBe(`Bearer ${KEY}`);
    }
    expect(location.href).not.toContain(KEY);
    const account = root.querySelector('[aria-label="Account"]')!.textContent!;
    // The name is text: its markup is shown, not obeyed.
    expect(account).toContain("Acme <b>bold</b>");
    expect(root.querySelector("b")).toBeNull();
    expect(account).toContain("origin");
    // The account's own count of what it holds, not a sum over workspaces.
    expect(account).toContain("7 of 100 QR codes");
    expect(account).toMatch(/\d+ of 1000 requests/);
  });

  it("forgets the key on Sign out", async () => {
    await signIn(KEY);
    await act(() => button("Sign out").click());
    expect(sessionStorage.getItem("qrp.console.apiKey")).toBeNull();
    expect(field("API key")).toBeTruthy();
  });

  it("refuses a wrong key in plain words with the request id, and keeps nothing", async () => {
    await signIn("qrp_wrong");
    expect(sessionStorage.length).toBe(0);
    const alert = root.querySelector('[role="alert"]')!.textContent!;
    expect(alert).toContain("That API key was not accepted");
    expect(alert).toContain("req_test401");
  });
});
