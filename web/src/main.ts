// The planner's workspace: sign in with an API token or single sign-on (oidc.ts), list the team's scenarios and their versions, open one on
// a map beside its tables. It holds no planning logic: everything it shows is what the REST API answered.

import { api, ApiError, forgetToken, savedToken, saveToken } from "./api";
import type { FeatureCollection, Properties, ScenarioContent, ScenarioSummary, ScenarioVersion, ScenarioWithContent,
              WhoAmI } from "./api";
import { CompareView, parseCompare } from "./compare";
import { append, clear, formatValue, h } from "./dom";
import { EDITABLE_CELLS, Editor } from "./edit";
import type { CellTable, Edit } from "./edit";
import { LAYER_GROUPS, ScenarioMap } from "./map";
import { authConfig, completeSsoSignIn, ssoOption, ssoRefusal } from "./oidc";
import type { Highlight, SiteSize } from "./map";
import { ResultsView } from "./results";
import { RunPanel } from "./run";
import { ScenarioPanel } from "./scenarios";
import { DataTable } from "./tables";
import type { Column } from "./tables";
import "./app.css";

type TableKind = "sites" | "links" | "candidates" | "demands" | "srlgs" | "metros";
const TABLE_KINDS: TableKind[] = ["sites", "links", "candidates", "demands", "srlgs", "metros"];
/** The tables whose cells the what-if editor edits (links' capacity; sites' GPUs and MW; demands' Gb/s and SLO). */
const EDITED_TABLES: TableKind[] = ["links", "sites", "demands"];

const COLUMNS: Record<TableKind, Column[]> = {
  sites: [{ key: "id", label: "id" }, { key: "name", label: "name" }, { key: "region", label: "region" },
          { key: "country", label: "country" }, { key: "metro", label: "metro" }, { key: "kind", label: "kind" },
          { key: "gpus_installed", label: "GPUs", numeric: true }, { key: "gpus_max", label: "GPUs max", numeric: true },
          { key: "power_available_mw", label: "power MW", numeric: true }, { key: "power_max_mw", label: "power max MW", numeric: true },
          { key: "storage_pb", label: "storage PB", numeric: true }],
  links: [{ key: "id", label: "id" }, { key: "name", label: "name" }, { key: "kind", label: "kind" },
          { key: "cable_system", label: "cable system" }, { key: "site_a", label: "site a" }, { key: "site_b", label: "site b" },
          { key: "capacity_gbps", label: "capacity Gb/s", numeric: true }, { key: "length_km", label: "length km", numeric: true },
          { key: "latency_ms", label: "latency ms", numeric: true }, { key: "srlgs", label: "SRLGs" }],
  candidates: [{ key: "id", label: "id" }, { key: "name", label: "name" }, { key: "kind", label: "kind" },
               { key: "link_kind", label: "link kind" }, { key: "cable_system", label: "cable system" },
               { key: "site_a", label: "site a" }, { key: "site_b", label: "site b" },
               { key: "module_gbps", label: "module Gb/s", numeric: true }, { key: "max_modules", label: "max modules", numeric: true },
               { key: "module_cost_usd", label: "module USD", numeric: true }, { key: "fixed_cost_usd", label: "fixed USD", numeric: true },
               { key: "length_km", label: "length km", numeric: true }, { key: "latency_ms", label: "latency ms", numeric: true },
               { key: "lead_time_quarters", label: "lead time q", numeric: true }],
  demands: [{ key: "id", label: "id" }, { key: "src", label: "from" }, { key: "dst", label: "to" },
            { key: "traffic_class", label: "class" }, { key: "demand_gbps", label: "demand Gb/s", numeric: true },
            { key: "slo_rtt_ms", label: "SLO RTT ms", numeric: true }],
  srlgs: [{ key: "id", label: "id" }, { key: "kind", label: "kind" }, { key: "name", label: "name" },
          { key: "link_count", label: "links", numeric: true }, { key: "members", label: "members" }],
  metros: [{ key: "id", label: "id" }, { key: "name", label: "name" }, { key: "region", label: "region" },
           { key: "country", label: "country" }, { key: "population_m", label: "population M", numeric: true },
           { key: "gdp_usd_bn", label: "GDP USD bn", numeric: true }, { key: "inference_gpus", label: "inference GPUs", numeric: true },
           { key: "interactive_share", label: "interactive share", numeric: true }],
};
const TAB_LABELS: Record<TableKind, string> = { sites: "Sites", links: "Links", candidates: "Candidates",
                                                demands: "Demands", srlgs: "SRLGs", metros: "Metros" };

