// Server-side Tables (meta.k8s.io/v1 Table), what `kubectl get` asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`: a custom resource's columns come from its CRD's
// additionalPrinterColumns (JSONPath, evaluated as the apiextensions server does), events get the
// columns the real server prints for them, and every other type gets Name and Age.
import { JSONPath } from "jsonpath-plus";
import type { KubeObject } from "./object.js";
import type { PrinterColumn, ResourceType } from "./resources.js";
import { KubeError } from "./status.js";

/** metav1.TableColumnDefinition. */
export interface TableColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** metav1.Table, as JSON. */
export interface Table {
  kind: "Table";
  apiVersion: "meta.k8s.io/v1";
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: TableColumn[];
  rows: { cells: unknown[]; object?: unknown }[];
}

/** How much of each object a row carries: the `includeObject` query parameter. */
export type IncludeObject = "None" | "Metadata" | "Object";

/** The media type kubectl asks for; an Accept header naming it (v1 or v1beta1) wants a Table. */
export function wantsTable(accept: string): boolean {
  return accept
    .split(",")
    .map((range) => range.split(";").map((p) => p.trim()))
    .some((params) => params.includes("as=Table") && params.includes("g=meta.k8s.io"));
}

/** Reads `includeObject`; the real server answers 400 to anything but None, Metadata and Object. */
export function includeObjectOf(value: string | null): IncludeObject {
  if (value === null || value === "") return "Metadata";
  if (value === "None" || value === "Metadata" || value === "Object") return value;
  throw new KubeError(
    "BadRequest",
    `includeObject: Unsupported value: "${value}": supported values: "None", "Metadata", "Object"`,
  );
}

interface ColumnSource {
  definition: TableColumn;
  cell(object: KubeObject, now: Date): unknown;
}

/** The Table of `objects` (already carrying apiVersion and kind) of one type and version. */
export function tableOf(
  type: ResourceType,
  version: string,
  objects: KubeObject[],
  options: { includeObject: IncludeObject; metadata: Table["metadata"]; now?: Date },
): Table {
  const columns = columnsOf(type, version);
  const now = options.now ?? new Date();
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: options.metadata,
    columnDefinitions: columns.map((c) => c.definition),
    rows: objects.map((object) => ({
      cells: columns.map((c) => c.cell(object, now)),
      ...(options.includeObject === "None" ? {} : { object: rowObject(object, options.includeObject) }),
    })),
  };
}

function rowObject(object: KubeObject, include: IncludeObject): unknown {
  if (include === "Object") return object;
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: object.metadata };
}

const nameColumn: ColumnSource = {
  definition: column("Name", "string", "Name must be unique within a namespace.", { format: "name" }),
  cell: (object) => object.metadata?.name ?? "",
};

const ageColumn: ColumnSource = {
  definition: column("Age", "date", "The time since the object was created."),
  cell: (object, now) => age(object.metadata?.creationTimestamp, now),
};

function column(
  name: string,
  type: string,
  description: string,
  extra: { format?: string; priority?: number } = {},
): TableColumn {
  return { name, type, format: extra.format ?? "", description, priority: extra.priority ?? 0 };
}

function columnsOf(type: ResourceType, version: string): ColumnSource[] {
  const printerColumns = type.printerColumns?.[version];
  // A CRD without additionalPrinterColumns prints Name and Age, as the apiextensions server does.
  if (printerColumns?.length) return [nameColumn, ...printerColumns.map(printerColumn)];
  if (type.kind === "Event" && (type.group === "" || type.group === "events.k8s.io")) return eventColumns(type.group);
  return [nameColumn, ageColumn];
}

/** A CRD column: the first JSONPath result, printed by the column's type as the apiextensions server does. */
function printerColumn(spec: PrinterColumn): ColumnSource {
  const path = spec.jsonPath.startsWith("$") ? spec.jsonPath : `$${spec.jsonPath}`;
  return {
    definition: column(spec.name, spec.type, spec.description ?? "", {
      ...(spec.format ? { format: spec.format } : {}),
      priority: spec.priority ?? 0,
    }),
    cell: (object, now) => {
      const results = JSONPath({ path, json: object as object, wrap: true, eval: "safe" }) as unknown[];
      const value = results[0];
      if (value === undefined || value === null) return null;
      switch (spec.type) {
        case "date":
          return typeof value === "string" ? age(value, now) : null;
        case "integer":
          return typeof value === "number" ? Math.trunc(value) : null;
        case "number":
          return typeof value === "number" ? value : null;
        case "boolean":
          return typeof value === "boolean" ? value : null;
        default:
          return typeof value === "object" ? JSON.stringify(value) : String(value);
      }
    },
  };
}

