// The Results view of a finished job: the utilisation map (te, plan), the failure sweep as a ranked table whose
// rows put the map in that failure state (failures, plan), and the plan's survivability summary. Every number is
// one the API served (the job's result JSON and its result files); nothing is recomputed here.

import { api, getJson, getText } from "./api";
import type { Feature, FeatureCollection, FileEntry, Job } from "./api";
import { append, clear, formatValue, h } from "./dom";
import { reportDownloads } from "./downloads";
import { UTILISATION_BANDS } from "./map";
import type { LinkResult, ResultOverlay, ScenarioMap } from "./map";
import { figure as gbps, percent, planSummary } from "./planresults";
import type { PlanDoc } from "./planresults";
import { sweepChart } from "./sweepchart";
import { markPeriod, periodLegend, periodView, roadmapTimeline } from "./timeline";
import type { RoadmapDoc } from "./timeline";

/** The links and sites a failure's named elements (link, SRLG or site ids) take down, as the open scenario has them. */
export type ElementResolver = (names: string[]) => { links: string[]; sites: string[] };

type Row = Record<string, string | number | null>;

/** One failure state of a sweep as the API serves it (``failures.json``'s ``scenarios``, worst first). */
interface FailureRecord {
  scenario: string;
  kind: string;
  failed: string[];
  derate: number | null;
  status: string;
  impact_gbps: number | null;
  unmet_gbps: number | null;
  unmet_by_class: Record<string, number>;
  slo_violation_gbps: number | null;
  slo_violation_demands: string[];
  lost_gbps: number | null;
  paused_gbps: number | null;
  mlu: number | null;
  survived: boolean;
}

interface FailuresDoc {
  scenarios?: FailureRecord[];
  scenarios_run?: number;
  survived?: number;
  not_survived?: number;
}

/** Parse CSV text (RFC 4180: quoted fields, doubled quotes) into rows keyed by the header; numbers as numbers,
 * empty cells as null. */
export function parseCsv(text: string): Row[] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { record.push(field); field = ""; }
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      record.push(field);
      records.push(record);
      record = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || record.length > 0) { record.push(field); records.push(record); }
  const [header, ...body] = records;
  if (!header) return [];
  return body.filter((r) => r.length > 1 || r[0] !== "").map((r) => Object.fromEntries(header.map((name, i) => {
    const cell = r[i] ?? "";
    const number = cell.trim() === "" ? NaN : Number(cell);
    return [name, cell === "" ? null : Number.isFinite(number) ? number : cell];
  })));
}

/** The results of one succeeded job, drawn into `element` and onto the shared map. */
export class ResultsView {
  readonly element = h("section", { class: "results", id: "results", "aria-label": "Results" });
  private readonly legend = legend();
  private files: FileEntry[] = [];
  private failures: FailureRecord[] = [];
  private stateLinks = new Map<string, Map<string, LinkResult>>();
  private baseLinks: Map<string, LinkResult> | null = null;
  private selectedFailure: string | null = null;
  private failureRows = new Map<string, HTMLTableRowElement>();
  private readonly stateDetail = h("div", { class: "failure-state", id: "failure-state", "aria-live": "polite" });
  private disposed = false;
  private roadmap: { doc: RoadmapDoc; timeline: HTMLElement } | null = null;
  private periodMaps = new Map<string, Promise<FeatureCollection>>();
  private periodLegend: HTMLElement | null = null;
  private period: string | null = null;

  readonly jobId: string;

  constructor(private readonly token: string, private readonly job: Job, private readonly map: ScenarioMap,
              private readonly resolve: ElementResolver, private readonly onFailure: (scenario: string | null) => void,
              private readonly report: (text: string, isError: boolean) => void,
              private readonly onPeriod: (period: string | null) => void = () => undefined,
              private readonly candidate: (id: string) => Feature | undefined = () => undefined) {
    this.jobId = job.id;
  }

