// A plan job's summary in the Results view: the survivability headline, the figures before and after the plan (cost,
// the design's proven lower bound and gap, MLU, unmet traffic), what to buy, the excused failure states with their
// reasons and the per-state before/after table. Every figure is one of plan.json's (GET v1/jobs/{id}/result) or a
// row of design_upgrades.csv, formatted and never recomputed; each carries `data-figure` with its plan.json name.

import { formatValue, h } from "./dom";

type Row = Record<string, string | number | null>;

/** One failure state before and after the plan (plan.json's `before_after`). */
interface BeforeAfter {
  scenario: string;
  impact_gbps_before: number | null;
  unmet_gbps_before: number | null;
  mlu_before: number | null;
  survived_before: boolean;
  impact_gbps_after: number | null;
  unmet_gbps_after: number | null;
  mlu_after: number | null;
  survived_after: boolean;
}

/** The part of plan.json the summary shows (the job's result as the API serves it). */
export interface PlanDoc {
  headline?: string;
  status?: string;
  gpus_added?: number | null;
  placement_cost_usd?: number | null;
  mlu?: number | null;
  mlu_after?: number | null;
  unmet_gbps?: number | null;
  unmet_gbps_after?: number | null;
  failures_with_unmet_demand?: number | null;
  failures_with_unmet_demand_after?: number | null;
  survivability?: { failure_kind: string; states: number; survived: number; violated: string[];
                    not_survivable: { scenario: string; reason: string; gbps: number }[] } | null;
  upgrade_cost_usd?: number | null;
  upgrade_lower_bound_usd?: number | null;
  upgrade_gap?: number | null;
  upgrade_bound?: { status: string; covers: string; method?: string | null } | null;
  links_upgraded?: number | null;
  routes_built?: number | null;
  before_after?: BeforeAfter[];
}

/** A fraction as a percentage (`12.5 %`), `unknown` when the plan did not measure it. */
export function percent(value: number | null | undefined): string {
  return typeof value === "number" ? `${formatValue(value * 100)} %` : "unknown";
}

/** A number as the tables show it, `unknown` when the plan did not measure it. */
export function figure(value: number | null | undefined): string {
  return typeof value === "number" ? formatValue(value) : "unknown";
}

function usd(value: number | null | undefined, none: string): string {
  return typeof value === "number" ? `${formatValue(value)} USD` : none;
}

function fact(dl: HTMLElement, term: string, name: string, value: string, title?: string): void {
  dl.append(h("dt", {}, term), h("dd", { "data-figure": name, title }, value));
}

/** The bound's words: its status and, as the hover title, the designs it covers. */
function boundFacts(plan: PlanDoc, dl: HTMLElement): void {
  const bound = plan.upgrade_bound;
  fact(dl, "upgrade cost", "upgrade_cost_usd", usd(plan.upgrade_cost_usd, "none (no design)"));
  fact(dl, "lower bound", "upgrade_lower_bound_usd", usd(plan.upgrade_lower_bound_usd, "not proven"),
       bound ? `${bound.method ?? "bound"}: ${bound.covers}` : undefined);
  fact(dl, "gap", "upgrade_gap", typeof plan.upgrade_gap === "number" ? percent(plan.upgrade_gap) : "not proven");
  if (bound) fact(dl, "bound status", "upgrade_bound.status", bound.status);
}

function beforeAfterTable(states: BeforeAfter[]): HTMLElement {
  const yes = (v: boolean) => (v ? "yes" : "no");
  return h("div", { class: "result-scroll" }, h("table", { class: "data result-table", id: "plan-before-after" },
    h("thead", {}, h("tr", {}, h("th", {}, "state"), h("th", { class: "num" }, "impact Gb/s before"),
      h("th", { class: "num" }, "after"), h("th", { class: "num" }, "unmet Gb/s before"), h("th", { class: "num" }, "after"),
      h("th", { class: "num" }, "MLU before"), h("th", { class: "num" }, "after"), h("th", {}, "survived before"),
      h("th", {}, "after"))),
    h("tbody", {}, ...states.map((s) => h("tr", { "data-scenario": s.scenario }, h("td", {}, s.scenario),
      h("td", { class: "num" }, figure(s.impact_gbps_before)), h("td", { class: "num" }, figure(s.impact_gbps_after)),
      h("td", { class: "num" }, figure(s.unmet_gbps_before)), h("td", { class: "num" }, figure(s.unmet_gbps_after)),
      h("td", { class: "num" }, percent(s.mlu_before)), h("td", { class: "num" }, percent(s.mlu_after)),
      h("td", {}, yes(s.survived_before)), h("td", {}, yes(s.survived_after)))))));
}