interface Route {
  scenario: string | null;
  version: number | null;
  job?: string;
  failure?: string;
  /** A roadmap job's period drawn on the map (`#/job/<id>/period/<period>`). */
  period?: string;
  /** A compare view's hash (`#/compare...`, read by compare.ts). */
  compare?: string;
}

/** The view the URL hash names: `#/scenario/<id>`, `#/scenario/<id>/version/<n>`, `#/job/<id>`,
 * `#/job/<id>/failure/<state>` (a failure state of the job's results) or `#/job/<id>/period/<period>` (a roadmap's
 * period on the map). */
function parseHash(hash: string): Route {
  if (parseCompare(hash) !== null) return { scenario: null, version: null, compare: hash };
  const period = /^#\/job\/([0-9a-fA-F-]{36})\/period\/([0-9]{4}(?:Q[1-4])?)$/.exec(hash);
  if (period) return { scenario: null, version: null, job: period[1].toLowerCase(), period: period[2] };
  const job = /^#\/job\/([0-9a-fA-F-]{36})(?:\/failure\/([^/]+))?$/.exec(hash);
  if (job) {
    let failure: string | undefined;
    try {
      failure = job[2] === undefined ? undefined : decodeURIComponent(job[2]);
    } catch {
      failure = undefined;  // a malformed escape: the job without a state
    }
    return { scenario: null, version: null, job: job[1].toLowerCase(), failure };
  }
  const match = /^#\/scenario\/([0-9a-fA-F-]{36})(?:\/version\/([0-9]{1,9}))?$/.exec(hash);
  return match ? { scenario: match[1].toLowerCase(), version: match[2] ? Number(match[2]) : null } : { scenario: null, version: null };
}

function routeHash(route: Route): string {
  if (route.compare !== undefined) return route.compare;
  if (route.job && route.period) return `#/job/${route.job}/period/${route.period}`;
  if (route.job) return `#/job/${route.job}${route.failure ? `/failure/${encodeURIComponent(route.failure)}` : ""}`;
  if (route.scenario === null) return "#/";
  return `#/scenario/${route.scenario}${route.version !== null ? `/version/${route.version}` : ""}`;
}

function message(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return ssoRefusal(error) ?? `The server refused this token (${error.message}). Check it, or create one with "backbone token create".`;
    if (error.status === 0) return `The server did not answer: ${error.message}.`;
    return `${error.message} (HTTP ${error.status} on ${error.path})`;
  }
  return String(error);
}

/** The calls that open a scenario version, started ahead (a deep link's, while the scenario list loads). */
interface Prefetched {
  key: string;
  geojson: Promise<FeatureCollection>;
  versions: Promise<ScenarioVersion[]>;
  scenario: Promise<ScenarioWithContent>;
}

class Workspace {
  private token: string | null = savedToken();
  private who: WhoAmI | null = null;
  private scenarios: ScenarioSummary[] = [];
  private map: ScenarioMap | null = null;
  private tables: Partial<Record<TableKind, DataTable>> = {};
  private rows: Record<TableKind, Properties[]> = { sites: [], links: [], candidates: [], demands: [], srlgs: [], metros: [] };
  /** Each table's rows by id: what a selection looks up (a scan per selection is slow at 5,000 demands). */
  private rowsById: Record<TableKind, Map<string, Properties>> = { sites: new Map(), links: new Map(), candidates: new Map(),
                                                                  demands: new Map(), srlgs: new Map(), metros: new Map() };
  private activeTab: TableKind | "run" | "changes" = "links";
  private run: RunPanel | null = null;
  private scenarioPanel: ScenarioPanel | null = null;
  private editor: Editor | null = null;
  private editing = false;
  private carried: Edit[] = [];
  private openScenarioId: string | null = null;
  /** Counts the scenarios opened, so that a slow answer for an earlier one is dropped. */
  private loads = 0;
  private prefetched: Prefetched | null = null;
  private compare: CompareView | null = null;
  private route: Route = parseHash(location.hash);
  private readonly statusLine = h("div", { class: "status", role: "status" });

  constructor(private readonly root: HTMLElement) {
    window.addEventListener("hashchange", () => void this.navigate(parseHash(location.hash)));
  }