  /** Read the job's result and files and draw them; `failure` selects a failure state, `period` a roadmap's period
   * (deep links). */
  async load(failure: string | null, period: string | null = null): Promise<void> {
    const base = `v1/jobs/${encodeURIComponent(this.job.id)}`;
    const file = async (name: string) => getText(`${base}/files/${name.split("/").map(encodeURIComponent).join("/")}`, this.token);
    try {
      this.files = await api.files(this.token, this.job.id);
      const has = (name: string) => this.files.some((f) => f.name === name);
      const result = await api.result(this.token, this.job.id);
      const documents = reportDownloads(this.token, this.job, this.files, this.report);
      if (documents) this.element.append(documents);
      this.element.prepend(widenButton(this.map));
      if (this.job.kind === "roadmap") {
        const doc = result as RoadmapDoc;
        this.roadmap = { doc, timeline: roadmapTimeline(doc, this.report, this.onPeriod) };
        this.element.append(this.roadmap.timeline);
      }
      if (this.job.kind === "plan") {
        this.element.append(planSummary(result as PlanDoc,
          has("design_upgrades.csv") ? parseCsv(await file("design_upgrades.csv")) : null));
      }
      if (has("te_links.csv")) this.showUtilisation(parseCsv(await file("te_links.csv")));
      const sweep = this.job.kind === "failures" ? (result as FailuresDoc)
        : has("failures.json") ? (JSON.parse(await file("failures.json")) as FailuresDoc) : null;
      if (sweep) {
        const states = has("failures_state_links.csv") ? parseCsv(await file("failures_state_links.csv")) : [];
        this.showFailures(sweep, states);
      }
    } catch (error) {
      this.report(`Could not read the results of job ${this.job.id}: ${error instanceof Error ? error.message : String(error)}`, true);
      return;
    }
    if (this.disposed) return;
    await this.selectFailure(failure);
    await this.selectPeriod(period);
  }

  /** Put the map back as the scenario draws it. */
  dispose(): void {
    this.disposed = true;
    this.legend.remove();
    this.periodLegend?.remove();
    widen(this.map, false);
    void this.map.showResult(null);
    if (this.period !== null) void this.map.showPeriod(null);
  }

  // ------------------------------------------------------------------ roadmap periods
  /** Draw a roadmap period's builds on the map (null: the scenario as given): the period's map from
   * `GET v1/jobs/{id}/periods/{period}/map?format=geojson`, the builds from the job's roadmap.json. */
  async selectPeriod(period: string | null): Promise<void> {
    if (this.roadmap === null) return;
    const { doc, timeline } = this.roadmap;
    const index = period === null ? -1 : doc.periods.findIndex((p) => p.period === period);
    if (period !== null && index < 0) this.report(`Roadmap job ${this.job.id} has no ${doc.period} ${period}`, true);
    this.period = index < 0 ? null : doc.periods[index].period;
    markPeriod(timeline, this.period);
    this.periodLegend?.remove();
    this.periodLegend = null;
    if (this.period === null) {
      await this.map.showPeriod(null);
      return;
    }
    const label = this.period;
    let collection: FeatureCollection;
    try {
      let pending = this.periodMaps.get(label);
      if (pending === undefined) {
        pending = getJson<FeatureCollection>(`v1/jobs/${encodeURIComponent(this.job.id)}/periods/${encodeURIComponent(label)}/map?format=geojson`, this.token);
        this.periodMaps.set(label, pending);
        pending.catch(() => this.periodMaps.delete(label));
      }
      collection = await pending;
    } catch (error) {
      this.report(`Could not draw ${label} of job ${this.job.id}: ${error instanceof Error ? error.message : String(error)}`, true);
      return;
    }
    if (this.disposed || this.period !== label) return;  // another period was chosen meanwhile
    const view = periodView(doc, index, collection, this.candidate);
    await this.map.showPeriod(view);
    this.periodLegend = periodLegend(doc, index, view);
    this.map.map.getContainer().append(this.periodLegend);
    timeline.setAttribute("data-period-drawn", label);
    if (view.builds.length + view.sites.length > 0) this.map.frame({ links: view.builds.map((b) => b.id), candidates: view.builds.map((b) => b.id),
                                           sites: view.sites.map((s) => s.id) });
  }

