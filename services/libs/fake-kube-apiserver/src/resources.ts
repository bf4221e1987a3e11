// The kinds of objects the fake serves: the built-ins the domain operator touches, plus any custom
// resource a test registers from its CustomResourceDefinition.
import { KubeError } from "./status.js";

/** One resource type (one REST collection), as discovery would describe it. */
export interface ResourceType {
  /** API group; "" for the core group served under /api/v1. */
  group: string;
  /** Served versions; all share one storage (the fake does no conversion, it only rewrites apiVersion). */
  versions: string[];
  /** Lower-case plural used in URLs, e.g. "ingresses". */
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  /** Whether /status exists; then writes to the main resource ignore status and vice versa. */
  statusSubresource: boolean;
  /**
   * A Kubernetes built-in type rather than a custom resource: built-ins accept strategic merge patch
   * and updates without metadata.resourceVersion; custom resources refuse both, as the real server does.
   */
  builtIn: boolean;
  /** Fields a fieldSelector may name besides metadata.name and metadata.namespace. */
  selectableFields?: string[];
  /** Short names for kubectl (`kubectl get cdom`), from the CRD's spec.names.shortNames. */
  shortNames?: string[];
  /** Categories for kubectl (`kubectl get qrplatform`), from the CRD's spec.names.categories. */
  categories?: string[];
  /** Each served version's additionalPrinterColumns, from the CRD: the columns of its server-side Table. */
  printerColumns?: Record<string, PrinterColumn[]>;
  /** Each served version's openAPIV3Schema, from the CRD: what /openapi/v2 and /openapi/v3 describe. */
  schemas?: Record<string, Record<string, unknown>>;
}

/** One of a CRD version's additionalPrinterColumns. */
export interface PrinterColumn {
  name: string;
  /** integer, number, string, boolean or date. */
  type: string;
  jsonPath: string;
  format?: string;
  description?: string;
  /** 0 shows by default; greater shows with `kubectl get -o wide`. */
  priority?: number;
}

/** The name tests use for a type: "secrets", "ingresses.networking.k8s.io", "customdomains.qr-platform.io". */
export function resourceName(type: ResourceType): string {
  return type.group === "" ? type.plural : `${type.plural}.${type.group}`;
}

/** "v1" for the core group, "group/version" otherwise. */
export function apiVersionOf(group: string, version: string): string {
  return group === "" ? version : `${group}/${version}`;
}

function builtIn(
  group: string,
  version: string,
  kind: string,
  plural: string,
  scope: { namespaced: boolean; status: boolean; builtIn?: boolean },
): ResourceType {
  return {
    group,
    versions: [version],
    plural,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: scope.namespaced,
    statusSubresource: scope.status,
    builtIn: scope.builtIn ?? true,
  };
}

/**
 * The types every fake serves from the start. Gateway API and cert-manager types are custom resources
 * in a real cluster (installed from their CRDs), so they behave as such here too.
 */
export function defaultResourceTypes(): ResourceType[] {
  return [
    builtIn("", "v1", "Namespace", "namespaces", { namespaced: false, status: true }),
    builtIn("", "v1", "Secret", "secrets", { namespaced: true, status: false }),
    builtIn("", "v1", "ConfigMap", "configmaps", { namespaced: true, status: false }),
    {
      ...builtIn("", "v1", "Event", "events", { namespaced: true, status: false }),
      shortNames: ["ev"],
      // The real server's field labels for core events; `kubectl describe` selects by involvedObject.*.
      selectableFields: [
        ...["kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"].map(
          (f) => `involvedObject.${f}`,
        ),
        "reason",
        "reportingComponent",
        "source",
        "type",
      ],
    },
    builtIn("", "v1", "Service", "services", { namespaced: true, status: true }),
    builtIn("events.k8s.io", "v1", "Event", "events", { namespaced: true, status: false }),
    builtIn("networking.k8s.io", "v1", "Ingress", "ingresses", { namespaced: true, status: true }),
    builtIn("coordination.k8s.io", "v1", "Lease", "leases", { namespaced: true, status: false }),
    builtIn("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes", {
      namespaced: true,
      status: true,
      builtIn: false,
    }),
    builtIn("cert-manager.io", "v1", "Certificate", "certificates", { namespaced: true, status: true, builtIn: false }),
  ];
}

