// An in-memory DomainService for the operator's tests: the links service's domains as far as the
// operator sees them (create, list with pages, verify, delete, the watch stream and serving reports),
// with knobs to break the stream and fail calls. Hostname rules are the links service's main ones.
import { randomUUID } from "node:crypto";
import { isIP } from "node:net";
import { clone, create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport, type Client, type Transport } from "@connectrpc/connect";
import {
  DomainSchema,
  DomainService,
  DomainServingSchema,
  DomainState,
  WatchDomainsResponseSchema,
  type Domain,
  type WatchDomainsResponse,
} from "@qrplatform/api/links";
import { Code, invalidArgument, notFound, serviceError } from "@qrplatform/platform";

/** Fields of a domain to change. */
type DomainFields = Partial<Omit<Domain, "$typeName" | "$unknown">>;

type Method =
  | "createDomain"
  | "getDomain"
  | "listDomains"
  | "verifyDomain"
  | "deleteDomain"
  | "watchDomains"
  | "reportDomainServing";

/** One stream's pending messages and the way to wake it. */
interface Watcher {
  messages: WatchDomainsResponse[];
  wake: () => void;
  ended: boolean;
}

export class FakeDomainService {
  readonly domains = new Map<string, Domain>();
  /** Every call, in order. */
  readonly calls: { method: Method; request: unknown }[] = [];
  /** Hostnames whose TXT challenge is published: VerifyDomain verifies them, fails the others. */
  readonly published = new Set<string>();
  /** Calls to fail: a method's next calls throw this error, each once. */
  readonly failures: { method: Method; error: Error }[] = [];
  /** Whether WatchDomains answers UNIMPLEMENTED, as a links service without it does. */
  watchUnimplemented = false;
  private readonly watchers = new Set<Watcher>();
  private clock = () => new Date();

  readonly transport: Transport = createRouterTransport((router) =>
    router.service(DomainService, {
      createDomain: (req) => {
        this.record("createDomain", req);
        return { domain: this.register(req.accountId, req.hostname) };
      },
      getDomain: (req) => {
        this.record("getDomain", req);
        return { domain: this.find(req.domainId) };
      },
      listDomains: (req) => {
        this.record("listDomains", req);
        const all = [...this.domains.values()].filter(
          (domain) => req.accountId === "" || domain.accountId === req.accountId,
        );
        const size = req.pageSize || 20;
        const start = req.pageToken === "" ? 0 : Number(req.pageToken);
        const page = all.slice(start, start + size);
        return { domains: page, nextPageToken: start + size < all.length ? String(start + size) : "" };
      },
      verifyDomain: (req) => {
        this.record("verifyDomain", req);
        const domain = this.find(req.domainId);
        const verified = this.published.has(domain.hostname);
        const now = timestampFromDate(this.clock());
        return {
          domain: this.update(domain.id, {
            state: verified ? DomainState.VERIFIED : DomainState.FAILED,
            failureReason: verified ? "" : "no TXT record found",
            lastCheckTime: now,
            verifyTime: verified ? (domain.verifyTime ?? now) : undefined,
          }),
        };
      },
      deleteDomain: (req) => {
        this.record("deleteDomain", req);
        const domain = this.find(req.domainId);
        this.remove(domain.id);
        return { domainId: domain.id };
      },
      watchDomains: (req, context) => this.watch(req, context.signal),
      reportDomainServing: (req) => {
        this.record("reportDomainServing", req);
        const domain = this.find(req.domainId);
        const serving = create(DomainServingSchema, req.serving);
        serving.reportTime = timestampFromDate(this.clock());
        // Serving changes are not domain changes: the stream does not tell them.
        const updated = Object.assign(clone(DomainSchema, domain), { serving });
        this.domains.set(domain.id, updated);
        return { domain: updated };
      },
    }),
  );

  /** A client with the admin credential's view. */
  client(): Client<typeof DomainService> {
    return createClient(DomainService, this.transport);
  }

