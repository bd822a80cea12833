// The roadmap job's timeline (issue #28 item 6): per period what is bought (committed) and what comes online, the
// backbone and GPU capex apart, and the survivability with its violated states named wherever it is shown, with the
// design's mode and status. Every figure is one the roadmap job's result (roadmap.json, GET v1/jobs/{id}/result)
// carries; the browser only lays them out (no planning logic: a build is "bought" in the period its `committed`
// label names, as the API wrote it).

import type { Feature, FeatureCollection } from "./api";
import { barChart } from "./charts";
import { formatValue, h } from "./dom";
import { BUILD_STATE_COLORS } from "./map";
import type { BuildState, PeriodBuild, PeriodSite, PeriodView } from "./map";

interface Survivability {
  failure_kind: string;
  states: number;
  survived: number;
  violated: string[];
  not_survivable: { scenario: string; reason: string; gbps: number }[];
}

interface Build {
  id: string;
  action: string;
  site_a?: string;
  site_b?: string;
  site?: string;
  modules?: number;
  added_gbps?: number;
  gpus?: number;
  cost_usd: number;
  committed: string;
  online: string;
  committed_index?: number;
  online_index?: number;
}

export interface RoadmapPeriod {
  period: string;
  capex_usd: number;
  network_capex_usd?: number | null;
  gpu_capex_usd?: number | null;
  storage_capex_usd?: number | null;
  capex_online_usd: number;
  mlu: number | null;
  unmet_gbps: number | null;
  demand_gbps: number | null;
  served_share: number | null;
  gpus_installed: number;
  builds: Build[];
  gpu_builds: Build[];
  replicas_built?: { dataset?: string; site?: string; storage_capex_usd?: number }[];
  survivability: Survivability;
  design: { mode: string; status: string };
  budget_shortfall_usd: number;
  budget_note: string;
  gpu_note?: string;
}

/** The roadmap job's result (roadmap.json): the fields the timeline reads. */
export interface RoadmapDoc {
  status: string;
  scenario: string;
  period: string;
  start: string;
  end: string;
  total_capex_usd: number;
  network_capex_usd: number;
  gpu_capex_usd: number;
  storage_capex_usd?: number;
  lower_bound_usd: number | null;
  gap: number | null;
  discounted_network_capex_usd: number;
  starting_risk: { text?: string } | null;
  budget_shortfalls: { period: string; shortfall_usd: number; reason: string }[];
  periods: RoadmapPeriod[];
  builds: Build[];
  notes: string[];
}

const BACKBONE = "#0b6e8a";
const GPU = "#1e7a3c";
const STORAGE = "#6a3d9a";
const SURVIVED = "#2e8b57";
const EXCUSED = "#d08a1a";
const VIOLATED = "#c62828";

function usd(value: number | null | undefined): string {
  return typeof value === "number" ? `${formatValue(value)} USD` : "unknown";
}

function percent(value: number | null | undefined): string {
  return typeof value === "number" ? `${formatValue(value * 100)} %` : "unknown";
}

/** A build as one line: what, where, how much. */
function buildText(b: Build): string {
  const where = b.site ?? [b.site_a, b.site_b].filter(Boolean).join("–");
  const what = b.action === "gpus" || b.site !== undefined ? `${formatValue(b.gpus)} GPUs at ${where}`
    : `${b.id} (${b.action}${where ? `, ${where}` : ""}${b.added_gbps ? `, +${formatValue(b.added_gbps)} Gb/s` : ""})`;
  return `${what}: ${usd(b.cost_usd)}`;
}

/** The survivability of a period in words, its violated states named. */
export function survivabilityText(s: Survivability): string {
  const base = `${s.survived} of ${s.states} ${s.failure_kind} failure states survived, ${s.not_survivable.length} excused, `
    + `${s.violated.length} violated`;
  return s.violated.length === 0 ? base : `${base}: ${s.violated.join(", ")}`;
}

function list(items: string[], empty: string): HTMLElement {
  return items.length === 0 ? h("span", { class: "meta" }, empty) : h("ul", { class: "cell-list" }, ...items.map((t) => h("li", {}, t)));
}

/** The index of a build's committed or online period in the roadmap (the API's `*_index`, else its label's place). */
function periodIndex(doc: RoadmapDoc, b: Build, which: "committed" | "online"): number {
  const served = which === "committed" ? b.committed_index : b.online_index;
  if (typeof served === "number") return served;
  const i = doc.periods.findIndex((p) => p.period === b[which]);
  return i < 0 ? Number.POSITIVE_INFINITY : i;
}

