import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from "prom-client";

/**
 * The metrics of one process: one Prometheus registry, which `/metrics` serves. The embedded platform
 * has one for all four services and the edge, so every instrument is created with get-or-create: two
 * parts of the process that ask for the same name share one series family instead of colliding.
 *
 * Labels must take bounded values only (an enum, a route template, a status code), never an id, a host
 * or a slug: every distinct value is a series Prometheus keeps.
 */
export class Metrics {
  /** The prom-client registry, for `/metrics` and for tests that read a value. */
  readonly registry = new Registry();
  private readonly collectors = new Map<string, Set<() => void>>();

  /**
   * @param enabled false for a process that serves no `/metrics` (METRICS_PORT=off, and the parts of
   * tests that do not look): its instruments do nothing, so the hot paths pay nothing for them.
   */
  constructor(readonly enabled = true) {}

  /** A counter, created on first use. */
  counter<Label extends string = string>(config: Omit<CounterConfiguration<Label>, "registers">): Counter<Label> {
    if (!this.enabled) return NOTHING as unknown as Counter<Label>;
    return (
      (this.registry.getSingleMetric(config.name) as Counter<Label> | undefined) ??
      new Counter({ ...config, registers: [this.registry] })
    );
  }

  /** A histogram, created on first use. */
  histogram<Label extends string = string>(config: Omit<HistogramConfiguration<Label>, "registers">): Histogram<Label> {
    if (!this.enabled) return NOTHING as unknown as Histogram<Label>;
    return (
      (this.registry.getSingleMetric(config.name) as Histogram<Label> | undefined) ??
      new Histogram({ ...config, registers: [this.registry] })
    );
  }

  /** A gauge that is set as things happen, created on first use. */
  gauge<Label extends string = string>(config: Omit<GaugeConfiguration<Label>, "registers" | "collect">): Gauge<Label> {
    if (!this.enabled) return NOTHING as unknown as Gauge<Label>;
    return (
      (this.registry.getSingleMetric(config.name) as Gauge<Label> | undefined) ??
      new Gauge({ ...config, registers: [this.registry] })
    );
  }

  /**
   * A gauge read on each scrape: `read` sets its values from state the process keeps anyway (a
   * buffer's length, a pool's counts), so the hot path pays nothing. Several readers may share a
   * gauge; each sets the values of its own labels.
   */
  gaugeOnScrape<Label extends string = string>(
    config: Omit<GaugeConfiguration<Label>, "registers" | "collect">,
    read: (gauge: Gauge<Label>) => void,
  ): Gauge<Label> {
    if (!this.enabled) return NOTHING as unknown as Gauge<Label>;
    let readers = this.collectors.get(config.name);
    if (!readers) {
      const all = new Set<() => void>();
      readers = all;
      this.collectors.set(config.name, all);
      new Gauge({
        ...config,
        registers: [this.registry],
        collect() {
          for (const reader of all) reader();
        },
      });
    }
    const gauge = this.registry.getSingleMetric(config.name) as Gauge<Label>;
    readers.add(() => read(gauge));
    return gauge;
  }

  /** The registry's exposition in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** Its content type, with the format version. */
  get contentType(): string {
    return this.registry.contentType;
  }
}

/** What a disabled registry hands out: every instrument's methods, doing nothing. */
const NOTHING = {
  inc() {},
  dec() {},
  set() {},
  observe() {},
  reset() {},
  labels: () => NOTHING,
  startTimer: () => () => 0,
};

/** Metrics that are not served: instruments that do nothing. What features use when given none. */
export const noMetrics = new Metrics(false);

/**
 * The metrics of a process that serves `/metrics`: with Node's runtime metrics (event-loop lag, heap,
 * GC, handles, CPU and memory of the process) under prom-client's standard names.
 */
export function processMetrics(): Metrics {
  const metrics = new Metrics();
  collectDefaultMetrics({ register: metrics.registry });
  return metrics;
}

/** Seconds since `startedAt`, a `performance.now()` reading: what duration histograms observe. */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}