  async start(): Promise<void> {
    const sso = await completeSsoSignIn();  // the issuer has just sent the browser back here with a code
    if (sso !== null && "error" in sso) {
      this.showSignIn(sso.error);
      return;
    }
    if (sso !== null) {
      this.token = sso.token;
      this.route = parseHash(location.hash);  // the view asked for before the trip to the issuer
    }
    if (this.token === null) {
      this.showSignIn(null);
      return;
    }
    try {
      this.who = await api.whoami(this.token);
    } catch (error) {
      const text = message(error);
      if (error instanceof ApiError && error.status === 401) forgetToken();
      this.token = null;
      this.showSignIn(text);
      return;
    }
    await this.showShell();
  }

  // ------------------------------------------------------------------ sign in
  private showSignIn(problem: string | null): void {
    this.scenarioPanel?.dispose();
    this.scenarioPanel = null;
    this.compare?.dispose();
    this.compare = null;
    this.map?.map.remove();
    this.map = null;
    clear(this.root);
    const input = h("input", { type: "password", name: "token", id: "token", autocomplete: "off", required: true,
                               spellcheck: "false", placeholder: "bbk_…" });
    const error = h("p", { class: "error", role: "alert", id: "signin-error" }, problem ?? "");
    error.hidden = problem === null;
    const form = h("form", { class: "signin", "aria-labelledby": "signin-title" },
      h("h1", { id: "signin-title" }, "backbone workspace"),
      h("p", { class: "lede" }, "Plan the global AI backbone: scenarios, sites, links and candidate routes on one map."),
      h("label", { for: "token" }, "API token"), input,
      h("p", { class: "hint" }, "Your token stays in this browser tab (session storage) and is sent only to this server, as an Authorization header."),
      error, h("button", { type: "submit" }, "Sign in"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.signIn(input.value.trim(), error);
    });
    this.root.append(h("main", { class: "signin-page" }, form));
    input.focus();
    void authConfig().then((config) => {
      const sso = ssoOption(config, (text) => { error.textContent = text; error.hidden = false; });
      if (sso !== null && form.isConnected) form.append(sso);
    });
    performance.mark("signin-drawn");
  }

  private async signIn(token: string, error: HTMLElement): Promise<void> {
    try {
      this.who = await api.whoami(token);
    } catch (problem) {
      error.textContent = message(problem);
      error.hidden = false;
      return;
    }
    this.token = token;
    saveToken(token);
    await this.showShell();
  }

  private signOut(): void {
    forgetToken();
    this.token = null;
    this.who = null;
    history.replaceState(null, "", "#/");
    this.route = { scenario: null, version: null };
    this.showSignIn(null);
  }

  // ------------------------------------------------------------------ shell
  private async showShell(): Promise<void> {
    const who = this.who as WhoAmI;
    clear(this.root);
    const signOut = h("button", { type: "button", class: "secondary", id: "sign-out" }, "Sign out");
    signOut.addEventListener("click", () => this.signOut());
    const header = h("header", { class: "topbar" },
      h("div", { class: "brand" }, h("span", { class: "logo", "aria-hidden": "true" }), "backbone"),
      h("div", { class: "crumb", id: "crumb" }),
      h("a", { href: "#/compare", id: "compare-link", class: "nav-link" }, "Compare"),
      h("div", { class: "identity", id: "identity" },
        h("span", { class: "team", title: "team" }, who.team_name ?? (who.team_id === null ? "no team" : who.team_id)),
        h("span", { class: `role role-${who.scope}`, title: "role" }, who.scope),
        h("span", { class: "token-name", title: "token" }, who.name), signOut));
    this.scenarioPanel = new ScenarioPanel(this.token as string, who, {
      reload: () => this.loadScenarios(), status: (text, isError) => this.status(text, isError),
      open: (scenario, version) => { location.hash = routeHash({ scenario, version }); } });
    const side = h("nav", { class: "sidebar", "aria-label": "Scenarios" }, h("h2", {}, "Scenarios"),
      this.scenarioPanel.element, h("ul", { class: "scenario-list", id: "scenario-list" }));
    const mapBox = h("div", { class: "map", id: "map", role: "region", "aria-label": "Map" });
    const tools = this.mapTools();
    const tabs = h("div", { class: "tabs", role: "tablist", id: "tabs" });
    const tablePane = h("div", { class: "table-pane", id: "table-pane" });
    const main = h("main", { class: "workspace" },
      h("section", { class: "map-pane" }, tools, mapBox),
      h("section", { class: "tables", "aria-label": "Tables" }, tabs, tablePane));
    this.root.append(h("div", { class: "shell" }, header, side, main, this.statusLine));
    this.map = new ScenarioMap(mapBox, (kind, id) => this.select(kind, id, "map"));
    // the MapLibre map, for the browser tests and the developer console (read it, do not rely on it in code)
    (window as unknown as { backboneMap: unknown }).backboneMap = this.map.map;
    api.basemap(this.token as string).then((land) => this.map?.setBasemap(land)).catch((e) => this.status(message(e), true));
    // a deep link's scenario is asked for now, beside the scenario list, not after it
    if (this.route.scenario !== null && this.route.job === undefined) this.prefetch(this.route.scenario, this.route.version);
    await this.loadScenarios();
    await this.navigate(this.route, true);
  }

