// labelSelector and fieldSelector query parameters, in the Kubernetes syntax, for list and watch.
import type { KubeObject } from "./object.js";
import { KubeError } from "./status.js";

/** Whether an object is selected; the two selectors of a request combined. */
export type Selector = (object: KubeObject) => boolean;

type LabelRequirement =
  | { key: string; op: "=" | "!="; value: string }
  | { key: string; op: "in" | "notin"; values: string[] }
  | { key: string; op: "exists" | "!exists" };

const key = "[A-Za-z0-9][-A-Za-z0-9_./]*";
const value = "[-A-Za-z0-9_.]*";
const equality = new RegExp(String.raw`^(${key})\s*(==|=|!=)\s*(${value})$`);
const set = new RegExp(String.raw`^(${key})\s+(in|notin)\s+\(([^)]*)\)$`);
const exists = new RegExp(String.raw`^(!?)\s*(${key})$`);

/** Splits "a in (x,y),b=c" on the commas that separate requirements, not those inside parentheses. */
function terms(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of selector) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(current.trim());
      current = "";
    } else {
      current += ch;
    }
  }
  if (current.trim() !== "") out.push(current.trim());
  return out.filter((t) => t !== "");
}

function parseLabelSelector(selector: string): LabelRequirement[] {
  return terms(selector).map((term): LabelRequirement => {
    let m = equality.exec(term);
    if (m) return { key: m[1]!, op: m[2] === "!=" ? "!=" : "=", value: m[3]! };
    m = set.exec(term);
    if (m) {
      const values = m[3]!
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
      return { key: m[1]!, op: m[2] === "in" ? "in" : "notin", values };
    }
    m = exists.exec(term);
    if (m) return { key: m[2]!, op: m[1] === "!" ? "!exists" : "exists" };
    throw new KubeError("BadRequest", `unable to parse requirement: ${JSON.stringify(term)}`);
  });
}

function labelMatches(req: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const actual = labels[req.key];
  switch (req.op) {
    case "=":
      return has && actual === req.value;
    case "!=":
      return !has || actual !== req.value;
    case "in":
      return has && req.values.includes(actual!);
    case "notin":
      return !has || !req.values.includes(actual!);
    case "exists":
      return has;
    case "!exists":
      return !has;
  }
}

const supportedFields = ["metadata.name", "metadata.namespace"] as const;

function parseFieldSelector(selector: string): ((object: KubeObject) => boolean)[] {
  return terms(selector).map((term) => {
    const m = /^([A-Za-z0-9.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw new KubeError("BadRequest", `invalid field selector: ${JSON.stringify(term)}`);
    const [, field, op, wanted] = m as unknown as [string, string, string, string];
    if (!(supportedFields as readonly string[]).includes(field)) {
      throw new KubeError("BadRequest", `field label not supported: ${field}`);
    }
    const read = (o: KubeObject): string => (field === "metadata.name" ? o.metadata.name : o.metadata.namespace) ?? "";
    return op === "!=" ? (o: KubeObject) => read(o) !== wanted : (o: KubeObject) => read(o) === wanted;
  });
}

/**
 * The selector of a list or watch request. Label selectors support =, ==, !=, in, notin, exists and
 * !exists; field selectors support metadata.name and metadata.namespace with =, == and !=. Anything else
 * is a BadRequest, as on the real server.
 */
export function parseSelectors(labelSelector: string | null, fieldSelector: string | null): Selector {
  const labels = labelSelector ? parseLabelSelector(labelSelector) : [];
  const fields = fieldSelector ? parseFieldSelector(fieldSelector) : [];
  return (object) => {
    const objectLabels = object.metadata.labels ?? {};
    return labels.every((r) => labelMatches(r, objectLabels)) && fields.every((f) => f(object));
  };
}
