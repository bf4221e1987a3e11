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

const metadataFields = ["metadata.name", "metadata.namespace"];

/** A field's value as the field selector sees it: a dotted path, with "source" short for source.component. */
function fieldValue(object: KubeObject, field: string): string {
  const path = field === "source" ? "source.component" : field;
  let value: unknown = object;
  for (const key of path.split(".")) value = (value as Record<string, unknown> | undefined)?.[key];
  return value === undefined || value === null ? "" : String(value);
}

function parseFieldSelector(selector: string, extraFields: readonly string[]): ((object: KubeObject) => boolean)[] {
  return terms(selector).map((term) => {
    const m = /^([A-Za-z0-9.]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw new KubeError("BadRequest", `invalid field selector: ${JSON.stringify(term)}`);
    const [, field, op, wanted] = m as unknown as [string, string, string, string];
    if (!metadataFields.includes(field) && !extraFields.includes(field)) {
      throw new KubeError("BadRequest", `field label not supported: ${field}`);
    }
    const read = (o: KubeObject): string => fieldValue(o, field);
    return op === "!=" ? (o: KubeObject) => read(o) !== wanted : (o: KubeObject) => read(o) === wanted;
  });
}

/**
 * The selector of a list or watch request. Label selectors support =, ==, !=, in, notin, exists and
 * !exists; field selectors support metadata.name, metadata.namespace and the type's `extraFields` (core
 * events: involvedObject.name and the others `kubectl describe` uses) with =, == and !=. Anything else is
 * a BadRequest, as on the real server.
 */
export function parseSelectors(
  labelSelector: string | null,
  fieldSelector: string | null,
  extraFields: readonly string[] = [],
): Selector {
  const labels = labelSelector ? parseLabelSelector(labelSelector) : [];
  const fields = fieldSelector ? parseFieldSelector(fieldSelector, extraFields) : [];
  return (object) => {
    const objectLabels = object.metadata.labels ?? {};
    return labels.every((r) => labelMatches(r, objectLabels)) && fields.every((f) => f(object));
  };
}