  private mapTools(): HTMLElement {
    const layers = h("fieldset", { class: "layers" }, h("legend", {}, "Layers:"));
    for (const group of LAYER_GROUPS) {
      const box = h("input", { type: "checkbox", checked: true, id: `layer-${group.id}`, "data-layer": group.id });
      box.addEventListener("change", () => void this.map?.setGroupVisible(group.id, box.checked));
      append(layers, h("label", { for: `layer-${group.id}`, class: `swatch-${group.id}` }, box, group.label));
    }
    const size = h("select", { id: "site-size", "aria-label": "Size sites by" },
      h("option", { value: "gpus" }, "GPUs installed"), h("option", { value: "mw" }, "MW available"));
    size.addEventListener("change", () => void this.map?.sizeSitesBy(size.value as SiteSize));
    const centre = h("select", { id: "centre", "aria-label": "Centre the map on" },
      h("option", { value: "atlantic" }, "Atlantic-centred"), h("option", { value: "pacific" }, "Pacific-centred"));
    centre.addEventListener("change", () => this.map?.centreOn(centre.value as "pacific" | "atlantic"));
    const png = h("button", { type: "button", class: "secondary", id: "map-png", title: "Download the map as drawn (PNG)" }, "PNG");
    png.addEventListener("click", () => void this.downloadMap());
    return h("div", { class: "map-tools", role: "toolbar", "aria-label": "Map layers and view" }, layers,
      h("label", { class: "inline" }, "Site size", size), h("label", { class: "inline" }, "View", centre), png);
  }

  /** Save the map as it is drawn now (scenario, result colours, failure state) as a PNG. */
  private async downloadMap(): Promise<void> {
    if (this.map === null) return;
    const r = this.route;
    const name = r.job ? `job-${r.job}${r.failure ? `-${r.failure.replace(/[^A-Za-z0-9_.-]+/g, "_")}` : ""}${r.period ? `-${r.period}` : ""}`
      : r.scenario ? `scenario-${r.scenario}` : "map";
    const link = h("a", { href: await this.map.snapshot(), download: `backbone-${name}.png` });
    document.body.append(link);
    link.click();
    link.remove();
  }

  private status(text: string, isError = false): void {
    this.statusLine.textContent = text;
    this.statusLine.classList.toggle("error", isError);
  }

  // ------------------------------------------------------------------ scenarios
  private async loadScenarios(): Promise<void> {
    try {
      this.scenarios = await api.scenarios(this.token as string);
    } catch (error) {
      this.handle(error);
      return;
    }
    const list = document.getElementById("scenario-list") as HTMLElement;
    clear(list);
    if (this.scenarios.length === 0) {
      list.append(h("li", { class: "empty" }, "No scenarios yet. Upload one (above, or POST v1/scenarios) or run \"backbone db seed\" for the shipped one."));
    }
    for (const sc of this.scenarios) {
      const link = h("a", { href: routeHash({ scenario: sc.id, version: null }), class: "scenario-link", "data-id": sc.id },
        h("span", { class: "scenario-name" }, sc.name || "(unnamed)"),
        h("span", { class: "meta" }, `v${sc.version} · ${sc.sites} sites · ${sc.links} links · ${sc.demands} demands`),
        sc.read_only ? h("span", { class: "badge" }, "shared, read-only") : null);
      list.append(h("li", { "data-id": sc.id }, link, h("ol", { class: "versions", reversed: true })));
    }
    this.scenarioPanel?.filter();
  }