/** The plan's summary panel (`#plan-summary`); `upgrades` are design_upgrades.csv's rows (null: no such file). */
export function planSummary(plan: PlanDoc, upgrades: Row[] | null): HTMLElement {
  const s = plan.survivability;
  const survivability = s ? h("p", { id: "plan-survivability" }, "Survives ",
    h("strong", { "data-figure": "survived" }, s.survived), " of ", h("span", { "data-figure": "states" }, s.states),
    ` ${s.failure_kind} failure states; `, h("strong", { "data-figure": "excused" }, s.not_survivable.length),
    " excused, ", h("strong", { "data-figure": "violated" }, s.violated.length), " still violated.") : null;
  const facts = h("dl", { class: "job-facts", id: "plan-figures" });
  fact(facts, "status", "status", plan.status ?? "unknown");
  boundFacts(plan, facts);
  fact(facts, "links upgraded, routes built", "links_upgraded",
       `${figure(plan.links_upgraded)} links, ${figure(plan.routes_built)} routes`);
  fact(facts, "GPUs added", "gpus_added", figure(plan.gpus_added));
  fact(facts, "placement cost", "placement_cost_usd", usd(plan.placement_cost_usd, "unknown"));
  fact(facts, "MLU before → after", "mlu", `${percent(plan.mlu)} → ${percent(plan.mlu_after)}`);
  fact(facts, "unmet before → after", "unmet_gbps", `${figure(plan.unmet_gbps)} → ${figure(plan.unmet_gbps_after)} Gb/s`);
  fact(facts, "failure states not survived before → after", "failures_with_unmet_demand",
       `${figure(plan.failures_with_unmet_demand)} → ${figure(plan.failures_with_unmet_demand_after)}`);
  const panel = h("div", { class: "plan-summary", id: "plan-summary" }, h("h4", {}, "Plan"),
    plan.headline ? h("p", { class: "headline", id: "plan-headline" }, plan.headline) : null, survivability, facts);
  if (upgrades !== null) {
    const columns = upgrades.length > 0 ? Object.keys(upgrades[0]) : [];
    panel.append(h("h5", {}, "What to buy (design_upgrades.csv)"),
      upgrades.length === 0 ? h("p", { class: "meta", id: "plan-nothing-to-buy" }, "Nothing to buy.")
        : h("div", { class: "result-scroll" }, h("table", { class: "data result-table", id: "plan-upgrades" },
            h("thead", {}, h("tr", {}, ...columns.map((c) => h("th", {}, c)))),
            h("tbody", {}, ...upgrades.map((r) => h("tr", {}, ...columns.map((c) =>
              h("td", { class: typeof r[c] === "number" ? "num" : undefined }, formatValue(r[c])))))))));
  }
  if (s && s.not_survivable.length > 0) {
    panel.append(h("h5", {}, "Excused failure states"),
      h("table", { class: "data result-table", id: "plan-excused" },
        h("thead", {}, h("tr", {}, h("th", {}, "state"), h("th", {}, "reason"), h("th", { class: "num" }, "Gb/s"))),
        h("tbody", {}, ...s.not_survivable.map((x) => h("tr", { "data-scenario": x.scenario }, h("td", {}, x.scenario),
          h("td", {}, x.reason), h("td", { class: "num" }, formatValue(x.gbps)))))));
  }
  if (s && s.violated.length > 0) {
    panel.append(h("h5", {}, "Failure states still violated"),
      h("ul", { id: "plan-violated" }, ...s.violated.map((v) => h("li", {}, v))));
  }
  if (plan.before_after && plan.before_after.length > 0) {
    panel.append(h("h5", {}, "Each failure state before and after the plan"), beforeAfterTable(plan.before_after));
  }
  return panel;
}
