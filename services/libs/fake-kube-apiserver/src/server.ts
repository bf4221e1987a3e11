// The HTTP surface: the API server's URL layout (/api/v1/..., /apis/<group>/<version>/...), discovery,
// list and watch streams, and Status bodies for every failure.
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Faults, InjectedFailure, RequestRecord } from "./faults.js";
import type { KubeObject } from "./object.js";
import type { Operations, Target } from "./operations.js";
import { patchTypes } from "./patch.js";
import { apiVersionOf, type ResourceRegistry, type ResourceType } from "./resources.js";
import { parseSelectors } from "./selectors.js";
import { KubeError, statusBody } from "./status.js";
import { checkStrictFields } from "./field-validation.js";
import { acceptsJson, groupVersionOfV3Path, openApiV2Document, openApiV3Document, openApiV3Root } from "./openapi.js";
import { includeObjectOf, tableOf, wantsTable } from "./table.js";
import type { ObjectStore } from "./store.js";

/** How dropWatches ends the open watch streams. */
export type DropMode =
  /** The stream ends cleanly, as at the server's watch timeout: client-node's informer reconnects by itself. */
  | "end"
  /** The connection is destroyed, as on a network failure: client-node's informer reports an error and stops. */
  | "reset";

/** An open watch stream. */
export interface WatchInfo {
  /** The watched collection, e.g. /apis/qr-platform.io/v1alpha1/customdomains. */
  path: string;
  /** The resourceVersion the watch started from ("" when it started with the current objects). */
  resourceVersion: string;
}

interface OpenWatch extends WatchInfo {
  response: ServerResponse;
  /** Stops delivering events; called before the stream is ended so nothing is written after the end. */
  stop: () => void;
}

interface Route {
  type: ResourceType;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: "status";
}