  private async navigate(route: Route, initial = false): Promise<void> {
    const same = !initial && route.scenario === this.route.scenario && route.version === this.route.version &&
      route.job === this.route.job && route.failure === this.route.failure && route.period === this.route.period &&
      route.compare === this.route.compare;
    this.route = route;
    if (same || this.token === null || this.map === null) return;
    for (const li of document.querySelectorAll("#scenario-list > li")) {
      li.classList.toggle("open", li.getAttribute("data-id") === route.scenario);
    }
    if (route.compare !== undefined) {
      await this.showCompare(route.compare);
      return;
    }
    this.hideCompare();
    if (route.job) {
      await this.openJob(route.job, route.failure ?? null, route.period ?? null);
      return;
    }
    if (route.scenario === null) {
      this.showEmpty();
      return;
    }
    await this.openScenario(route.scenario, route.version);
  }

  /** `#/compare...`: the Compare view in place of the map and tables (compare.ts). */
  private async showCompare(hash: string): Promise<void> {
    if (this.compare === null) {
      this.compare = new CompareView(this.token as string, this.scenarios, (text, isError) => this.status(text, isError));
      const workspace = this.root.querySelector("main.workspace") as HTMLElement;
      workspace.hidden = true;
      workspace.after(this.compare.element);
    }
    this.openScenarioId = null;  // leaving compare reopens the scenario (its crumb, tables and map)
    const crumb = document.getElementById("crumb") as HTMLElement;
    clear(crumb);
    crumb.append(h("span", { class: "scenario-title" }, "Compare"));
    await this.compare.show(parseCompare(hash) ?? { mode: "pick" });
  }

  private hideCompare(): void {
    if (this.compare === null) return;
    this.compare.dispose();
    this.compare = null;
    (this.root.querySelector("main.workspace") as HTMLElement).hidden = false;
    this.map?.resize();
  }

  /** `#/job/<id>`: open the job's scenario at the version it ran on (unless it is open) and show the job. */
  private async openJob(id: string, failure: string | null, period: string | null = null): Promise<void> {
    let scenarioId: string;
    let version: number;
    try {
      const job = await api.job(this.token as string, id);
      scenarioId = job.scenario_id;
      version = job.scenario_version;
    } catch (error) {
      this.handle(error);
      return;
    }
    for (const li of document.querySelectorAll("#scenario-list > li")) {
      li.classList.toggle("open", li.getAttribute("data-id") === scenarioId);
    }
    if (this.openScenarioId !== scenarioId || this.run === null) await this.openScenario(scenarioId, version);
    this.showTab("run");
    await this.run?.select(id, failure, period);
  }

  private showEmpty(): void {
    this.openScenarioId = null;
    this.run?.dispose();
    this.run = null;
    this.editor?.dispose();
    this.editor = null;
    this.scenarioPanel?.setOpen(null);
    const crumb = document.getElementById("crumb");
    if (crumb) crumb.textContent = "";
    void this.map?.setScenario({ type: "FeatureCollection", features: [] });
    const pane = document.getElementById("table-pane") as HTMLElement;
    clear(pane);
    clear(document.getElementById("tabs") as HTMLElement);
    pane.append(h("p", { class: "empty" }, "Open a scenario from the list to see it on the map and in the tables."));
  }

  /** Ask for a scenario version's map, versions and content (what opening it needs), to be used by the next
   * `openScenario` of the same version. */
  private prefetch(id: string, version: number | null): void {
    const token = this.token as string;
    const calls: Prefetched = { key: `${id}/${version}`, geojson: api.geojson(token, id, version),
                                versions: api.versions(token, id), scenario: api.scenario(token, id, version) };
    for (const call of [calls.geojson, calls.versions, calls.scenario]) call.catch(() => undefined);  // handled where awaited
    this.prefetched = calls;
  }