interface CrdShape {
  kind?: unknown;
  spec?: {
    group?: unknown;
    scope?: unknown;
    names?: {
      kind?: unknown;
      plural?: unknown;
      singular?: unknown;
      listKind?: unknown;
      shortNames?: unknown;
      categories?: unknown;
    };
    versions?: {
      name?: unknown;
      served?: unknown;
      storage?: unknown;
      subresources?: { status?: unknown };
      additionalPrinterColumns?: PrinterColumn[];
      schema?: { openAPIV3Schema?: Record<string, unknown> };
    }[];
  };
}

/**
 * Reads an apiextensions.k8s.io/v1 CustomResourceDefinition (as parsed from its YAML) into a resource
 * type: group, scope, names (short names and categories too), served versions (the storage version first),
 * the status subresource, and each version's printer columns and schema.
 */
export function resourceTypeFromCrd(crd: unknown): ResourceType {
  const shape = crd as CrdShape;
  const spec = shape?.spec;
  const names = spec?.names;
  if (shape?.kind !== "CustomResourceDefinition" || typeof spec?.group !== "string" || !names) {
    throw new Error(
      "not a CustomResourceDefinition: expected kind CustomResourceDefinition with spec.group and spec.names",
    );
  }
  if (typeof names.kind !== "string" || typeof names.plural !== "string") {
    throw new Error("CustomResourceDefinition spec.names needs kind and plural");
  }
  const served = (spec.versions ?? []).filter((v) => v.served !== false && typeof v.name === "string");
  if (served.length === 0) throw new Error("CustomResourceDefinition serves no version");
  served.sort((a, b) => Number(b.storage === true) - Number(a.storage === true));
  return {
    group: spec.group,
    versions: served.map((v) => v.name as string),
    plural: names.plural,
    singular: typeof names.singular === "string" ? names.singular : names.kind.toLowerCase(),
    kind: names.kind,
    listKind: typeof names.listKind === "string" ? names.listKind : `${names.kind}List`,
    namespaced: spec.scope !== "Cluster",
    statusSubresource: served[0]?.subresources?.status !== undefined,
    builtIn: false,
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
    printerColumns: Object.fromEntries(served.map((v) => [v.name as string, v.additionalPrinterColumns ?? []])),
    schemas: Object.fromEntries(
      served.flatMap((v) => (v.schema?.openAPIV3Schema ? [[v.name as string, v.schema.openAPIV3Schema]] : [])),
    ),
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** The registered types, looked up by URL (group, version, plural), by name, or by apiVersion and kind. */
export class ResourceRegistry {
  private readonly byName = new Map<string, ResourceType>();

  constructor(types: ResourceType[] = []) {
    for (const type of types) this.register(type);
  }

  /** Adds or replaces a type. */
  register(type: ResourceType): void {
    this.byName.set(resourceName(type), type);
  }

  all(): ResourceType[] {
    return [...this.byName.values()];
  }

  /** The type named like kubectl names it ("ingresses.networking.k8s.io"); throws for an unknown name. */
  named(name: string): ResourceType {
    const type = this.byName.get(name);
    if (!type) {
      throw new Error(`unknown resource "${name}"; registered: ${[...this.byName.keys()].sort().join(", ")}`);
    }
    return type;
  }

  /** The type served at /api(s)/<group>/<version>/<plural>, or a NotFound error as the real server gives. */
  served(group: string, version: string, plural: string): ResourceType {
    const type = this.byName.get(group === "" ? plural : `${plural}.${group}`);
    if (!type?.versions.includes(version)) {
      throw new KubeError("NotFound", "the server could not find the requested resource");
    }
    return type;
  }

  /** The type of an ownerReference (apiVersion + kind), if the fake serves it. */
  forKind(apiVersion: string, kind: string): ResourceType | undefined {
    const slash = apiVersion.lastIndexOf("/");
    const group = slash < 0 ? "" : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    return this.all().find((t) => t.group === group && t.kind === kind && t.versions.includes(version));
  }

  /** The versions served for each group, for discovery. */
  groups(): Map<string, Set<string>> {
    const groups = new Map<string, Set<string>>();
    for (const type of this.byName.values()) {
      const versions = groups.get(type.group) ?? new Set<string>();
      for (const v of type.versions) versions.add(v);
      groups.set(type.group, versions);
    }
    return groups;
  }
}
