// @vitest-environment happy-dom
// @vitest-environment-options {"url": "http://127.0.0.1:8080/console/qr-codes/x"}
// A code's rules editor, lifecycle fields and "Test a visitor" against a stand-in API: the editor's
// state maps to the API's `rules` array and back with each existing rule's id kept, "Save rules" sends
// the whole ordered array, refusals naming `rules[i]...` land beside that rule's control, and the
// visitor test asks the resolve operation and shows its answer.
import { h, render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { consoleClient } from "../src/api.ts";
import { LifecycleEditor, RulesEditor, TestVisitor } from "../src/pages/qr-code-rules.tsx";
import { emptyRule, type RoutingRule, ruleFormOf, ruleInputOf, ruleProblems } from "../src/rules.ts";
import { ApiError } from "../src/api.ts";
import { SessionContext } from "../src/ui.tsx";
import { json, routeNotFound } from "./support/stand-in-api.ts";

const CODE_ID = "5b0a3f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
const RULE_A = "0b9a2c4e-0000-4000-8000-00000000000a";
const RULE_B = "0b9a2c4e-0000-4000-8000-00000000000b";

const splitRule: RoutingRule = {
  id: RULE_A,
  name: "Phones in Japan",
  conditions: {
    countries: ["JP"],
    devices: ["mobile"],
    os: ["ios", "android"],
    languages: ["ja"],
    schedule: { time_zone: "Asia/Tokyo", days: ["mon", "fri"], from: "22:00", to: "06:00" },
    after: "2026-12-01T09:00:00Z",
    before: "2027-01-01T00:00:30Z",
  },
  variants: [
    { destination_url: "https://example.com/a", weight: 70 },
    { destination_url: "https://example.com/b", weight: 30 },
  ],
};

function code(rules: RoutingRule[], more: Record<string, unknown> = {}) {
  return {
    id: CODE_ID,
    name: "Menu",
    destination_url: "https://example.com/menu",
    rules,
    starts_at: null,
    expires_at: null,
    max_scans: null,
    expired_url: null,
    password_protected: false,
    lifecycle: "live",
    ...more,
  } as any;
}

function refusal(field: string, message: string) {
  return json(400, {
    error: {
      code: "validation_error",
      message: "Invalid request.",
      request_id: "req_bad",
      details: { fields: [{ field, reason: "invalid_value", message }] },
    },
  });
}

describe("the mapping between the rules editor and the API's rules", () => {
  it("gives back a rule read from the API unchanged, id included", () => {
    expect(ruleInputOf(ruleFormOf(splitRule))).toEqual(splitRule);
    const simple: RoutingRule = {
      id: RULE_B,
      conditions: { countries: ["FR"] },
      destination_url: "https://example.fr",
    };
    expect(ruleInputOf(ruleFormOf(simple))).toEqual(simple);
  });

  it("sends only the conditions given, normalised, and no id for a new rule", () => {
    const form = {
      ...emptyRule(),
      countries: " fr, be ,",
      languages: "EN",
      devices: ["desktop", "mobile"] as const,
      destination: " https://example.com/x ",
    };
    expect(ruleInputOf({ ...form, devices: [...form.devices] })).toEqual({
      conditions: { countries: ["FR", "BE"], devices: ["mobile", "desktop"], languages: ["en"] },
      destination_url: "https://example.com/x",
    });
    expect(ruleInputOf({ ...emptyRule(), split: true })).toEqual({
      conditions: {},
      variants: [
        { destination_url: "", weight: 50 },
        { destination_url: "", weight: 50 },
      ],
    });
  });

  it("maps refusal paths to the rule at that index and its control", () => {
    const error = new ApiError(400, "validation_error", "Invalid request.", "req", {
      fields: [
        { field: "rules[1].conditions.schedule.time_zone", reason: "invalid_value", message: "unknown zone" },
        { field: "rules[0].conditions.countries[2]", reason: "invalid_value", message: "unknown country" },
        { field: "rules[0].variants[1].weight", reason: "invalid_value", message: "bad weight" },
        { field: "rules[1].variants", reason: "invalid_value", message: "must sum to 100" },
        { field: "rules", reason: "too_many", message: "at most 50 rules" },
      ],
    });
    expect(ruleProblems(error, ["k0", "k1"])).toEqual({
      byRule: {
        k0: { countries: "unknown country", "variants.1.weight": "bad weight" },
        k1: { time_zone: "unknown zone", variants: "must sum to 100" },
      },
      general: ["at most 50 rules"],
    });
  });
});

describe("a code's rules, lifecycle and visitor test", () => {
  let root: HTMLElement;
  let calls: { method: string; path: string; query: Record<string, string>; body?: any }[];
  let current: any;

  function fakeFetch() {
    return vi.fn(async (request: Request) => {
      const url = new URL(request.url);
      const path = url.pathname.replace("/api/v1", "");
      const body = request.method === "PATCH" ? await request.json() : undefined;
      calls.push({ method: request.method, path, query: Object.fromEntries(url.searchParams), body });
      if (request.method === "PATCH" && path === `/qr-codes/${CODE_ID}`) {
        if (body.rules?.[1]?.conditions?.schedule?.time_zone === "Mars/Olympus") {
          return refusal("rules[1].conditions.schedule.time_zone", "is not a known time zone");
        }
        if (body.password?.length < 8) return refusal("password", "must be 8–128 characters");
        const rules = body.rules?.map((rule: any, i: number) => ({ ...rule, id: rule.id ?? `new-rule-${i}` }));
        current = code(rules ?? current.rules, {
          ...(body.max_scans !== undefined ? { max_scans: body.max_scans } : {}),
          ...(body.password ? { password_protected: true } : {}),
        });
        return json(200, current);
      }
      if (request.method === "GET" && path === `/qr-codes/${CODE_ID}/resolve`) {
        return json(200, {
          qr_code_id: CODE_ID,
          outcome: "rule",
          destination_url: "https://example.com/a",
          rule_id: RULE_A,
          variant: 0,
        });
      }
      return routeNotFound();
    });
  }

  async function show(component: any) {
    const session = {
      api: consoleClient("qrp_test", () => {}, { fetch: fakeFetch() as unknown as typeof fetch }),
      refreshAccount: () => {},
    };
    await act(() =>
      render(h(SessionContext.Provider, { value: session }, h(component, { code: current, onSaved: () => {} })), root),
    );
  }

  beforeEach(() => {
    calls = [];
    current = code([splitRule]);
    root = document.createElement("div");
    document.body.append(root);
  });
  afterEach(() => {
    render(null, root);
    root.remove();
  });

  /** The rule fieldset named "Rule n". */
  const rule = (n: number) =>
    [...root.querySelectorAll("fieldset.rule")].find(
      (f) => f.querySelector(":scope > legend")?.textContent === `Rule ${n}`,
    ) as HTMLElement;
  /** The control labelled `label` inside `scope`. */
  const labelled = (scope: ParentNode, label: string) => {
    const element = [...scope.querySelectorAll("label")].find((l) => l.textContent?.trim() === label);
    if (!element) throw new Error(`no label ${label}`);
    return (element.htmlFor ? root.querySelector(`#${element.htmlFor}`) : element.querySelector("input")) as
      | HTMLInputElement
      | HTMLSelectElement;
  };
  const type = async (element: HTMLInputElement | HTMLSelectElement, value: string, event = "input") =>
    act(() => {
      element.value = value;
      element.dispatchEvent(new Event(event, { bubbles: true }));
    });
  const click = async (element: Element) => act(() => (element as HTMLElement).click());
  const button = (name: string) =>
    [...root.querySelectorAll("button")].find((b) => (b.getAttribute("aria-label") ?? b.textContent) === name)!;
  const submit = (heading: string) =>
    act(() => {
      const form = root.querySelector(`form[aria-labelledby="${heading}"]`)!;
      form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    });
  const patches = () => calls.filter((c) => c.method === "PATCH");

  it("saves the whole ordered array, keeping ids, and shows a refusal beside the rule's control", async () => {
    await show(RulesEditor);
    expect(labelled(rule(1), "Countries (ISO codes, separated by commas)").value).toBe("JP");

    await click(button("Add rule"));
    await type(labelled(rule(2), "Countries (ISO codes, separated by commas)"), "fr");
    await type(labelled(rule(2), "Send to URL"), "https://example.fr/");
    await click(labelled(rule(2), "Weekly schedule"));
    await type(labelled(rule(2), "Time zone"), "Mars/Olympus");
    await submit("rules-heading");
    await vi.waitFor(() => expect(patches()).toHaveLength(1));
    expect(patches()[0]!.body).toEqual({
      rules: [
        splitRule,
        {
          conditions: { countries: ["FR"], schedule: { time_zone: "Mars/Olympus" } },
          destination_url: "https://example.fr/",
        },
      ],
    });
    const zone = labelled(rule(2), "Time zone");
    await vi.waitFor(() => expect(zone.getAttribute("aria-invalid")).toBe("true"));
    expect(root.querySelector(`#${zone.getAttribute("aria-describedby")}`)?.textContent).toBe(
      "is not a known time zone",
    );
    expect(labelled(rule(1), "Time zone").getAttribute("aria-invalid")).toBeNull();

    await type(zone, "Europe/Paris");
    await submit("rules-heading");
    await vi.waitFor(() => expect(root.querySelector("[role=status]")?.textContent).toBe("Rules saved."));
    expect(patches()[1]!.body.rules[1].conditions.schedule).toEqual({ time_zone: "Europe/Paris" });

    // The saved rule now has the server's id; moving it first and saving sends both ids in the new order.
    await click(button("Move up rule 2"));
    await submit("rules-heading");
    await vi.waitFor(() => expect(patches()).toHaveLength(3));
    expect(patches()[2]!.body.rules.map((r: { id: string }) => r.id)).toEqual(["new-rule-1", RULE_A]);

    await click(button("Remove rule 1"));
    await submit("rules-heading");
    await vi.waitFor(() => expect(patches()).toHaveLength(4));
    expect(patches()[3]!.body).toEqual({ rules: [splitRule] });
  });

  it("saves the lifecycle, sets a password, and shows a refused password beside its field", async () => {
    await show(LifecycleEditor);
    expect(root.textContent).toContain("Live");
    expect(root.textContent).toContain("No password");
    await type(labelled(root, "Maximum scans (empty for unlimited)"), "50");
    await submit("lifecycle-heading");
    await vi.waitFor(() => expect(patches()).toHaveLength(1));
    expect(patches()[0]!.body).toEqual({ starts_at: null, expires_at: null, max_scans: 50, expired_url: null });

    const password = labelled(root, "New password (8–128 characters)");
    await type(password, "short");
    await click(button("Set password"));
    await vi.waitFor(() => expect(password.getAttribute("aria-invalid")).toBe("true"));
    expect(root.querySelector("#life-password-error")?.textContent).toBe("must be 8–128 characters");
    expect(password.getAttribute("aria-describedby")).toBe("life-password-error");
    await type(password, "long enough");
    await click(button("Set password"));
    await vi.waitFor(() => expect(patches()).toHaveLength(3));
    expect(patches()[2]!.body).toEqual({ password: "long enough" });
  });

  it("asks where a visitor would go and shows the outcome, destination, rule and variant", async () => {
    await show(TestVisitor);
    await type(labelled(root, "Visitor's country (ISO code)"), "JP");
    await type(labelled(root, "Visitor's device"), "mobile", "change");
    await submit("visitor-heading");
    await vi.waitFor(() => expect(root.querySelector(".resolution")).not.toBeNull());
    expect(calls.at(-1)).toMatchObject({
      method: "GET",
      path: `/qr-codes/${CODE_ID}/resolve`,
      query: { country: "JP", device: "mobile" },
    });
    const answer = root.querySelector(".resolution")!.textContent;
    expect(answer).toContain("A rule decided");
    expect(answer).toContain("https://example.com/a");
    expect(answer).toContain("Rule 1: Phones in Japan");
    expect(answer).toContain("Variant 1");
  });
});