  // ------------------------------------------------------------------ utilisation
  private showUtilisation(rows: Row[]): void {
    this.baseLinks = new Map(rows.map((r) => [String(r.link), {
      utilisation: typeof r.utilisation === "number" ? r.utilisation : null,
      "load a→b Gb/s": r.flow_ab_gbps, "load b→a Gb/s": r.flow_ba_gbps, "capacity Gb/s": r.capacity_gbps,
    }]));
    const loaded = rows.filter((r) => typeof r.utilisation === "number");
    const top = loaded.slice().sort((a, b) => Number(b.utilisation) - Number(a.utilisation)).slice(0, 10);
    const body = h("tbody", {}, ...top.map((r) => h("tr", { "data-id": String(r.link) },
      h("td", {}, String(r.link)), h("td", { class: "num" }, percent(r.utilisation as number)),
      h("td", { class: "num" }, formatValue(r.flow_ab_gbps)), h("td", { class: "num" }, formatValue(r.flow_ba_gbps)),
      h("td", { class: "num" }, formatValue(r.capacity_gbps)))));
    this.element.append(h("h4", {}, "Utilisation (te_links.csv)"),
      h("p", { class: "hint" }, `${loaded.length} links coloured by the utilisation the job reports; the busiest:`),
      h("table", { class: "data result-table", id: "busiest-links" },
        h("thead", {}, h("tr", {}, h("th", {}, "link"), h("th", { class: "num" }, "utilisation"),
          h("th", { class: "num" }, "load a→b Gb/s"), h("th", { class: "num" }, "load b→a Gb/s"),
          h("th", { class: "num" }, "capacity Gb/s"))), body));
  }

  // ------------------------------------------------------------------ failures
  private showFailures(sweep: FailuresDoc, states: Row[]): void {
    this.failures = sweep.scenarios ?? [];
    for (const r of states) {
      const scenario = String(r.scenario);
      let links = this.stateLinks.get(scenario);
      if (!links) this.stateLinks.set(scenario, (links = new Map()));
      links.set(String(r.link), { utilisation: typeof r.utilisation === "number" ? r.utilisation : null });
    }
    const body = h("tbody", {});
    this.failureRows.clear();
    this.failures.forEach((rec, i) => {
      const row = h("tr", { "data-scenario": rec.scenario, tabindex: 0, class: "clickable" },
        h("td", { class: "num" }, i + 1), h("td", {}, rec.scenario), h("td", {}, rec.failed.join(", ")),
        h("td", { class: "num" }, gbps(rec.impact_gbps)), h("td", { class: "num" }, gbps(rec.unmet_gbps)),
        h("td", { class: "num" }, gbps(rec.slo_violation_gbps)), h("td", { class: "num" }, gbps(rec.lost_gbps)),
        h("td", { class: "num" }, percent(rec.mlu)), h("td", {}, rec.survived ? "yes" : "no"));
      const pick = () => this.onFailure(this.selectedFailure === rec.scenario ? null : rec.scenario);
      row.addEventListener("click", pick);
      row.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); pick(); }
      });
      this.failureRows.set(rec.scenario, row);
      body.append(row);
    });
    const counts = sweep.scenarios_run === undefined ? ""
      : `${sweep.scenarios_run} failure states, ${sweep.survived ?? "?"} survived, ${sweep.not_survived ?? "?"} not. `;
    const worst = h("button", { type: "button", class: "secondary", id: "fail-worst", disabled: this.failures.length === 0 },
                    "Fail to worst case");
    worst.addEventListener("click", () => { if (this.failures[0]) this.onFailure(this.failures[0].scenario); });
    this.element.append(h("h4", {}, "Failure sweep, worst first"), worst,
      h("p", { class: "hint" }, `${counts}Click a state to show the network in it.`),
      sweepChart(this.failures, (scenario) => this.onFailure(scenario), this.report) ?? "",
      h("div", { class: "result-scroll" }, h("table", { class: "data result-table", id: "failure-table" },
        h("thead", {}, h("tr", {}, h("th", { class: "num" }, "#"), h("th", {}, "state"), h("th", {}, "failed"),
          h("th", { class: "num" }, "impact Gb/s"), h("th", { class: "num" }, "unmet Gb/s"),
          h("th", { class: "num" }, "SLO violation Gb/s"), h("th", { class: "num" }, "lost Gb/s"),
          h("th", { class: "num" }, "MLU"), h("th", {}, "survived"))), body)),
      this.stateDetail);
  }

  /** Show one failure state on the map (null: the job's own result: its utilisation, if it has one). */
  async selectFailure(scenario: string | null): Promise<void> {
    const record = this.failures.find((r) => r.scenario === scenario) ?? null;
    if (scenario !== null && record === null && this.failures.length > 0) {
      this.report(`Job ${this.job.id} has no failure state ${scenario}`, true);
    }
    this.selectedFailure = record?.scenario ?? null;
    for (const [name, row] of this.failureRows) row.classList.toggle("selected", name === this.selectedFailure);
    clear(this.stateDetail);
    let overlay: ResultOverlay | null = this.baseLinks ? { links: this.baseLinks } : null;
    if (record) {
      const down = this.resolve(record.failed);
      overlay = { links: this.stateLinks.get(record.scenario) ?? new Map(), failedLinks: down.links, failedSites: down.sites };
      this.showState(record, down);
      this.failureRows.get(record.scenario)?.scrollIntoView({ block: "nearest" });
    }
    if (overlay && overlay.links.size > 0) this.map.map.getContainer().append(this.legend);
    else this.legend.remove();
    await this.map.showResult(overlay);
    if (record) this.map.frame({ links: overlay?.failedLinks, sites: overlay?.failedSites });
  }

  private showState(record: FailureRecord, down: { links: string[]; sites: string[] }): void {
    const byClass = Object.entries(record.unmet_by_class ?? {}).filter(([, v]) => v > 0);
    const coloured = this.stateLinks.has(record.scenario);
    append(this.stateDetail, h("h4", {}, `Failure state ${record.scenario}`),
      h("p", { class: "hint" }, `${record.derate === null ? "Down" : `Derated to ${formatValue(record.derate * 100)} %`}: `,
        h("span", { id: "failed-elements" }, [...down.links, ...down.sites].join(", ") || record.failed.join(", ")),
        coloured ? ". Links coloured by their utilisation in this state." : ". This job served no per-state utilisation."),
      h("dl", { class: "job-facts" },
        h("dt", {}, "impact"), h("dd", {}, `${gbps(record.impact_gbps)} Gb/s`),
        h("dt", {}, "unmet"), h("dd", { id: "state-unmet" }, `${gbps(record.unmet_gbps)} Gb/s`),
        h("dt", {}, "SLO violations"), h("dd", {}, `${gbps(record.slo_violation_gbps)} Gb/s`),
        h("dt", {}, "lost with sites"), h("dd", {}, `${gbps(record.lost_gbps)} Gb/s`),
        h("dt", {}, "MLU"), h("dd", {}, percent(record.mlu))),
      h("h5", {}, "Unmet demand by class"),
      byClass.length === 0 ? h("p", { class: "meta" }, record.unmet_gbps === null ? "unknown (not measured)" : "none")
        : h("ul", { id: "unmet-by-class" }, ...byClass.map(([c, v]) => h("li", {}, `${c}: ${formatValue(v)} Gb/s`))),
      record.slo_violation_demands.length === 0 ? null
        : h("div", {}, h("h5", {}, "Demands over their latency SLO"),
            h("ul", { id: "slo-demands" }, ...record.slo_violation_demands.map((d) => h("li", {}, d)))));
  }
}

