// The Compare view: two versions of a scenario (or two scenarios), or two finished plan or roadmap jobs, side by
// side: the map coloured by change with a legend, the structural changes, the KPI changes and the per-failure
// changes. Everything shown is what the API's diff answered (`GET v1/scenarios/{id}/diff`, `GET v1/jobs/{id}/diff`,
// the `backbone diff --json` document); the map only places those rows on the two sides' GeoJSON by id.

import type { ExpressionSpecification, GeoJSONSource } from "maplibre-gl";
import { api, ApiError, download, getJson } from "./api";
import type { Feature, FeatureCollection, JobStatus, ScenarioSummary, ScenarioVersion } from "./api";
import { append, clear, formatValue, h } from "./dom";
import { ScenarioMap } from "./map";
import type { Highlight, LinkResult } from "./map";

/** What the URL hash names: `#/compare` (the picker), `#/compare/scenario/<before>/<v>/<after>/<v>` or
 * `#/compare/job/<before>/<after>` (before first, as `backbone diff A B`). */
export type CompareSpec =
  | { mode: "scenario"; before: string; beforeVersion: number; after: string; afterVersion: number }
  | { mode: "job"; before: string; after: string }
  | { mode: "pick" };

const UUID = "([0-9a-fA-F-]{36})";

/** The compare view a hash names, or null when the hash is not a compare link. */
export function parseCompare(hash: string): CompareSpec | null {
  if (!/^#\/compare(\/|$)/.test(hash)) return null;
  const sc = new RegExp(`^#/compare/scenario/${UUID}/([0-9]{1,9})/${UUID}/([0-9]{1,9})$`).exec(hash);
  if (sc) return { mode: "scenario", before: sc[1].toLowerCase(), beforeVersion: Number(sc[2]),
                   after: sc[3].toLowerCase(), afterVersion: Number(sc[4]) };
  const job = new RegExp(`^#/compare/job/${UUID}/${UUID}$`).exec(hash);
  if (job) return { mode: "job", before: job[1].toLowerCase(), after: job[2].toLowerCase() };
  return { mode: "pick" };
}

export function compareHash(spec: CompareSpec): string {
  if (spec.mode === "scenario") return `#/compare/scenario/${spec.before}/${spec.beforeVersion}/${spec.after}/${spec.afterVersion}`;
  if (spec.mode === "job") return `#/compare/job/${spec.before}/${spec.after}`;
  return "#/compare";
}

type Row = Record<string, string | number | boolean | null>;

/** The diff document (`DiffResult.to_dict`): the fields this view reads; every table a list of records. */
export interface DiffDocument {
  kind: "diff";
  before: { label: string; kind: string; scenario: string; fingerprint: string };
  after: { label: string; kind: string; scenario: string; fingerprint: string };
  changed: boolean;
  counts: Record<string, number>;
  notes: string[];
  structure: Row[];
  capacity_by_cable_system: Row[];
  capacity_by_region: Row[];
  kpis: Row[];
  placement: Row[];
  failures: Row[];
  changeover: Row[];
}

interface JobSummary {
  id: string;
  scenario_id: string;
  scenario_version: number;
  kind: string;
  status: JobStatus;
  finished_at: string | null;
}

/** How a changed element is drawn: its change, colour and legend label, in legend order. */
const CHANGES: { change: string; color: string; label: string }[] = [
  { change: "added", color: "#00e676", label: "added" },
  { change: "removed", color: "#ff3b5c", label: "removed (dashed)" },
  { change: "capacity up", color: "#ff9100", label: "capacity up" },
  { change: "capacity down", color: "#40c4ff", label: "capacity down" },
  { change: "changed", color: "#e040fb", label: "other fields changed" },
];

const STRUCTURE_COLUMNS = ["table", "id", "change", "field", "before", "after", "delta", "unit"];
const KPI_COLUMNS = ["kpi", "unit", "before", "after", "delta", "verdict"];
const FAILURE_COLUMNS = ["scenario", "change", "survived_before", "survived_after", "impact_before_gbps",
                         "impact_after_gbps", "impact_delta_gbps", "mlu_before", "mlu_after"];

/** A cell's text with a line break allowed after each underscore (a long field name such as max_capacity_gbps wraps
 * instead of pushing the table's last columns out of a narrow pane); its text is unchanged. */
function breakable(text: string): (string | HTMLElement)[] {
  const parts = text.split("_");
  return parts.flatMap((part, i) => (i < parts.length - 1 ? [`${part}_`, h("wbr")] : [part]));
}

/** A link's or site's change from the structure rows about it: added or removed first, then a capacity change by
 * the sign of the API's delta, else "changed". */
function changeOf(rows: Row[]): string {
  if (rows.some((r) => r.change === "added")) return "added";
  if (rows.some((r) => r.change === "removed")) return "removed";
  const capacity = rows.find((r) => r.field === "capacity_gbps" && typeof r.delta === "number");
  if (capacity) return Number(capacity.delta) > 0 ? "capacity up" : Number(capacity.delta) < 0 ? "capacity down" : "changed";
  return "changed";
}

function colourOf(): ExpressionSpecification {
  const pairs: string[] = [];
  for (const c of CHANGES) pairs.push(c.change, c.color);
  return ["match", ["get", "change"], ...pairs, "#e040fb"] as unknown as ExpressionSpecification;
}

function byId(collection: FeatureCollection, type: string): Map<string, Feature> {
  return new Map(collection.features.filter((f) => f.properties.feature_type === type).map((f) => [String(f.properties.id), f]));
}

/** The two sides' elements in one collection: the after side, plus what only the before side has (removed links and
 * sites), plus links built from candidate routes (a plan's new routes keep their candidate's id). */
function union(before: FeatureCollection, after: FeatureCollection, ids: Set<string>): FeatureCollection {
  const out: Feature[] = [...after.features.filter((f) => f.properties.feature_type !== "candidate")];
  for (const type of ["site", "link"]) {
    const mine = byId(after, type);
    for (const [id, f] of byId(before, type)) if (!mine.has(id)) out.push(f);
  }
  const links = new Set(out.filter((f) => f.properties.feature_type === "link").map((f) => String(f.properties.id)));
  for (const side of [after, before]) {
    for (const [id, f] of byId(side, "candidate")) {
      if (!ids.has(id) || links.has(id)) continue;
      links.add(id);
      out.push({ ...f, properties: { ...f.properties, feature_type: "link", kind: f.properties.link_kind ?? "terrestrial" } });
    }
  }
  return { type: "FeatureCollection", features: out };
}

export class CompareView {
  readonly element: HTMLElement;
  private readonly map: ScenarioMap;
  private readonly form: HTMLFormElement;
  private readonly body = h("div", { class: "compare-body", id: "compare-body" });
  private readonly legend = h("div", { class: "map-legend", id: "compare-legend", role: "img", "aria-label": "Change legend" });
  private readonly fields = {
    mode: h("select", { id: "compare-mode", "aria-label": "Compare" },
            h("option", { value: "scenario" }, "two scenario versions"), h("option", { value: "job" }, "two plan or roadmap jobs")),
    beforeScenario: h("select", { id: "compare-before-scenario", "aria-label": "Before: scenario" }),
    beforeVersion: h("select", { id: "compare-before-version", "aria-label": "Before: version" }),
    afterScenario: h("select", { id: "compare-after-scenario", "aria-label": "After: scenario" }),
    afterVersion: h("select", { id: "compare-after-version", "aria-label": "After: version" }),
    beforeJob: h("select", { id: "compare-before-job", "aria-label": "Before: job" }),
    afterJob: h("select", { id: "compare-after-job", "aria-label": "After: job" }),
  };
  private jobs: JobSummary[] | null = null;
  private readonly versionCalls = new Map<HTMLSelectElement, number>();  // the latest fillVersions call per select
  private rowsByElement = new Map<string, HTMLTableRowElement[]>();
  private request = 0;

  constructor(private readonly token: string, private readonly scenarios: ScenarioSummary[],
              private readonly status: (text: string, isError?: boolean) => void) {
    const f = this.fields;
    for (const select of [f.beforeScenario, f.afterScenario]) {
      for (const sc of scenarios) select.append(h("option", { value: sc.id }, `${sc.name || "(unnamed)"} (v${sc.version})`));
    }
    f.beforeScenario.addEventListener("change", () => void this.fillVersions(f.beforeScenario.value, f.beforeVersion, null));
    f.afterScenario.addEventListener("change", () => void this.fillVersions(f.afterScenario.value, f.afterVersion, null));
    f.mode.addEventListener("change", () => void this.setMode(f.mode.value as "scenario" | "job"));
    const submit = h("button", { type: "submit", id: "compare-go" }, "Compare");
    this.form = h("form", { class: "compare-form", id: "compare-form", "aria-label": "What to compare" },
      h("label", { class: "inline" }, "Compare", f.mode),
      h("fieldset", { class: "compare-side", "data-mode": "scenario" }, h("legend", {}, "Before"), f.beforeScenario, f.beforeVersion),
      h("fieldset", { class: "compare-side", "data-mode": "scenario" }, h("legend", {}, "After"), f.afterScenario, f.afterVersion),
      h("fieldset", { class: "compare-side", "data-mode": "job", hidden: true }, h("legend", {}, "Before"), f.beforeJob),
      h("fieldset", { class: "compare-side", "data-mode": "job", hidden: true }, h("legend", {}, "After"), f.afterJob),
      submit);
    this.form.noValidate = true;
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      const spec = this.picked();
      if (spec) location.hash = compareHash(spec);
    });
    const mapBox = h("div", { class: "map compare-map", id: "compare-map", role: "region", "aria-label": "Map of the changes" });
    this.element = h("main", { class: "compare", id: "compare", "aria-label": "Compare" },
      h("div", { class: "map-tools" }, this.form),
      h("div", { class: "compare-split" }, mapBox, h("section", { class: "compare-panel", "aria-label": "Changes" }, this.body)));
    this.map = new ScenarioMap(mapBox, (kind, id) => this.selectElement(kind === "sites" ? "sites" : "links", id, false));
    (window as unknown as { backboneCompareMap: unknown }).backboneCompareMap = this.map.map;
    api.basemap(token).then((land) => this.map.setBasemap(land)).catch((e) => this.status(String(e), true));
    append(this.body, h("p", { class: "empty" }, "Pick two versions of a scenario (or two scenarios), or two finished plan or roadmap jobs, then Compare."));
  }

  dispose(): void {
    this.request += 1;
    this.map.map.remove();
    this.element.remove();
  }

  /** Show what the hash names: fill the picker from it and, for two sides, fetch and draw their diff. */
  async show(spec: CompareSpec): Promise<void> {
    const f = this.fields;
    if (spec.mode === "job") {
      f.mode.value = "job";
      await this.setMode("job", spec);
      await this.render(spec);
      return;
    }
    f.mode.value = "scenario";
    await this.setMode("scenario");
    if (spec.mode === "scenario") {
      f.beforeScenario.value = spec.before;
      f.afterScenario.value = spec.after;
      await Promise.all([this.fillVersions(spec.before, f.beforeVersion, spec.beforeVersion),
                         this.fillVersions(spec.after, f.afterVersion, spec.afterVersion)]);
      await this.render(spec);
      return;
    }
    // the picker only: a scenario with two versions, its last two, if there is one
    const sc = this.scenarios.find((s) => s.version > 1) ?? this.scenarios[0];
    if (sc === undefined) return;
    f.beforeScenario.value = sc.id;
    f.afterScenario.value = sc.id;
    await Promise.all([this.fillVersions(sc.id, f.beforeVersion, Math.max(1, sc.version - 1)),
                       this.fillVersions(sc.id, f.afterVersion, sc.version)]);
  }

  private async setMode(mode: "scenario" | "job", spec?: CompareSpec): Promise<void> {
    for (const set of this.form.querySelectorAll<HTMLElement>("fieldset.compare-side")) set.hidden = set.dataset.mode !== mode;
    if (mode !== "job") return;
    if (this.jobs === null) {
      try {
        const all = await getJson<JobSummary[]>("v1/jobs?status=succeeded&limit=1000", this.token);
        this.jobs = all.filter((j) => j.kind === "plan" || j.kind === "roadmap");
      } catch (error) {
        this.status(String(error instanceof Error ? error.message : error), true);
        this.jobs = [];
      }
      const name = (id: string) => this.scenarios.find((s) => s.id === id)?.name ?? id;
      for (const select of [this.fields.beforeJob, this.fields.afterJob]) {
        clear(select);
        for (const j of this.jobs) {
          select.append(h("option", { value: j.id },
            `${j.kind} · ${name(j.scenario_id)} v${j.scenario_version} · ${(j.finished_at ?? "").slice(0, 16).replace("T", " ")} · ${j.id.slice(0, 8)}`));
        }
      }
      if (this.jobs.length < 2 && spec === undefined) {
        this.status("Compare needs two succeeded plan or roadmap jobs: run them from a scenario's Run tab.");
      }
      if (this.jobs.length >= 2) {  // newest is listed first: default to the newest against the one before it
        this.fields.afterJob.value = this.jobs[0].id;
        this.fields.beforeJob.value = this.jobs[1].id;
      }
    }
    if (spec?.mode === "job") {
      for (const [select, id] of [[this.fields.beforeJob, spec.before], [this.fields.afterJob, spec.after]] as const) {
        if (![...select.options].some((o) => o.value === id)) select.append(h("option", { value: id }, id));
        select.value = id;
      }
    }
  }

  /** List `scenario`'s versions in `select` and choose `pick` (null: keep the version chosen, if the select already
   * listed this scenario's). Only the latest call for a select fills it: an earlier one answered late (the picker's
   * default scenario, then the planner's choice) must not undo what was chosen meanwhile. */
  private async fillVersions(scenario: string, select: HTMLSelectElement, pick: number | null): Promise<void> {
    const call = (this.versionCalls.get(select) ?? 0) + 1;
    this.versionCalls.set(select, call);
    let versions: ScenarioVersion[] = [];
    try {
      versions = await api.versions(this.token, scenario);
    } catch (error) {
      this.status(String(error instanceof Error ? error.message : error), true);
    }
    if (this.versionCalls.get(select) !== call) return;  // a later call fills it
    const kept = select.dataset.scenario === scenario ? select.value : "";
    clear(select);
    for (const v of versions.slice().sort((a, b) => b.version - a.version)) {
      select.append(h("option", { value: String(v.version) }, `v${v.version} · ${v.created_at.slice(0, 16).replace("T", " ")} · ${v.created_by || "unknown"}`));
    }
    select.dataset.scenario = scenario;
    if (pick !== null) select.value = String(pick);
    else if (kept !== "" && versions.some((v) => String(v.version) === kept)) select.value = kept;
  }

  private picked(): CompareSpec | null {
    const f = this.fields;
    if (f.mode.value === "job") {
      if (!f.beforeJob.value || !f.afterJob.value) return null;
      return { mode: "job", before: f.beforeJob.value, after: f.afterJob.value };
    }
    if (!f.beforeScenario.value || !f.beforeVersion.value || !f.afterScenario.value || !f.afterVersion.value) return null;
    return { mode: "scenario", before: f.beforeScenario.value, beforeVersion: Number(f.beforeVersion.value),
             after: f.afterScenario.value, afterVersion: Number(f.afterVersion.value) };
  }

  /** Fetch the diff and both sides' GeoJSON, then draw the map and the tables. */
  private async render(spec: CompareSpec): Promise<void> {
    if (spec.mode === "pick") return;
    const request = ++this.request;
    const token = this.token;
    this.status("Comparing…");
    let diff: DiffDocument;
    let before: FeatureCollection;
    let after: FeatureCollection;
    try {
      if (spec.mode === "scenario") {
        const url = `v1/scenarios/${encodeURIComponent(spec.after)}/diff?version=${spec.afterVersion}` +
          `&against=${encodeURIComponent(spec.before)}&against_version=${spec.beforeVersion}`;
        [diff, before, after] = await Promise.all([getJson<DiffDocument>(url, token),
          api.geojson(token, spec.before, spec.beforeVersion), api.geojson(token, spec.after, spec.afterVersion)]);
      } else {
        const [d, jb, ja] = await Promise.all([
          getJson<DiffDocument>(`v1/jobs/${encodeURIComponent(spec.after)}/diff?against=${encodeURIComponent(spec.before)}`, token),
          api.job(token, spec.before), api.job(token, spec.after)]);
        diff = d;
        [before, after] = await Promise.all([api.geojson(token, jb.scenario_id, jb.scenario_version),
                                             api.geojson(token, ja.scenario_id, ja.scenario_version)]);
      }
    } catch (error) {
      if (request !== this.request) return;
      clear(this.body);
      const text = error instanceof ApiError ? `${error.message} (HTTP ${error.status})` : String(error);
      append(this.body, h("p", { class: "error", role: "alert", id: "compare-error" }, text));
      this.status(text, true);
      return;
    }
    if (request !== this.request) return;
    await this.drawMap(diff, before, after);
    this.drawPanel(diff, spec);
    this.status(`${diff.before.label} → ${diff.after.label}: ${diff.changed ? `${diff.structure.length} structural changes` : "no differences"}`);
  }

  private async drawMap(diff: DiffDocument, before: FeatureCollection, after: FeatureCollection): Promise<void> {
    const grouped: Record<"links" | "sites", Map<string, Row[]>> = { links: new Map(), sites: new Map() };
    for (const row of diff.structure) {
      const table = row.table === "links" ? "links" : row.table === "sites" ? "sites" : null;
      if (table === null) continue;
      const id = String(row.id);
      grouped[table].set(id, [...(grouped[table].get(id) ?? []), row]);
    }
    const drawn = union(before, after, new Set(grouped.links.keys()));
    await this.map.setScenario(drawn);
    const figures = new Map<string, LinkResult>();
    const changes: Feature[] = [];
    const counts = new Map<string, number>();
    const missing: string[] = [];
    for (const [kind, type] of [["links", "link"], ["sites", "site"]] as const) {
      const features = byId(drawn, type);
      for (const [id, rows] of grouped[kind]) {
        const change = changeOf(rows);
        counts.set(change, (counts.get(change) ?? 0) + 1);
        const feature = features.get(id);
        if (feature === undefined) {
          missing.push(id);
          continue;
        }
        changes.push({ ...feature, properties: { ...feature.properties, change } });
        if (kind === "links") {
          const card: Record<string, string | number | null> = { change };
          for (const r of rows) card[`${String(r.field)} (before → after)`] = `${formatValue(r.before)} → ${formatValue(r.after)}`;
          figures.set(id, card as unknown as LinkResult);
        }
      }
    }
    // the unchanged network in grey (no utilisation figure), the hover card carrying each change's before and after
    await this.map.showResult({ links: figures });
    this.map.map.setLayoutProperty("candidates", "visibility", "none");
    const m = this.map.map;
    const data = { type: "FeatureCollection", features: changes } as never;
    const source = m.getSource("compare") as GeoJSONSource | undefined;
    if (source) source.setData(data);
    else {
      m.addSource("compare", { type: "geojson", data });
      const lines = ["==", ["geometry-type"], "LineString"] as ExpressionSpecification;
      m.addLayer({ id: "compare-links", type: "line", source: "compare", filter: ["all", lines, ["!=", ["get", "change"], "removed"]],
                   paint: { "line-color": colourOf(), "line-width": 4 } }, "selected-line");
      m.addLayer({ id: "compare-removed", type: "line", source: "compare", filter: ["all", lines, ["==", ["get", "change"], "removed"]],
                   paint: { "line-color": colourOf(), "line-width": 4, "line-dasharray": [1.5, 1.2] } }, "selected-line");
      m.addLayer({ id: "compare-sites", type: "circle", source: "compare", filter: ["==", ["geometry-type"], "Point"],
                   paint: { "circle-color": "rgba(0,0,0,0)", "circle-radius": 9, "circle-stroke-color": colourOf(),
                            "circle-stroke-width": 3 } }, "selected-site");
    }
    this.drawLegend(counts, missing);
    // frame the changes (all of them; the whole network when nothing on the map changed)
    const ids = (type: string) => changes.filter((f) => f.properties.feature_type === type).map((f) => String(f.properties.id));
    if (changes.length > 0) this.map.frame({ links: ids("link"), sites: ids("site") });
  }

  private drawLegend(counts: Map<string, number>, missing: string[]): void {
    clear(this.legend);
    append(this.legend, h("strong", {}, "Change (links, site rings)"));
    for (const c of CHANGES) {
      const swatch = h("span", { class: `legend-swatch${c.change === "removed" ? " removed" : ""}` });
      swatch.style.background = c.change === "removed" ? "" : c.color;  // CSSOM, not a style attribute (the CSP)
      append(this.legend, h("div", { class: "legend-row", "data-change": c.change }, swatch, `${c.label}: ${counts.get(c.change) ?? 0}`));
    }
    if (missing.length > 0) append(this.legend, h("div", { class: "legend-row meta" }, `not on the map (no geometry): ${missing.join(", ")}`));
    this.map.map.getContainer().append(this.legend);
  }

  private drawPanel(diff: DiffDocument, spec: CompareSpec): void {
    clear(this.body);
    this.rowsByElement = new Map();
    const head = h("div", { class: "compare-head" },
      h("p", {}, h("span", { class: "meta" }, "before "), h("strong", { id: "compare-before" }, `${diff.before.label} (${diff.before.kind}: ${diff.before.scenario})`)),
      h("p", {}, h("span", { class: "meta" }, "after "), h("strong", { id: "compare-after" }, `${diff.after.label} (${diff.after.kind}: ${diff.after.scenario})`)),
      h("p", { id: "compare-summary" }, diff.changed ? Object.entries(diff.counts).filter(([, n]) => n > 0)
        .map(([name, n]) => `${n} ${name.replaceAll("_", " ")}`).join(" · ") : "No differences: the two are the same."));
    if (spec.mode === "job") {
      const deck = h("button", { type: "button", class: "secondary", id: "compare-deck" }, "Review deck (.pptx)");
      deck.addEventListener("click", () => {
        this.status("Rendering the review deck…");
        download(`v1/jobs/${encodeURIComponent(spec.after)}/deck?against=${encodeURIComponent(spec.before)}`, this.token,
                 `review-${spec.after}.pptx`)
          .then(() => this.status("Review deck downloaded."))
          .catch((e) => this.status(e instanceof Error ? e.message : String(e), true));
      });
      head.append(deck);
    }
    append(this.body, head);
    if (diff.notes.length) append(this.body, h("ul", { class: "compare-notes" }, ...diff.notes.map((n) => h("li", {}, n))));
    this.section("Structural changes", "compare-structure", STRUCTURE_COLUMNS, diff.structure, true);
    const kpis = diff.kpis.filter((r) => r.sign === "+" || r.sign === "-" || (r.before === null) !== (r.after === null));
    if (diff.kpis.length) {
      this.section(`KPI changes (${kpis.length} of ${diff.kpis.length} KPIs changed)`, "compare-kpis", KPI_COLUMNS, kpis, false);
    }
    if (diff.before.kind === "plan" && diff.after.kind === "plan") {
      this.section("Failure states that changed", "compare-failures", FAILURE_COLUMNS, diff.failures, false);
    }
    for (const [name, title] of [["changeover", "Changeover (purchases that differ)"], ["placement", "GPU placement"],
                                 ["capacity_by_cable_system", "Capacity by cable system"], ["capacity_by_region", "Capacity by region"]] as const) {
      const rows = diff[name];
      if (rows.length) this.section(title, `compare-${name.replaceAll("_", "-")}`, Object.keys(rows[0]), rows, false);
    }
  }

  private section(title: string, id: string, columns: string[], rows: Row[], selectable: boolean): void {
    const head = h("tr", {}, ...columns.map((c) => h("th", { scope: "col" }, c.replaceAll("_", " "))));
    const body = h("tbody");
    for (const row of rows) {
      const tr = h("tr", { "data-table": row.table === undefined ? undefined : String(row.table),
                           "data-id": row.id === undefined ? undefined : String(row.id),
                           "data-scenario": row.scenario === undefined ? undefined : String(row.scenario),
                           "data-change": row.change === undefined ? undefined : String(row.change),
                           "data-field": row.field === undefined ? undefined : String(row.field) },
        ...columns.map((c) => h("td", { class: typeof row[c] === "number" ? "num" : undefined }, ...breakable(formatValue(row[c])))));
      if (selectable && (row.table === "links" || row.table === "sites")) {
        const key = `${row.table}:${String(row.id)}`;
        this.rowsByElement.set(key, [...(this.rowsByElement.get(key) ?? []), tr]);
        tr.tabIndex = 0;
        tr.classList.add("clickable");
        const pick = () => this.selectElement(row.table as "links" | "sites", String(row.id), true);
        tr.addEventListener("click", pick);
        tr.addEventListener("keydown", (event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            pick();
          }
        });
      }
      body.append(tr);
    }
    const content = rows.length ? h("div", { class: "result-scroll" }, h("table", { class: "data result-table", id }, h("thead", {}, head), body))
      : h("p", { class: "empty", id }, "None.");
    append(this.body, h("h4", {}, title), content);
  }

  /** Select a changed link or site: its rows in the structure table, highlighted on the map (flown to from a row). */
  private selectElement(kind: "links" | "sites", id: string, fly: boolean): void {
    for (const rows of this.rowsByElement.values()) for (const tr of rows) tr.classList.remove("selected");
    const rows = this.rowsByElement.get(`${kind}:${id}`) ?? [];
    for (const tr of rows) tr.classList.add("selected");
    if (!fly) rows[0]?.scrollIntoView({ block: "nearest" });
    const target: Highlight = kind === "links" ? { links: [id] } : { sites: [id] };
    this.map.highlight(target, fly);
  }

  resize(): void {
    this.map.resize();
  }
}
