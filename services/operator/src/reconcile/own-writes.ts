// The resourceVersion of the operator's last write to each CR, until the CR informer has delivered it.
// A reconcile on a cache older than the operator's own last write would decide on what it already
// changed (patch a status it just patched, add a finalizer it just added and get a 409), so it waits
// for the informer, which enqueues the CR again when the write arrives. A write the informer never
// delivers as such (a relist after 410 Gone skips versions) is waited for no longer than `patienceMs`.

interface Expected {
  resourceVersion: string;
  at: number;
}

/** How many versions of each CR the informer delivered are remembered: its event may beat our write's answer. */
const REMEMBERED_VERSIONS = 8;

export class OwnWrites {
  private readonly expected = new Map<string, Expected>();
  private readonly delivered = new Map<string, string[]>();

  constructor(private readonly patienceMs: number) {}

  /** The operator wrote the CR and the API server answered with this version. */
  wrote(name: string, resourceVersion: string | undefined): void {
    if (!resourceVersion || this.delivered.get(name)?.includes(resourceVersion)) return;
    this.expected.set(name, { resourceVersion, at: performance.now() });
  }

  /** The CR informer delivered this version of the CR (undefined: its deletion). */
  observed(name: string, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined) this.delivered.delete(name);
    else this.delivered.set(name, [resourceVersion, ...(this.delivered.get(name) ?? [])].slice(0, REMEMBERED_VERSIONS));
    const expected = this.expected.get(name);
    if (expected && (resourceVersion === undefined || resourceVersion === expected.resourceVersion))
      this.expected.delete(name);
  }

  /** How long to wait still before the cache can be trusted for this CR; 0 when it can now. */
  waitFor(name: string): number {
    const expected = this.expected.get(name);
    if (!expected) return 0;
    const left = expected.at + this.patienceMs - performance.now();
    if (left > 0) return left;
    this.expected.delete(name);
    return 0;
  }
}
