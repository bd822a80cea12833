// The failure sweep as a bar chart: each state's impact (Gb/s) in the API's order, worst first, the hover card with
// its unmet, SLO-violation and lost Gb/s and whether it survived; a click (or Enter) on a column selects the state
// as a click on its table row does. The figures are the sweep's own (failures.json's `scenarios`).

import { barChart } from "./charts";

/** The figures of one failure state the chart reads. */
export interface SweepState {
  scenario: string;
  impact_gbps: number | null;
  unmet_gbps: number | null;
  slo_violation_gbps: number | null;
  lost_gbps: number | null;
  survived: boolean;
}

/** Columns drawn at most (the worst; the table lists every state). */
export const SWEEP_CHART_MAX = 40;

function gbps(value: number | null): string {
  return value === null ? "unknown" : `${value.toLocaleString("en-US", { maximumFractionDigits: 2 })} Gb/s`;
}

/** The impact-by-state chart of a sweep (null when it has no state). */
export function sweepChart(states: SweepState[], select: (scenario: string) => void,
                           report: (text: string, isError: boolean) => void): HTMLElement | null {
  if (states.length === 0) return null;
  const shown = states.slice(0, SWEEP_CHART_MAX);
  return barChart({
    id: "failure-impact-chart", title: "Impact by failure state, worst first", categories: shown.map((s) => s.scenario),
    stacked: false, unit: "Gb/s",
    series: [{ name: "impact", color: "#c62828", values: shown.map((s) => s.impact_gbps) }],
    details: (i) => [`unmet: ${gbps(shown[i].unmet_gbps)}`, `SLO violation: ${gbps(shown[i].slo_violation_gbps)}`,
                     `lost with sites: ${gbps(shown[i].lost_gbps)}`, `survived: ${shown[i].survived ? "yes" : "no"}`],
    onSelect: (i) => select(shown[i].scenario),
    note: states.length > shown.length ? `The ${shown.length} worst of ${states.length} states; the table lists every one.`
      : "Click a column (or press Enter on it) to show the network in that state.",
  }, report);
}