/** Where a build stands in period `index`: online earlier, online in it, committed by it and online later, or not
 * yet committed (null). Read from the build's committed and online periods as the roadmap wrote them. */
export function buildState(doc: RoadmapDoc, b: Build, index: number): BuildState | null {
  const online = periodIndex(doc, b, "online");
  if (online < index) return "built";
  if (online === index) return "online";
  return periodIndex(doc, b, "committed") <= index ? "committed" : null;
}

const STATE_ORDER: BuildState[] = ["online", "committed", "built"];

/** What period `index` of a roadmap draws: its map (`GET v1/jobs/{id}/periods/{period}/map`), each network build in
 * its state along its geometry there (a route not yet online along its candidate route: in the period's map, or
 * `candidate` of the scenario), and the sites that gain GPUs, labelled with the GPUs the period's map says are
 * installed and the roadmap's GPU builds. */
export function periodView(doc: RoadmapDoc, index: number, collection: FeatureCollection,
                           candidate: (id: string) => Feature | undefined): PeriodView {
  const find = (type: string, id: string) => collection.features.find((f) => f.properties.feature_type === type
    && String(f.properties.id) === id);
  const label = doc.periods[index].period;
  const builds: PeriodBuild[] = [];
  const gpus = new Map<string, Map<BuildState, number>>();
  for (const b of doc.builds) {
    const state = buildState(doc, b, index);
    if (state === null) continue;
    if (b.action === "gpus") {
      const site = b.site ?? b.site_a ?? "";
      const states = gpus.get(site) ?? new Map<BuildState, number>();
      states.set(state, (states.get(state) ?? 0) + (b.gpus ?? 0));
      gpus.set(site, states);
      continue;
    }
    if (b.action !== "upgrade" && b.action !== "new route") continue;
    const feature = find("link", b.id) ?? find("candidate", b.id) ?? candidate(b.id);
    if (feature === undefined) continue;
    const when = state === "committed" ? `committed ${b.committed}, online ${b.online}` : `online ${b.online}`;
    builds.push({ id: b.id, action: b.action, state, geometry: feature.geometry,
                  label: `${b.id}: ${b.action}${b.added_gbps ? ` +${formatValue(b.added_gbps)} Gb/s` : ""}, ${when}` });
  }
  const sites: PeriodSite[] = [];
  for (const [id, states] of gpus) {
    const site = find("site", id);
    if (site === undefined) continue;
    const state = STATE_ORDER.find((s) => states.has(s)) as BuildState;
    const parts = [`${formatValue(site.properties.gpus_installed ?? 0)} GPUs in ${label}`];
    if (states.has("online")) parts.push(`+${formatValue(states.get("online"))} online this ${doc.period}`);
    if (states.has("committed")) parts.push(`+${formatValue(states.get("committed"))} committed, not yet online`);
    sites.push({ id, state, coordinates: site.geometry.coordinates as [number, number],
                 label: `${formatValue(site.properties.name ?? id)}: ${parts.join(", ")}` });
  }
  return { collection, builds, sites };
}

/** The map's legend of a roadmap period: the three build states (with how many of each are drawn) and the GPU rings. */
export function periodLegend(doc: RoadmapDoc, index: number, view: PeriodView): HTMLElement {
  const label = doc.periods[index].period;
  const count = (state: BuildState) => view.builds.filter((b) => b.state === state).length
    + view.sites.filter((s) => s.state === state).length;
  const text: Record<BuildState, string> = {
    built: index > 0 ? `built by ${doc.periods[index - 1].period}` : "built earlier",
    online: `online this ${doc.period} (${label})`,
    committed: "committed, not yet online",
  };
  return h("div", { class: "map-legend", id: "period-legend", role: "img", "aria-label": `Roadmap builds in ${label}` },
    h("strong", {}, `Roadmap: ${label}`),
    ...(["built", "online", "committed"] as BuildState[]).map((state) => {
      const swatch = h("span", { class: `legend-swatch ${state === "committed" ? "dashed" : ""}` });
      swatch.style.background = state === "committed"
        ? `repeating-linear-gradient(90deg, ${BUILD_STATE_COLORS[state]} 0 4px, transparent 4px 7px)` : BUILD_STATE_COLORS[state];
      return h("div", { class: "legend-row", "data-state": state }, swatch, `${text[state]}: `,
        h("span", { class: "legend-count" }, String(count(state))));
    }),
    h("div", { class: "legend-row" }, h("span", { class: "legend-swatch ring" }), "ring: a site's GPUs, in its state's colour"),
    h("div", { class: "legend-row meta" }, "wide band: an upgraded link; sites sized by the GPUs installed"));
}