  /** Registers a domain as a tenant would (through the API), telling the open streams. */
  register(accountId: string, hostname: string, state = DomainState.PENDING): Domain {
    const problem = hostnameProblem(hostname);
    if (problem) throw invalidArgument([{ field: "hostname", reason: "invalid_format", description: problem }]);
    if (!/^[0-9a-f-]{36}$/i.test(accountId))
      throw invalidArgument([{ field: "account_id", reason: "invalid_format", description: "must be a UUID" }]);
    if ([...this.domains.values()].some((domain) => domain.hostname === hostname)) {
      throw serviceError(Code.AlreadyExists, "domain_taken", `The hostname ${hostname} is already registered.`);
    }
    const now = timestampFromDate(this.clock());
    const domain = create(DomainSchema, {
      id: randomUUID(),
      accountId,
      hostname,
      state,
      challengeRecordName: `_qr-platform-challenge.${hostname}`,
      challengeRecordValue: `qr-platform-verification=${randomUUID()}`,
      createTime: now,
      updateTime: now,
      ...(state === DomainState.VERIFIED && { verifyTime: now, lastCheckTime: now }),
    });
    this.domains.set(domain.id, domain);
    this.broadcast({ changed: [domain] });
    return domain;
  }

  /** Changes a domain as the service would, telling the open streams. */
  update(domainId: string, fields: DomainFields): Domain {
    const updated = Object.assign(clone(DomainSchema, this.find(domainId)), fields, {
      updateTime: timestampFromDate(this.clock()),
    });
    this.domains.set(domainId, updated);
    this.broadcast({ changed: [updated] });
    return updated;
  }

  /** Removes a domain, telling the open streams. */
  remove(domainId: string): void {
    const domain = this.find(domainId);
    this.domains.delete(domainId);
    this.broadcast({ removed: [{ domainId, hostname: domain.hostname }] });
  }

  /** Changes a domain without telling the streams: a change the stream missed. */
  updateSilently(domainId: string, fields: DomainFields): Domain {
    const updated = Object.assign(clone(DomainSchema, this.find(domainId)), fields, {
      updateTime: timestampFromDate(this.clock()),
    });
    this.domains.set(domainId, updated);
    return updated;
  }

  /** Sends every open stream a resync. */
  requestResync(): void {
    this.broadcast({ resync: true });
  }

  /** Ends every open stream, as a restarting links service would. */
  endStreams(): void {
    for (const watcher of this.watchers) {
      watcher.ended = true;
      watcher.wake();
    }
  }

  /** How many streams are open. */
  get openStreams(): number {
    return this.watchers.size;
  }

  /** Calls of one method so far. */
  callsOf(method: Method): unknown[] {
    return this.calls.filter((call) => call.method === method).map((call) => call.request);
  }

  setClock(clock: () => Date): void {
    this.clock = clock;
  }

  private async *watch(req: unknown, signal: AbortSignal): AsyncGenerator<WatchDomainsResponse> {
    this.record("watchDomains", req);
    if (this.watchUnimplemented)
      throw serviceError(Code.Unimplemented, "unimplemented", "WatchDomains is not implemented.");
    const watcher: Watcher = {
      messages: [create(WatchDomainsResponseSchema, { resync: true })],
      wake: () => undefined,
      ended: false,
    };
    this.watchers.add(watcher);
    try {
      while (!signal.aborted && !watcher.ended) {
        const message = watcher.messages.shift();
        if (message) {
          yield message;
          continue;
        }
        await new Promise<void>((resolve) => {
          watcher.wake = resolve;
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
      }
    } finally {
      this.watchers.delete(watcher);
    }
  }

  private broadcast(message: MessageInitShape<typeof WatchDomainsResponseSchema>): void {
    for (const watcher of this.watchers) {
      watcher.messages.push(create(WatchDomainsResponseSchema, message));
      watcher.wake();
    }
  }

  private record(method: Method, request: unknown): void {
    this.calls.push({ method, request });
    const index = this.failures.findIndex((failure) => failure.method === method);
    if (index >= 0) {
      const [failure] = this.failures.splice(index, 1);
      throw failure!.error;
    }
  }

  private find(domainId: string): Domain {
    const domain = this.domains.get(domainId);
    if (!domain) throw notFound("domain");
    return domain;
  }
}

/** The links service's main hostname rules: a public DNS name of two labels or more, no IP address. */
function hostnameProblem(hostname: string): string | undefined {
  if (isIP(hostname) || /^\d+$/.test(hostname.split(".").at(-1) ?? "")) return "must be a DNS name, not an IP address";
  if (!hostname.includes(".")) return "must have at least two labels, such as go.example.com";
  if (/\.(localhost|local|internal|invalid|test|arpa|onion)$/.test(hostname)) return "must be a public DNS name";
  return undefined;
}