interface EventFields {
  type?: string;
  reason?: string;
  message?: string;
  note?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  involvedObject?: { kind?: string; name?: string; fieldPath?: string };
  regarding?: { kind?: string; name?: string; fieldPath?: string };
  source?: { component?: string; host?: string };
  reportingController?: string;
  reportingInstance?: string;
  deprecatedCount?: number;
  deprecatedFirstTimestamp?: string;
  deprecatedLastTimestamp?: string;
  deprecatedSource?: { component?: string; host?: string };
}

/** The columns `kubectl get events` prints from the real server (core v1 and events.k8s.io/v1 alike). */
function eventColumns(group: string): ColumnSource[] {
  const core = group === "";
  const read = (object: KubeObject, now: Date) => {
    const e = object as KubeObject & EventFields;
    const first = e[core ? "firstTimestamp" : "deprecatedFirstTimestamp"];
    const firstSeen = first ? age(first, now) : age(e.eventTime, now);
    const last = e[core ? "lastTimestamp" : "deprecatedLastTimestamp"];
    const lastSeen = e.series?.lastObservedTime
      ? age(e.series.lastObservedTime, now)
      : last
        ? age(last, now)
        : firstSeen;
    const about = (core ? e.involvedObject : e.regarding) ?? {};
    const source = (core ? e.source : e.deprecatedSource) ?? {};
    const component = source.component || e.reportingController || "";
    const host = source.host || e.reportingInstance || "";
    return {
      lastSeen,
      firstSeen,
      object: about.name ? `${(about.kind ?? "").toLowerCase()}/${about.name}` : (about.kind ?? "").toLowerCase(),
      subobject: about.fieldPath ?? "",
      source: host ? `${component}, ${host}` : component,
      message: ((core ? e.message : e.note) ?? "").trim(),
      count: e.series?.count ?? (e[core ? "count" : "deprecatedCount"] || 1),
      type: e.type ?? "",
      reason: e.reason ?? "",
    };
  };
  const wide = { priority: 1 };
  const cells: [TableColumn, (fields: ReturnType<typeof read>, object: KubeObject) => unknown][] = [
    [
      column("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded."),
      (f) => f.lastSeen,
    ],
    [column("Type", "string", "Type of this event (Normal, Warning)."), (f) => f.type],
    [column("Reason", "string", "Why the action was taken, short and machine-readable."), (f) => f.reason],
    [column("Object", "string", "The object this event is about."), (f) => f.object],
    [column("Subobject", "string", "The part of the object this event is about.", wide), (f) => f.subobject],
    [column("Source", "string", "The component reporting this event.", wide), (f) => f.source],
    [column("Message", "string", "A human-readable description of the status of this operation."), (f) => f.message],
    [column("First Seen", "string", "The time at which the event was first recorded.", wide), (f) => f.firstSeen],
    [column("Count", "string", "The number of times this event has occurred.", wide), (f) => f.count],
    [
      column("Name", "string", "Name must be unique within a namespace.", { format: "name", priority: 1 }),
      (_f, o) => o.metadata?.name ?? "",
    ],
  ];
  return cells.map(([definition, pick]) => ({ definition, cell: (object, now) => pick(read(object, now), object) }));
}

/** The age of a timestamp as kubectl prints it ("<unknown>" when absent, "<invalid>" when in the future). */
function age(timestamp: string | undefined, now: Date): string {
  if (!timestamp) return "<unknown>";
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return "<invalid>";
  return humanDuration(now.getTime() - at);
}

/** k8s.io/apimachinery's duration.HumanDuration: "45s", "3m20s", "5h", "12d", "2y30d". */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.trunc(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${days / 365}y` : `${Math.trunc(days / 365)}y${days % 365}d`;
  return `${Math.trunc(days / 365)}y`;
}