/** Give the results the whole window's width (the scenario list and the Run form folded away) or put them back. */
function widen(map: ScenarioMap, on: boolean): void {
  const shell = document.querySelector(".shell");
  if (shell === null || shell.classList.contains("results-wide") === on) return;
  shell.classList.toggle("results-wide", on);
  map.resize();
}

/** The toggle that widens the results pane (so a long timeline table does not scroll sideways at 1280x800). */
function widenButton(map: ScenarioMap): HTMLElement {
  const wide = () => document.querySelector(".shell")?.classList.contains("results-wide") ?? false;
  const button = h("button", { type: "button", class: "secondary", id: "results-wide", "aria-pressed": String(wide()),
                               title: "Give the results the full width (the scenario list and the Run form fold away)" },
                   wide() ? "Restore the layout" : "Widen results");
  button.addEventListener("click", () => {
    widen(map, !wide());
    button.setAttribute("aria-pressed", String(wide()));
    button.textContent = wide() ? "Restore the layout" : "Widen results";
  });
  return button;
}

function legend(): HTMLElement {
  return h("div", { class: "map-legend", id: "utilisation-legend", role: "img", "aria-label": "Utilisation legend" },
    h("strong", {}, "Utilisation"),
    ...UTILISATION_BANDS.map((b) => {
      const swatch = h("span", { class: "legend-swatch" });
      swatch.style.background = b.color;  // CSSOM, not a style attribute (the CSP has no unsafe-inline)
      return h("div", { class: "legend-row" }, swatch, b.label);
    }),
    h("div", { class: "legend-row" }, h("span", { class: "legend-swatch failed" }), "failed"));
}