/** Mark the chosen period in the timeline (its row and the period select); null: none. */
export function markPeriod(timeline: HTMLElement, period: string | null): void {
  for (const row of timeline.querySelectorAll<HTMLElement>("#timeline-table tbody tr")) {
    const on = row.getAttribute("data-period") === period;
    row.classList.toggle("selected", on);
    row.setAttribute("aria-selected", String(on));
    if (on) row.scrollIntoView({ block: "nearest" });
  }
  const select = timeline.querySelector<HTMLSelectElement>("#timeline-period");
  if (select) select.value = period ?? "";
}

/** The timeline of a roadmap job: headline figures, charts per period, the period table and the builds. Choosing a
 * period (a row, by click or Enter, or the select above the table) calls `onPeriod` (null: the scenario as given). */
export function roadmapTimeline(doc: RoadmapDoc, report: (text: string, isError: boolean) => void,
                                onPeriod: (period: string | null) => void = () => undefined): HTMLElement {
  const periods = doc.periods;
  const labels = periods.map((p) => p.period);
  const storage = periods.some((p) => (p.storage_capex_usd ?? 0) > 0);
  const last = periods[periods.length - 1];
  const capex = barChart({
    id: "timeline-capex", title: `Capex committed per ${doc.period} (backbone and GPUs apart)`, categories: labels,
    stacked: false, unit: "USD",
    series: [{ name: "backbone", color: BACKBONE, values: periods.map((p) => p.network_capex_usd ?? null) },
             { name: "GPUs", color: GPU, values: periods.map((p) => p.gpu_capex_usd ?? null) },
             ...(storage ? [{ name: "replica storage", color: STORAGE, values: periods.map((p) => p.storage_capex_usd ?? null) }] : [])],
    details: (i) => [`capex of what comes online: ${usd(periods[i].capex_online_usd)}`],
    note: "Capex is charged in the period a build is committed (bought); the table says when each comes online.",
  }, report);
  const survival = barChart({
    id: "timeline-survivability", title: `Failure states per ${doc.period}: survived, excused, violated`,
    categories: labels, stacked: true, unit: "states",
    series: [{ name: "survived", color: SURVIVED, values: periods.map((p) => p.survivability.survived) },
             { name: "excused", color: EXCUSED, values: periods.map((p) => p.survivability.not_survivable.length) },
             { name: "violated", color: VIOLATED, values: periods.map((p) => p.survivability.violated.length) }],
    details: (i) => {
      const p = periods[i];
      return [`failure kind: ${p.survivability.failure_kind}`,
              `violated: ${p.survivability.violated.join(", ") || "none"}`, `design: ${p.design.mode} (${p.design.status})`];
    },
    note: "Excused: states no design could carry in that period (a site cut off, a route not yet buildable); the table gives each reason.",
  }, report);
  const rows = periods.map((p) => {
    const bought = doc.builds.filter((b) => b.committed === p.period).map(buildText);
    const online = [...p.builds, ...p.gpu_builds].map(buildText);
    const s = p.survivability;
    const excused = s.not_survivable.map((x) => `${x.scenario}: ${x.reason}`);
    const row = h("tr", { "data-period": p.period, tabindex: 0, "aria-selected": "false",
                          class: `clickable${s.violated.length > 0 ? " violated" : ""}` },
      h("th", { scope: "row" }, p.period),
      h("td", { "data-col": "bought" }, list(bought, "nothing")),
      h("td", { "data-col": "online" }, list(online, p.gpu_note ? `nothing (${p.gpu_note})` : "nothing")),
      h("td", { class: "num", "data-col": "backbone-capex" }, formatValue(p.network_capex_usd)),
      h("td", { class: "num", "data-col": "gpu-capex" }, formatValue(p.gpu_capex_usd)),
      storage ? h("td", { class: "num", "data-col": "storage-capex" }, formatValue(p.storage_capex_usd)) : null,
      h("td", { class: "num" }, formatValue(p.capex_online_usd)),
      h("td", { class: "num" }, formatValue(p.gpus_installed)),
      h("td", { class: "num" }, percent(p.mlu)),
      h("td", { class: "num" }, formatValue(p.unmet_gbps)),
      h("td", { "data-col": "survivability" }, `${s.survived} of ${s.states} ${s.failure_kind}`),
      h("td", { "data-col": "violated", class: s.violated.length > 0 ? "violated-cell" : undefined },
        list(s.violated, "none")),
      h("td", { "data-col": "excused" }, list(excused, "none")),
      h("td", { "data-col": "design" }, `${p.design.mode} (${p.design.status})`),
      h("td", {}, p.budget_shortfall_usd > 0 ? `short ${usd(p.budget_shortfall_usd)}: ${p.budget_note}` : p.budget_note || ""));
    const pick = () => onPeriod(row.classList.contains("selected") ? null : p.period);
    row.addEventListener("click", pick);
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); pick(); }
    });
    return row;
  });
  const choose = h("select", { id: "timeline-period", "aria-label": `Show a ${doc.period}'s builds on the map` },
    h("option", { value: "" }, "the scenario as given"), ...periods.map((p) => h("option", { value: p.period }, p.period)));
  choose.addEventListener("change", () => onPeriod(choose.value === "" ? null : choose.value));
  const table = h("div", { class: "result-scroll wide" }, h("table", { class: "data result-table timeline-table", id: "timeline-table" },
    h("thead", {}, h("tr", {}, ...[doc.period, "bought (committed)", "online", "backbone capex USD", "GPU capex USD",
      ...(storage ? ["storage capex USD"] : []), "capex online USD", "GPUs installed", "MLU", "unmet Gb/s",
      "survived", "violated states", "excused states", "design (mode, status)", "budget"]
      .map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, ...rows)));
  const builds = h("div", { class: "result-scroll" }, h("table", { class: "data result-table", id: "timeline-builds" },
    h("thead", {}, h("tr", {}, ...["build", "action", "where", "Gb/s added", "GPUs", "cost USD", "committed", "online"]
      .map((c) => h("th", {}, c)))),
    h("tbody", {}, ...doc.builds.map((b) => h("tr", { "data-id": b.id },
      h("td", {}, b.id), h("td", {}, b.action), h("td", {}, b.site ?? [b.site_a, b.site_b].filter(Boolean).join("–")),
      h("td", { class: "num" }, formatValue(b.added_gbps)), h("td", { class: "num" }, formatValue(b.gpus)),
      h("td", { class: "num" }, formatValue(b.cost_usd)), h("td", {}, b.committed), h("td", {}, b.online))))));
  const gap = doc.gap === null ? "no gap claimed" : `gap ${percent(doc.gap)}`;
  return h("section", { class: "timeline", id: "roadmap-timeline", "aria-label": "Roadmap timeline" },
    h("h4", {}, `Roadmap timeline, ${doc.start} → ${doc.end}`),
    h("p", { class: "headline", id: "timeline-headline" },
      `Status ${doc.status}: backbone capex ${usd(doc.network_capex_usd)}, GPU capex ${usd(doc.gpu_capex_usd)}`
      + `${doc.storage_capex_usd ? `, replica storage ${usd(doc.storage_capex_usd)}` : ""} over ${periods.length} ${doc.period}s.`),
    h("dl", { class: "job-facts" },
      h("dt", {}, "total capex"), h("dd", {}, usd(doc.total_capex_usd)),
      h("dt", {}, "discounted backbone capex"), h("dd", {}, `${usd(doc.discounted_network_capex_usd)} (lower bound `
        + `${usd(doc.lower_bound_usd)}, ${gap})`),
      last ? h("dt", {}, `${last.period} survivability`) : null,
      last ? h("dd", { id: "timeline-end-survivability", class: last.survivability.violated.length > 0 ? "violated-cell" : undefined },
        `${survivabilityText(last.survivability)}; design ${last.design.mode} (${last.design.status})`) : null,
      doc.starting_risk?.text ? h("dt", {}, "starting risk") : null,
      doc.starting_risk?.text ? h("dd", { id: "timeline-starting-risk" }, doc.starting_risk.text) : null,
      h("dt", {}, "short of budget"),
      h("dd", {}, doc.budget_shortfalls.map((s) => `${s.period} (${usd(s.shortfall_usd)})`).join(", ") || "no period")),
    capex, survival,
    h("h5", {}, `Per ${doc.period}`),
    h("p", { class: "hint timeline-map-tools" }, h("label", { class: "inline" }, "On the map: ", choose),
      ` Choose a ${doc.period} (or a row: click or Enter) to draw what is built by then, what comes online in it and what is committed but not yet online.`),
    table,
    h("h5", {}, `Builds (${doc.builds.length})`), doc.builds.length === 0 ? h("p", { class: "meta" }, "Nothing bought.") : builds,
    doc.notes.length === 0 ? null : h("div", {}, h("h5", {}, "Notes"), h("ul", { id: "timeline-notes" }, ...doc.notes.map((n) => h("li", {}, n)))));
}
