import type { LinksDeps } from "../../deps.js";
import { firstKeptDay } from "./scan-partitions.js";
import { countVisitorsUpTo, dayRegisters, daySketches, saveDaySketches } from "./scans.repository.js";
import { addToSketch, emptySketch, estimateVisitors, mergeSketch } from "./visitor-sketch.js";

/**
 * Distinct visitors of a link over a range of days, whose daily distinct visitors `dailyCounts` reads;
 * `range.keptFrom` is the first day whose visitors are kept (firstKeptDay), read here when not given.
 *
 * Exact while the range holds at most `deps.exactVisitorDays` visitor-days (the daily distinct
 * visitors added up; the exact count reads the link's raw scans of the range, and runs beside the
 * summary's queries); past that,
 * the union of HyperLogLog sketches of each day (standard error 1.6%, see visitor-sketch.ts). A day that is over keeps its sketch in
 * its row of links.scan_link_days, built the first time a range needs it; today, and a day whose sketch no
 * longer matches its visitor count (a scan arriving late), is sketched from its visitors on the spot.
 * A range reaching before the raw window (links.scan_window) is always estimated: those days' visitors
 * are gone, and their sketches were built before their partition was dropped.
 */
export async function rangeVisitors(
  deps: LinksDeps,
  linkId: string,
  range: { from: string; to: string; today: string; keptFrom?: string },
  dailyCounts: () => Promise<readonly { day: string; uniqueScans: number }[]>,
): Promise<number> {
  // Days before the raw window have lost their visitors (dropped with their partition) and kept their sketches.
  const keptFrom = range.keptFrom ?? (await firstKeptDay(deps.db));
  const exact =
    range.from >= keptFrom
      ? await countVisitorsUpTo(deps.db, linkId, range.from, range.to, deps.exactVisitorDays)
      : undefined;
  if (exact !== undefined) return exact;
  // Today is never stored (its visitors still come), so its registers are read beside the stored sketches.
  const today = range.from <= range.today && range.today <= range.to ? [range.today] : [];
  const [daily, stored, todays] = await Promise.all([
    dailyCounts(),
    daySketches(deps.db, linkId, range.from, range.to),
    dayRegisters(deps.db, linkId, today),
  ]);
  const union = emptySketch();
  const unsketched: string[] = [];
  for (const { day, uniqueScans } of daily) {
    if (uniqueScans === 0 || day === range.today) continue;
    const sketch = stored.get(day);
    // Visitors of a day only ever grow, so an equal count means the sketch saw every one of them.
    if (sketch?.visitors === uniqueScans || (sketch && day < keptFrom)) mergeSketch(union, sketch.registers);
    else if (day >= keptFrom) unsketched.push(day);
  }
  const built = new Map<string, Uint8Array>();
  for (const { day, register, rank } of [...todays, ...(await dayRegisters(deps.db, linkId, unsketched))]) {
    let sketch = built.get(day);
    if (!sketch) {
      sketch = emptySketch();
      built.set(day, sketch);
    }
    addToSketch(sketch, register, rank);
  }
  for (const sketch of built.values()) mergeSketch(union, sketch);
  // The count it is saved with was read before its visitors were: at worst the sketch is found stale next time.
  const counts = new Map(daily.map((day) => [day.day, day.uniqueScans]));
  const finished = [...built]
    .filter(([day]) => day < range.today)
    .map(([day, registers]) => ({ day, visitors: counts.get(day)!, registers }));
  await saveDaySketches(deps.db, linkId, finished);
  return estimateVisitors(union);
}