  private async openScenario(id: string, version: number | null): Promise<void> {
    const token = this.token as string;
    const summary = this.scenarios.find((s) => s.id === id);
    this.status(`Loading ${summary?.name ?? id}…`);
    let content: ScenarioContent;
    let record: ScenarioWithContent;
    const load = ++this.loads;
    const mapBox = document.getElementById("map");
    mapBox?.setAttribute("aria-busy", "true");  // until this load's map is drawn, fails or is superseded
    const settled = () => { if (load === this.loads) mapBox?.removeAttribute("aria-busy"); };
    // the map's GeoJSON is drawn by the server's document worker (the slowest call): asked for first, awaited last
    const ready = this.prefetched?.key === `${id}/${version}` ? this.prefetched : null;
    this.prefetched = null;
    const geojson = ready?.geojson ?? api.geojson(token, id, version);
    geojson.catch(() => undefined);  // handled where it is awaited
    try {
      const [versions, scenario] = await Promise.all([ready?.versions ?? api.versions(token, id),
                                                      ready?.scenario ?? api.scenario(token, id, version)]);
      content = scenario.content;
      record = scenario;
      this.showVersions(id, versions.map((v) => ({ ...v })), version ?? summary?.version ?? null);
    } catch (error) {
      settled();
      this.handle(error);
      return;
    }
    if (load !== this.loads) return;  // another scenario was opened meanwhile
    performance.mark("scenario-received");
    const crumb = document.getElementById("crumb") as HTMLElement;
    clear(crumb);
    append(crumb, h("span", { class: "scenario-title", id: "scenario-title" }, summary?.name ?? id),
           h("span", { class: "meta" }, version !== null ? `version ${version}` : `version ${summary?.version ?? "?"} (latest)`));
    // the tables first, from the scenario's content (the page's first meaningful paint), then the map
    this.openScenarioId = id;
    this.buildTables(content);
    this.buildEditor(record);
    this.scenarioPanel?.setOpen(record);
    this.buildRunPanel(id, version);
    this.status(`${summary?.name ?? id}: ${this.counts()}; drawing the map…`);
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));  // the frame is painted
    performance.mark("tables-drawn");
    for (const table of Object.values(this.tables)) table.draw();  // the tables of the other tabs
    let collection: FeatureCollection;
    try {
      collection = await geojson;
    } catch (error) {
      settled();
      this.handle(error);
      return;
    }
    const map = this.map;
    if (map === null || load !== this.loads) {
      settled();
      return;
    }
    try {
      await map.setScenario(collection);
    } catch (error) {  // the busy mark must not outlive a map that could not be drawn
      settled();
      this.handle(error);
      return;
    }
    map.map.once("idle", () => { performance.mark("map-drawn"); settled(); });  // its data tiled and the frame drawn
    this.status(`${summary?.name ?? id}: ${this.counts()}`);
  }

  private counts(): string {
    const n = (kind: TableKind) => formatValue(this.rows[kind].length);
    return `${n("sites")} sites, ${n("links")} links, ${n("candidates")} candidate routes`;
  }

  private showVersions(id: string, versions: { version: number; created_at: string; created_by: string; name: string }[],
                       current: number | null): void {
    const li = document.querySelector(`#scenario-list > li[data-id="${CSS.escape(id)}"]`);
    const list = li?.querySelector("ol.versions");
    if (!list) return;
    clear(list);
    for (const v of versions.slice().sort((a, b) => b.version - a.version)) {
      const link = h("a", { href: routeHash({ scenario: id, version: v.version }) }, `v${v.version}`);
      const item = h("li", { class: v.version === current ? "current" : undefined }, link,
        h("span", { class: "meta" }, ` ${v.created_at.slice(0, 16).replace("T", " ")} · ${v.created_by || "unknown"}`));
      list.append(item);
    }
  }

  // ------------------------------------------------------------------ tables and selection
  private buildTables(content: ScenarioContent): void {
    // a link's (and a candidate route's) SRLGs joined by ";", as the map's GeoJSON gives them
    const srlgsOf = new Map<string, string[]>();
    for (const g of content.srlgs ?? []) {
      for (const member of g.links ?? []) srlgsOf.set(member, [...(srlgsOf.get(member) ?? []), String(g.id)]);
    }
    const joined = (value: unknown) => (Array.isArray(value) ? value.join(";") : (value as Properties[string]) ?? null);
    const candidates = (content.candidates ?? []) as Properties[];
    const rows: Record<TableKind, Properties[]> = {
      sites: content.sites ?? [],
      links: (content.links ?? []).map((l) => ({ ...l, srlgs: (srlgsOf.get(String(l.id)) ?? []).join(";") })),
      candidates: candidates.map((c) => ({ ...c, srlgs: joined(c.srlgs) })),
      demands: content.demands ?? [],
      srlgs: (content.srlgs ?? []).map((g) => ({ ...g, links: null, link_count: (g.links ?? []).length,
                                                 members: (g.links ?? []).join(", ") })),
      metros: content.metros ?? [] };
    this.rows = rows;
    for (const kind of TABLE_KINDS) this.rowsById[kind] = new Map(rows[kind].map((r) => [String(r.id), r]));
    const tabs = document.getElementById("tabs") as HTMLElement;
    const pane = document.getElementById("table-pane") as HTMLElement;
    clear(tabs);
    clear(pane);
    this.tables = {};
    for (const kind of TABLE_KINDS) {
      const table = new DataTable(kind, COLUMNS[kind], rows[kind], (id) => this.select(kind, id, "table"));
      this.tables[kind] = table;
      const tab = h("button", { type: "button", role: "tab", id: `tab-${kind}`, "data-kind": kind },
        TAB_LABELS[kind], h("span", { class: "tab-count" }, formatValue(rows[kind].length)));
      tab.addEventListener("click", () => this.showTab(kind));
      tabs.append(tab);
      pane.append(table.element);
    }
    this.showTab(this.activeTab);
  }

  /** The Run tab beside the tables: the job form (for a role that may write), the scenario's jobs, a job. */
  private buildRunPanel(id: string, version: number | null): void {
    this.run?.dispose();
    const who = this.who as WhoAmI;
    const run = new RunPanel(this.token as string, id, version, who.can_write,
                             (job) => { location.hash = routeHash({ scenario: null, version: null, job }); },
                             (text, isError) => this.status(text, isError),
                             (job) => new ResultsView(this.token as string, job, this.map as ScenarioMap,
                                                      (names) => this.elementsOf(names),
                                                      (failure) => { location.hash = routeHash({ scenario: null, version: null, job: job.id, failure: failure ?? undefined }); },
                                                      (text, isError) => this.status(text, isError),
                                                      (period) => { location.hash = routeHash({ scenario: null, version: null, job: job.id, period: period ?? undefined }); },
                                                      (candidate) => this.map?.candidate(candidate)));
    this.run = run;
    const tab = h("button", { type: "button", role: "tab", id: "tab-run", "data-kind": "run" }, "Run");
    tab.addEventListener("click", () => this.showTab("run"));
    (document.getElementById("tabs") as HTMLElement).append(tab);
    (document.getElementById("table-pane") as HTMLElement).append(run.element);
    this.showTab(this.activeTab);
    void run.start();
  }

  /** What-if editing, for a role that may write (for any other role nothing of it is rendered): the Edit toggle
   * in the links table's tools, editable capacity cells, and the Changes tab with the pending change set. */
  private buildEditor(record: ScenarioWithContent): void {
    this.editor?.dispose();
    this.editor = null;
    for (const button of document.querySelectorAll(".edit-mode")) button.remove();
    void this.map?.showPending([]);
    if (!(this.who as WhoAmI).can_write) return;
    const pending = this.carried;
    this.carried = [];
    const editor = new Editor(this.token as string,
      { scenario: record.id, version: record.version, etag: record.etag, readOnly: record.read_only, content: record.content },
      pending, {
        saved: (scenario, version, forked) => void this.afterSave(scenario, version, forked),
        reload: (edits) => {
          this.carried = edits;
          void this.openLatest(record.id);
        },
        status: (text, isError) => this.status(text, isError),
        drawPending: (routes) => void this.map?.showPending(routes),
      }, () => { for (const kind of EDITED_TABLES) this.tables[kind]?.refresh(); });
    this.editor = editor;
    const links = this.tables.links as DataTable;
    links.cellEditor = (row, column) => (this.editing && column.key === "capacity_gbps" && this.editor
      ? this.editor.capacityCell(String(row.id), row.capacity_gbps) : null);
    for (const table of ["sites", "demands"] as CellTable[]) {
      (this.tables[table] as DataTable).cellEditor = (row, column) => (this.editing && this.editor
        && column.key in EDITABLE_CELLS[table] ? this.editor.cell(table, String(row.id), column.key, row[column.key]) : null);
    }
    for (const kind of EDITED_TABLES) {
      const toggle = h("button", { type: "button", class: "secondary edit-mode", id: kind === "links" ? "edit-mode" : `edit-mode-${kind}`,
                                   "aria-pressed": String(this.editing) }, "Edit what-if");
      toggle.addEventListener("click", () => this.setEditing(!this.editing));
      this.tables[kind]?.element.querySelector(".table-tools")?.append(toggle);
    }
    const tab = h("button", { type: "button", role: "tab", id: "tab-changes", "data-kind": "changes" }, "Changes");
    tab.addEventListener("click", () => this.showTab("changes"));
    (document.getElementById("tabs") as HTMLElement).append(tab);
    (document.getElementById("table-pane") as HTMLElement).append(editor.element);
    if (pending.length > 0) this.editing = true;
    this.setEditing(this.editing);
    if (pending.length > 0) this.showTab("changes");
  }

  private setEditing(on: boolean): void {
    this.editing = on;
    for (const toggle of document.querySelectorAll(".edit-mode")) {
      toggle.setAttribute("aria-pressed", String(on));
      toggle.textContent = on ? "Done editing" : "Edit what-if";
    }
    for (const kind of EDITED_TABLES) this.tables[kind]?.refresh();
  }

  private async afterSave(scenario: string, version: number, forked: boolean): Promise<void> {
    this.status(forked ? "Saved as a new scenario." : `Saved version ${version}.`);
    await this.loadScenarios();
    location.hash = routeHash({ scenario, version });
  }

  /** Reopen a scenario's latest version (after a conflict), whatever the URL said. */
  private async openLatest(id: string): Promise<void> {
    await this.loadScenarios();
    const route = { scenario: id, version: null };
    history.replaceState(null, "", routeHash(route));
    this.route = route;
    for (const li of document.querySelectorAll("#scenario-list > li")) {
      li.classList.toggle("open", li.getAttribute("data-id") === id);
    }
    await this.openScenario(id, null);
  }

  private showTab(kind: TableKind | "run" | "changes"): void {
    this.activeTab = kind;
    for (const [name, table] of Object.entries(this.tables)) {
      table.element.hidden = name !== kind;
      if (name === kind) table.draw();
      document.getElementById(`tab-${name}`)?.setAttribute("aria-selected", String(name === kind));
    }
    if (this.run) this.run.element.hidden = kind !== "run";
    document.getElementById("tab-run")?.setAttribute("aria-selected", String(kind === "run"));
    if (this.editor) this.editor.element.hidden = kind !== "changes";
    document.getElementById("tab-changes")?.setAttribute("aria-selected", String(kind === "changes"));
  }

  private select(kind: TableKind, id: string, from: "map" | "table"): void {
    for (const [name, table] of Object.entries(this.tables)) if (name !== kind) table.select(null, false);
    this.showTab(kind);
    this.tables[kind]?.select(id, from === "map");
    this.map?.highlight(this.onMap(kind, id), from === "table");
  }

  /** What a selected row is on the map: the element itself, a demand's two sites, an SRLG's links. */
  private onMap(kind: TableKind, id: string): Highlight {
    const row = this.rowsById[kind].get(id);
    if (kind === "sites" || kind === "links" || kind === "candidates") return { [kind]: [id] };
    if (row === undefined) return {};
    if (kind === "demands") return { sites: [String(row.src), String(row.dst)] };
    if (kind === "srlgs") {
      const members = String(row.members ?? "").split(", ").filter(Boolean);
      return { links: members, candidates: members };
    }
    return { point: [Number(row.lon), Number(row.lat)] };
  }

  /** The links and sites that a failure's named elements (link, SRLG or site ids, as the sweep names them) take
   * down in the open scenario: a link itself, an SRLG's member links, a site and the links that end at it. */
  private elementsOf(names: string[]): { links: string[]; sites: string[] } {
    const links = new Set<string>();
    const sites = new Set<string>();
    for (const name of names) {
      if (this.rowsById.links.has(name)) links.add(name);
      if (this.rowsById.sites.has(name)) {
        sites.add(name);
        for (const r of this.rows.links) if (r.site_a === name || r.site_b === name) links.add(String(r.id));
      }
      const srlg = this.rowsById.srlgs.get(name);
      for (const member of String(srlg?.members ?? "").split(", ").filter(Boolean)) links.add(member);
    }
    return { links: [...links], sites: [...sites] };
  }

  private handle(error: unknown): void {
    if (error instanceof ApiError && error.status === 401) {
      const text = message(error);
      forgetToken();
      this.token = null;
      this.showSignIn(text);
      return;
    }
    this.status(message(error), true);
  }
}

const root = document.getElementById("app");
if (root) {
  new Workspace(root).start().catch((error) => {
    root.append(h("p", { class: "error", role: "alert" }, `The workspace failed to start: ${String(error)}`));
  });
}
