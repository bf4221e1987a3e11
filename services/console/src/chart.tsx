// The scans chart: uPlot draws the canvas; the figure carries the accessible name, and a table of the
// same numbers follows it for anyone who cannot see the canvas.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { Interval, SeriesData } from "./chart-data.ts";

export function ScansChart({ data, interval, label }: { data: SeriesData; interval: Interval; label: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!host.current) return;
    const width = Math.max(320, Math.min(host.current.clientWidth || 720, 960));
    const plot = new uPlot(
      {
        width,
        height: 260,
        scales: { x: { time: true } },
        // Buckets are UTC days and hours: the axis names them as the API and the table do.
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
        axes: [{}, { label: "Scans" }],
        series: [
          { label: interval === "hour" ? "Hour (UTC)" : "Day" },
          { label: "Scans", stroke: "#1f4e9c", width: 2, points: { show: true } },
          // Dashed as well as coloured: the two series differ by more than their colour.
          { label: "Unique visitors", stroke: "#b34700", width: 2, dash: [6, 4], points: { show: true } },
        ],
      },
      data,
      host.current,
    );
    return () => plot.destroy();
  }, [data, interval]);
  return (
    <figure aria-labelledby="scans-chart-caption">
      <figcaption id="scans-chart-caption">{label}</figcaption>
      <div ref={host} class="chart" />
    </figure>
  );
}
