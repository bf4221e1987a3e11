// What tests inject and inspect at the HTTP boundary: failures for the next matching requests, and the
// log of every request the fake received.

/** A request as the fake saw it. */
export interface RequestRecord {
  method: string;
  /** The URL path, e.g. /apis/networking.k8s.io/v1/namespaces/qr/ingresses/a.example.com. */
  path: string;
  /** The query parameters, e.g. { fieldManager: "qr-platform-operator", force: "true" }. */
  query: Record<string, string>;
  /** The Content-Type header without parameters, or "" when there was none. */
  contentType: string;
  /** The Accept header, or "" when there was none: kubectl asks for Tables and aggregated discovery through it. */
  accept: string;
  /** The HTTP status the fake answered with (for a watch: 200 once the stream started); absent while running. */
  status?: number;
}

/** Which requests a fault applies to; every given condition must hold. */
export interface RequestFilter {
  /** HTTP method, e.g. "PATCH" (case-insensitive). */
  method?: string;
  /** Matched against the path with its query string, e.g. /leases/ or /watch=true/. */
  path?: RegExp;
}

/** Whether a request matches a filter; a /g pattern is tested from the start every time. */
export function matchesFilter(filter: RequestFilter, request: RequestRecord): boolean {
  if (filter.method && filter.method.toUpperCase() !== request.method) return false;
  if (!filter.path) return true;
  const query = new URLSearchParams(request.query).toString();
  filter.path.lastIndex = 0;
  return filter.path.test(query ? `${request.path}?${query}` : request.path);
}

/** An injected failure for the next `count` matching requests. */
export interface Fault extends RequestFilter {
  /** How many matching requests fail; default 1. */
  count?: number;
  /** The HTTP status; default 500 (InternalError). 429 answers TooManyRequests with Retry-After. */
  status?: 500 | 503 | 429;
  /** Retry-After seconds for a 429 (default 1). */
  retryAfterSeconds?: number;
}

interface ArmedFault {
  filter: RequestFilter;
  remaining: number;
  status: 500 | 503 | 429;
  retryAfterSeconds: number;
}

/** The failure a request gets instead of being served. */
export interface InjectedFailure {
  status: 500 | 503 | 429;
  retryAfterSeconds?: number;
}

/** The injected faults and the request log of one fake server. */
export class Faults {
  private readonly armed: ArmedFault[] = [];
  private readonly log: RequestRecord[] = [];

  /** Makes the next `count` requests matching the filter fail. Faults are consumed in the order they were added. */
  failNext(fault: Fault = {}): void {
    const status = fault.status ?? 500;
    this.armed.push({
      filter: { ...(fault.method ? { method: fault.method } : {}), ...(fault.path ? { path: fault.path } : {}) },
      remaining: fault.count ?? 1,
      status,
      retryAfterSeconds: fault.retryAfterSeconds ?? 1,
    });
  }

  /** Disarms every fault not yet consumed. */
  clear(): void {
    this.armed.length = 0;
  }

  /** How many injected failures are still to come. */
  pending(): number {
    return this.armed.reduce((n, f) => n + f.remaining, 0);
  }

  /** Records a request and returns the failure it should get, if a fault matches. */
  arrive(record: RequestRecord): InjectedFailure | undefined {
    this.log.push(record);
    const fault = this.armed.find((f) => matchesFilter(f.filter, record));
    if (!fault) return undefined;
    if (--fault.remaining === 0) this.armed.splice(this.armed.indexOf(fault), 1);
    return fault.status === 429
      ? { status: 429, retryAfterSeconds: fault.retryAfterSeconds }
      : { status: fault.status };
  }

  /** A copy of the request log, oldest first. */
  requests(): RequestRecord[] {
    return this.log.map((r) => ({ ...r, query: { ...r.query } }));
  }

  /** Empties the request log. */
  clearRequests(): void {
    this.log.length = 0;
  }
}