const maxBodyBytes = 3 * 1024 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendFailure(res: ServerResponse, failure: InjectedFailure): void {
  if (failure.status === 429) {
    const seconds = failure.retryAfterSeconds ?? 1;
    sendJson(
      res,
      429,
      statusBody("TooManyRequests", "Too many requests, please try again later.", { retryAfterSeconds: seconds }),
      { "Retry-After": String(seconds) },
    );
  } else if (failure.status === 503) {
    sendJson(
      res,
      503,
      statusBody("ServiceUnavailable", "the server is currently unable to handle the request (injected)"),
    );
  } else {
    sendJson(
      res,
      500,
      statusBody("InternalError", "an error on the server (injected) has prevented the request from succeeding"),
    );
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new KubeError("BadRequest", `the request body exceeds ${maxBodyBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string, what: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new KubeError("BadRequest", `invalid JSON in the ${what}: ${(err as Error).message}`);
  }
}

/** The fake's HTTP server; it serves one store through the operations. */
export class ApiHttpServer {
  private readonly server: http.Server;
  private readonly watches = new Set<OpenWatch>();

  constructor(
    private readonly registry: ResourceRegistry,
    private readonly store: ObjectStore,
    private readonly operations: Operations,
    private readonly faults: Faults,
  ) {
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  /** Listens on 127.0.0.1 on a free port and returns the base URL. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => resolve());
    });
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** Ends every open watch stream; returns how many there were. */
  dropWatches(mode: DropMode): number {
    const open = [...this.watches];
    for (const watch of open) {
      watch.stop();
      if (mode === "end") watch.response.end();
      else watch.response.destroy();
    }
    return open.length;
  }

  /** The open watch streams. */
  openWatches(): WatchInfo[] {
    return [...this.watches].map(({ path, resourceVersion }) => ({ path, resourceVersion }));
  }

  /** Ends every stream and connection and stops listening. */
  async close(): Promise<void> {
    this.dropWatches("reset");
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake-kube-apiserver");
    const record: RequestRecord = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      contentType: (req.headers["content-type"] ?? "").split(";")[0]!.trim(),
      accept: req.headers.accept ?? "",
    };
    res.once("close", () => {
      record.status ??= res.statusCode;
    });
    const failure = this.faults.arrive(record);
    if (failure) {
      sendFailure(res, failure);
      return;
    }
    try {
      await this.route(req, res, url, record);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
      } else if (err instanceof KubeError) {
        sendJson(res, err.code, err.toStatus());
      } else {
        sendJson(res, 500, statusBody("InternalError", `fake-kube-apiserver failed: ${(err as Error).message}`));
      }
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, record: RequestRecord): Promise<void> {
    const segments = url.pathname
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent);
    const method = req.method ?? "GET";
    if (segments.length === 1 && ["healthz", "readyz", "livez"].includes(segments[0]!)) {
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
      return;
    }
    if (segments.length === 1 && segments[0] === "version") {
      sendJson(res, 200, { major: "1", minor: "31", gitVersion: "v1.31.0-fake", platform: "linux/amd64" });
      return;
    }
    if (segments[0] === "openapi") {
      if (method !== "GET") throw new KubeError("MethodNotAllowed", `${method} is not supported on /openapi`);
      sendJson(res, 200, this.openApi(segments.slice(1), record.accept));
      return;
    }
    const discovery = this.discovery(segments);
    if (discovery !== undefined) {
      if (method !== "GET") throw new KubeError("MethodNotAllowed", `${method} is not supported on discovery`);
      sendJson(res, 200, discovery);
      return;
    }
    const route = this.resolve(segments);
    const query = url.searchParams;
    const target: Target = {
      type: route.type,
      version: route.version,
      ...(route.namespace !== undefined ? { namespace: route.namespace } : {}),
      scope: route.subresource === "status" ? "status" : "main",
      fieldManager: this.fieldManager(req, query),
      dryRun: query.get("dryRun") === "All",
    };
    const present = (o: KubeObject): KubeObject => ({
      ...o,
      apiVersion: apiVersionOf(route.type.group, route.version),
    });

    if (route.name === undefined) {
      const selector = parseSelectors(
        query.get("labelSelector"),
        query.get("fieldSelector"),
        route.type.selectableFields,
      );
      if (method === "GET" && ["true", "1"].includes(query.get("watch") ?? "")) {
        this.watch(res, url, route, target, selector, record);
        return;
      }
      if (method === "GET") {
        const limit = query.has("limit") ? Number(query.get("limit")) : undefined;
        const page = this.operations.list(target, selector, limit, query.get("continue") ?? undefined);
        const metadata = {
          resourceVersion: page.resourceVersion,
          ...(page.continue ? { continue: page.continue, remainingItemCount: page.remainingItemCount } : {}),
        };
        if (wantsTable(record.accept)) {
          const includeObject = includeObjectOf(query.get("includeObject"));
          sendJson(res, 200, tableOf(route.type, route.version, page.items.map(present), { includeObject, metadata }));
          return;
        }
        sendJson(res, 200, {
          apiVersion: apiVersionOf(route.type.group, route.version),
          kind: route.type.listKind,
          metadata,
          items: page.items.map(present),
        });
        return;
      }
      if (method === "POST") {
        const body = await readBody(req);
        checkStrictFields(route.type, route.version, query.get("fieldValidation"), body, "application/json");
        const created = this.operations.create(target, parseJson(body, "request body"));
        sendJson(res, 201, present(created));
        return;
      }
      if (method === "DELETE") {
        const deleted = this.operations.deleteCollection(target, selector);
        sendJson(res, 200, {
          apiVersion: apiVersionOf(route.type.group, route.version),
          kind: route.type.listKind,
          metadata: { resourceVersion: this.store.resourceVersion() },
          items: deleted.map(present),
        });
        return;
      }
      throw new KubeError("MethodNotAllowed", `${method} is not supported on a collection`);
    }

    const name = route.name;
    switch (method) {
      case "GET": {
        const object = present(this.operations.get(target, name));
        if (wantsTable(record.accept) && !route.subresource) {
          const includeObject = includeObjectOf(query.get("includeObject"));
          const metadata = { resourceVersion: object.metadata?.resourceVersion };
          sendJson(res, 200, tableOf(route.type, route.version, [object], { includeObject, metadata }));
          return;
        }
        sendJson(res, 200, object);
        return;
      }
      case "PUT": {
        const body = await readBody(req);
        checkStrictFields(route.type, route.version, query.get("fieldValidation"), body, "application/json");
        sendJson(res, 200, present(this.operations.replace(target, name, parseJson(body, "request body"))));
        return;
      }
      case "PATCH": {
        const body = await readBody(req);
        const known: string[] = Object.values(patchTypes);
        if (!known.includes(record.contentType)) {
          throw new KubeError(
            "UnsupportedMediaType",
            `the body of the request was in an unknown format - accepted media types include: ${known.join(", ")}`,
          );
        }
        if (record.contentType === patchTypes.apply && !query.get("fieldManager")) {
          throw new KubeError("BadRequest", "PATCH, application/apply-patch+yaml requests require fieldManager");
        }
        checkStrictFields(route.type, route.version, query.get("fieldValidation"), body, record.contentType);
        const result = this.operations.patch(target, name, record.contentType, body, query.get("force") === "true");
        sendJson(res, result.created ? 201 : 200, present(result.object));
        return;
      }
      case "DELETE":
        if (route.subresource) throw new KubeError("MethodNotAllowed", "DELETE is not supported on /status");
        sendJson(
          res,
          200,
          present(this.operations.delete(target, name, parseJson(await readBody(req), "delete options"))),
        );
        return;
      default:
        throw new KubeError("MethodNotAllowed", `${method} is not supported on an object`);
    }
  }

  /** The real server defaults the field manager of non-apply writes to the User-Agent's product name. */
  private fieldManager(req: IncomingMessage, query: URLSearchParams): string {
    const explicit = query.get("fieldManager");
    if (explicit) {
      if (explicit.length > 128)
        throw new KubeError("Invalid", "fieldManager: Too long: may not be more than 128 bytes");
      return explicit;
    }
    const agent = req.headers["user-agent"] ?? "";
    return agent.split("/")[0]!.trim() || "unknown";
  }

  /** Splits /api/v1/[namespaces/<ns>/]<plural>[/<name>[/status]] and its /apis/<group>/<version> twin. */
  private resolve(segments: string[]): Route {
    let group: string;
    let version: string;
    let rest: string[];
    if (segments[0] === "api" && segments.length >= 3) {
      [group, version, rest] = ["", segments[1]!, segments.slice(2)];
    } else if (segments[0] === "apis" && segments.length >= 4) {
      [group, version, rest] = [segments[1]!, segments[2]!, segments.slice(3)];
    } else {
      throw new KubeError("NotFound", "the server could not find the requested resource");
    }
    let namespace: string | undefined;
    if (rest[0] === "namespaces" && rest.length >= 3) {
      const inner = this.registry.all().find((t) => t.group === group && t.plural === rest[2] && t.namespaced);
      if (inner) {
        namespace = rest[1];
        rest = rest.slice(2);
      }
    }
    if (rest.length > 3) throw new KubeError("NotFound", "the server could not find the requested resource");
    const [plural, name, subresource] = rest as [string, string | undefined, string | undefined];
    const type = this.registry.served(group, version, plural);
    if (type.namespaced && name !== undefined && namespace === undefined) {
      throw new KubeError("NotFound", `${plural} is namespaced: the path must name a namespace`);
    }
    if (subresource !== undefined && (subresource !== "status" || !type.statusSubresource)) {
      throw new KubeError("NotFound", "the server could not find the requested resource");
    }
    return {
      type,
      version,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(subresource === "status" ? { subresource: "status" as const } : {}),
    };
  }

  /** /openapi/v2 (JSON only), /openapi/v3 and /openapi/v3/<api/v1 | apis/<group>/<version>>. */
  private openApi(rest: string[], accept: string): unknown {
    if (rest.length === 1 && rest[0] === "v2") {
      if (!acceptsJson(accept)) {
        throw new KubeError(
          "NotAcceptable",
          "only application/json is served for /openapi/v2 by the fake, not protobuf",
        );
      }
      return openApiV2Document(this.registry);
    }
    if (rest[0] === "v3" && rest.length === 1) return openApiV3Root(this.registry);
    if (rest[0] === "v3") {
      const { group, version } = groupVersionOfV3Path(rest.slice(1));
      return openApiV3Document(this.registry, group, version);
    }
    throw new KubeError("NotFound", "the server could not find the requested resource");
  }

  /** /api, /apis, /api/v1, /apis/<group> and /apis/<group>/<version>: what KubernetesObjectApi and kubectl read. */
  private discovery(segments: string[]): unknown {
    const groups = this.registry.groups();
    const versionsOf = (group: string) => [...(groups.get(group) ?? [])];
    const groupEntry = (group: string) => {
      const versions = versionsOf(group).map((v) => ({ groupVersion: apiVersionOf(group, v), version: v }));
      return { name: group, versions, preferredVersion: versions[0] };
    };
    const resourceList = (group: string, version: string) => {
      if (!groups.get(group)?.has(version))
        throw new KubeError("NotFound", "the server could not find the requested resource");
      const resources = this.registry
        .all()
        .filter((t) => t.group === group && t.versions.includes(version))
        .flatMap((t) => [
          {
            name: t.plural,
            singularName: t.singular,
            namespaced: t.namespaced,
            kind: t.kind,
            verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
            ...(t.shortNames?.length ? { shortNames: t.shortNames } : {}),
            ...(t.categories?.length ? { categories: t.categories } : {}),
          },
          ...(t.statusSubresource
            ? [
                {
                  name: `${t.plural}/status`,
                  singularName: "",
                  namespaced: t.namespaced,
                  kind: t.kind,
                  verbs: ["get", "patch", "update"],
                },
              ]
            : []),
        ]);
      return { kind: "APIResourceList", apiVersion: "v1", groupVersion: apiVersionOf(group, version), resources };
    };
    const [root, a, b] = segments;
    if (root === "api" && segments.length === 1) return { kind: "APIVersions", versions: versionsOf("") };
    if (root === "api" && segments.length === 2) return resourceList("", a!);
    if (root === "apis" && segments.length === 1) {
      const named = [...groups.keys()].filter((g) => g !== "").sort();
      return { kind: "APIGroupList", apiVersion: "v1", groups: named.map(groupEntry) };
    }
    if (root === "apis" && segments.length === 2) {
      if (!groups.has(a!) || a === "")
        throw new KubeError("NotFound", "the server could not find the requested resource");
      return { kind: "APIGroup", apiVersion: "v1", ...groupEntry(a!) };
    }
    if (root === "apis" && segments.length === 3) return resourceList(a!, b!);
    return undefined;
  }

  /**
   * A watch stream: one JSON event per line. Headers are flushed at once (client-node waits for them).
   * A resourceVersion older than the kept window gets what the real server sends: HTTP 200, then an ERROR
   * event holding a 410 Expired Status, then the end of the stream; client-node's informer relists.
   */
  private watch(
    res: ServerResponse,
    url: URL,
    route: Route,
    target: Target,
    selector: ReturnType<typeof parseSelectors>,
    record: RequestRecord,
  ): void {
    const resourceVersion = url.searchParams.get("resourceVersion") ?? "";
    const apiVersion = apiVersionOf(route.type.group, route.version);
    res.statusCode = 200;
    res.setHeader("Content-Type", "application/json");
    res.setHeader("Cache-Control", "no-cache, private");
    record.status = 200;
    const send = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
    let unsubscribe: () => void;
    try {
      unsubscribe = this.store.watch(
        { type: route.type, ...(target.namespace ? { namespace: target.namespace } : {}), selector, resourceVersion },
        (type, object) => send(type, { ...object, apiVersion }),
      );
    } catch (err) {
      if (err instanceof KubeError && err.reason === "Expired") {
        send("ERROR", err.toStatus());
        res.end();
        return;
      }
      record.status = undefined;
      throw err;
    }
    res.flushHeaders();
    const timeoutSeconds = Number(url.searchParams.get("timeoutSeconds") ?? "0");
    const timer =
      timeoutSeconds > 0
        ? setTimeout(() => {
            open.stop();
            res.end();
          }, timeoutSeconds * 1000)
        : undefined;
    const open: OpenWatch = {
      path: url.pathname,
      resourceVersion,
      response: res,
      stop: () => {
        unsubscribe();
        clearTimeout(timer);
        this.watches.delete(open);
      },
    };
    this.watches.add(open);
    // The response's close is the connection's end (the request's close fires once its empty body is read).
    res.once("close", open.stop);
  }
}
