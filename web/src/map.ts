// The map: MapLibre GL JS over the shipped Natural Earth land (no tiles, no glyphs, nothing remote). Sites are
// circles sized by GPUs or MW, links lines along their geometry (terrestrial and submarine apart), candidate
// routes dashed. Hover shows the element's numbers as the API sent them; a click selects it.

import { AttributionControl, LngLatBounds, Map as MapLibreMap, Marker, NavigationControl, Popup, ScaleControl } from "maplibre-gl";
import type { ExpressionSpecification, GeoJSONSource, LngLat, MapMouseEvent, StyleSpecification } from "maplibre-gl";
import "maplibre-gl/dist/maplibre-gl.css";
import { formatValue, h } from "./dom";
import type { Feature, FeatureCollection, Properties } from "./api";

export type ElementKind = "sites" | "links" | "candidates";
export type SiteSize = "gpus" | "mw";

/** What to highlight: ids of sites, links and candidate routes, or a point (lon, lat) to fly to. */
export interface Highlight {
  sites?: string[];
  links?: string[];
  candidates?: string[];
  point?: [number, number];
}

export const LAYER_GROUPS: { id: string; label: string; layers: string[] }[] = [
  { id: "sites", label: "Sites", layers: ["sites"] },
  { id: "terrestrial", label: "Terrestrial", layers: ["links-terrestrial"] },
  { id: "submarine", label: "Submarine", layers: ["links-submarine"] },
  { id: "candidates", label: "Candidates", layers: ["candidates"] },
  { id: "land", label: "Land", layers: ["land"] },
];

const COLORS = { water: "#0d1b26", land: "#1f3142", border: "#2d4358", terrestrial: "#4cc3ff",
                 submarine: "#b58cff", candidate: "#ffb648", pending: "#ffffff", site: "#f4f7fa", selected: "#ffe14d", failed: "#ff3b5c" };

/** The utilisation colour scale of a result view: each band's lower edge (a fraction) and colour, low to high. */
export const UTILISATION_BANDS: { from: number; color: string; label: string }[] = [
  { from: 0, color: "#2e7d5b", label: "< 25 %" },
  { from: 0.25, color: "#8bc34a", label: "25–50 %" },
  { from: 0.5, color: "#ffd54f", label: "50–75 %" },
  { from: 0.75, color: "#ff9800", label: "75–90 %" },
  { from: 0.9, color: "#f4511e", label: "90–100 %" },
  { from: 1.0, color: "#d500f9", label: "> 100 % (overloaded)" },
];
const NO_VALUE = "#5b6b7a";
const POPUP_OFFSET_PX = 14;  // a hover card's distance from the pointer

/** A link's figures from a result, as the API served them (utilisation a fraction; loads in Gb/s). */
export interface LinkResult {
  utilisation: number | null;
  [key: string]: string | number | null;
}

/** What a result view draws: per-link figures (colouring the links) and failed links and sites. */
export interface ResultOverlay {
  links: Map<string, LinkResult>;
  failedLinks?: string[];
  failedSites?: string[];
}

/** Where a roadmap's build stands in the period shown: online in an earlier period, online in this one, or
 * committed (bought) by this period and online later. */
export type BuildState = "built" | "online" | "committed";

export const BUILD_STATE_COLORS: Record<BuildState, string> = { built: "#36d399", online: "#ff7a1a", committed: "#f472b6" };

/** A roadmap build drawn on a period's map: a new route along its geometry, an upgraded link (drawn wide). */
export interface PeriodBuild {
  id: string;
  action: string;
  state: BuildState;
  label: string;
  geometry: Feature["geometry"];
}

/** A site that gains GPUs by (or is committed GPUs in) the period shown, with its label. */
export interface PeriodSite {
  id: string;
  state: BuildState;
  label: string;
  coordinates: [number, number];
}

/** What a roadmap period draws: the period's own map (`GET v1/jobs/{id}/periods/{period}/map?format=geojson`), the
 * builds and the sites that gained GPUs, each with its state. */
export interface PeriodView {
  collection: FeatureCollection;
  builds: PeriodBuild[];
  sites: PeriodSite[];
}

const PERIOD_LAYERS = ["period-builds", "period-committed", "period-sites"];

function stateColour(): ExpressionSpecification {
  return ["match", ["get", "state"], "built", BUILD_STATE_COLORS.built, "online", BUILD_STATE_COLORS.online,
          BUILD_STATE_COLORS.committed] as ExpressionSpecification;
}

function utilisationColour(): ExpressionSpecification {
  const steps: unknown[] = [];
  for (const band of UTILISATION_BANDS.slice(1)) steps.push(band.from, band.color);
  return ["case", ["==", ["typeof", ["get", "utilisation"]], "number"],
          ["step", ["get", "utilisation"], UTILISATION_BANDS[0].color, ...steps], NO_VALUE] as ExpressionSpecification;
}
const INTERACTIVE = ["sites", "links-terrestrial", "links-submarine", "candidates"];
const EMPTY: FeatureCollection = { type: "FeatureCollection", features: [] };

const HOVER_FIELDS: Record<ElementKind, [string, string][]> = {
  sites: [["id", "id"], ["kind", "kind"], ["region", "region"], ["metro", "metro"], ["gpus_installed", "GPUs installed"],
          ["gpus_max", "GPUs max"], ["power_available_mw", "power available (MW)"], ["power_max_mw", "power max (MW)"]],
  links: [["id", "id"], ["kind", "kind"], ["cable_system", "cable system"], ["site_a", "from"], ["site_b", "to"],
          ["capacity_gbps", "capacity (Gb/s)"], ["length_km", "length (km)"], ["latency_ms", "latency (ms)"]],
  candidates: [["id", "id"], ["kind", "kind"], ["link_kind", "link kind"], ["cable_system", "cable system"],
               ["site_a", "from"], ["site_b", "to"], ["module_gbps", "module (Gb/s)"], ["max_modules", "max modules"],
               ["length_km", "length (km)"], ["latency_ms", "latency (ms)"], ["module_cost_usd", "module cost (USD)"]],
};

function kindOfLayer(layer: string): ElementKind {
  return layer === "sites" ? "sites" : layer === "candidates" ? "candidates" : "links";
}

function style(): StyleSpecification {
  const selected = ["==", ["get", "id"], ""] as ExpressionSpecification;
  return {
    version: 8,
    sources: {
      land: { type: "geojson", data: EMPTY, attribution: "Natural Earth (public domain)" },
      links: { type: "geojson", data: EMPTY },
      candidates: { type: "geojson", data: EMPTY },
      sites: { type: "geojson", data: EMPTY },
      builds: { type: "geojson", data: EMPTY },
      "gpu-sites": { type: "geojson", data: EMPTY },
      pending: { type: "geojson", data: EMPTY },
    },
    layers: [
      { id: "water", type: "background", paint: { "background-color": COLORS.water } },
      { id: "land", type: "fill", source: "land", paint: { "fill-color": COLORS.land, "fill-outline-color": COLORS.border } },
      { id: "candidates", type: "line", source: "candidates",
        paint: { "line-color": COLORS.candidate, "line-width": 1.6, "line-dasharray": [2, 2], "line-opacity": 0.85 } },
      { id: "links-terrestrial", type: "line", source: "links", filter: ["==", ["get", "kind"], "terrestrial"],
        paint: { "line-color": COLORS.terrestrial, "line-width": 1.8, "line-opacity": 0.9 } },
      { id: "links-submarine", type: "line", source: "links", filter: ["!=", ["get", "kind"], "terrestrial"],
        paint: { "line-color": COLORS.submarine, "line-width": 1.8, "line-opacity": 0.9 } },
      // a roadmap period's builds: an upgrade as a wide band under its link, a new route along its route; committed
      // but not yet online dashed
      { id: "period-builds", type: "line", source: "builds", filter: ["!=", ["get", "state"], "committed"],
        paint: { "line-color": stateColour(), "line-opacity": 0.9,
                 "line-width": ["case", ["==", ["get", "action"], "upgrade"], 8, 4] } },
      { id: "period-committed", type: "line", source: "builds", filter: ["==", ["get", "state"], "committed"],
        paint: { "line-color": stateColour(), "line-width": 3, "line-dasharray": [1.5, 1.2] } },
      // candidate routes of the what-if changes, not saved yet: a dashed line between their sites
      { id: "pending-candidates", type: "line", source: "pending",
        paint: { "line-color": COLORS.pending, "line-width": 2.4, "line-dasharray": [3, 2] } },
      { id: "failed-links", type: "line", source: "links", filter: selected,
        paint: { "line-color": COLORS.failed, "line-width": 3.5, "line-dasharray": [1, 1.2] } },
      { id: "selected-line", type: "line", source: "links", filter: selected,
        paint: { "line-color": COLORS.selected, "line-width": 5 } },
      { id: "selected-candidate", type: "line", source: "candidates", filter: selected,
        paint: { "line-color": COLORS.selected, "line-width": 5, "line-dasharray": [2, 1] } },
      { id: "sites", type: "circle", source: "sites",
        paint: { "circle-color": COLORS.site, "circle-opacity": 0.8, "circle-radius": 4,
                 "circle-stroke-color": COLORS.water, "circle-stroke-width": 1 } },
      { id: "period-sites", type: "circle", source: "gpu-sites",
        paint: { "circle-color": "rgba(0,0,0,0)", "circle-radius": 10, "circle-stroke-color": stateColour(),
                 "circle-stroke-width": 3 } },
      { id: "failed-sites", type: "circle", source: "sites", filter: selected,
        paint: { "circle-color": COLORS.failed, "circle-radius": 7, "circle-stroke-color": COLORS.water,
                 "circle-stroke-width": 1.5 } },
      { id: "selected-site", type: "circle", source: "sites", filter: selected,
        paint: { "circle-color": "rgba(0,0,0,0)", "circle-radius": 12, "circle-stroke-color": COLORS.selected,
                 "circle-stroke-width": 3 } },
    ],
  };
}

/** The map of one scenario version; `onSelect` is called with the kind and id of a clicked element. */
export class ScenarioMap {
  readonly map: MapLibreMap;
  private readonly popup = new Popup({ closeButton: false, closeOnClick: false, maxWidth: "320px", className: "hover",
                                          offset: POPUP_OFFSET_PX });
  private readonly ready: Promise<void>;
  private features: Record<ElementKind, Map<string, Feature>> = { sites: new Map(), links: new Map(), candidates: new Map() };
  private maxima = { gpus: 1, mw: 1 };
  private siteSize: SiteSize = "gpus";
  private centreLon = 10;
  private overlay: ResultOverlay | null = null;
  /** The features of the roadmap period shown (null: the scenario's own). */
  private period: Record<ElementKind, Map<string, Feature>> | null = null;
  private periodLabels: Marker[] = [];
  private periodBuilds = new Map<string, PeriodBuild | PeriodSite>();

  constructor(container: HTMLElement, private readonly onSelect: (kind: ElementKind, id: string) => void) {
    this.map = new MapLibreMap({ container, style: style(), center: [10, 25], zoom: 1.15, minZoom: 0.5, maxZoom: 12,
                                 attributionControl: false, renderWorldCopies: true, dragRotate: false,
                                 pitchWithRotate: false, fadeDuration: 0,
                                 // keep the drawn frame so "Download PNG" can read the canvas
                                 canvasContextAttributes: { preserveDrawingBuffer: true } });
    this.map.addControl(new NavigationControl({ showCompass: false }), "top-right");
    this.map.addControl(new ScaleControl({ unit: "metric" }), "bottom-left");
    this.map.addControl(new AttributionControl({ compact: true }), "bottom-right");
    this.ready = new Promise((resolve) => this.map.once("load", () => resolve()));
    this.map.on("mousemove", (event) => this.hover(event));
    this.map.on("mouseout", () => this.popup.remove());
    this.map.on("click", (event) => this.click(event));
  }

  /** Draw the land polygons (the API's basemap). */
  async setBasemap(land: FeatureCollection): Promise<void> {
    await this.ready;
    (this.map.getSource("land") as GeoJSONSource).setData(land as never);
  }

  /** Draw a scenario version's GeoJSON (sites, links, candidate routes, as `GET .../map?format=geojson` gives). */
  async setScenario(collection: FeatureCollection): Promise<void> {
    await this.ready;
    this.features = byKind(splitCollection(collection));
    if (this.period !== null) await this.showPeriod(null);  // a new scenario: no period drawn on it
    (this.map.getSource("pending") as GeoJSONSource).setData(EMPTY as never);  // nor anyone's pending changes
    this.draw();
    await this.sizeSitesBy(this.siteSize);
    if (this.overlay !== null) await this.showResult(null);  // a new scenario: no result drawn on it yet
    this.highlight({});
    this.fitScenario();
  }

  /** Colour the links by a result's utilisation (the API's figure, never recomputed here) and draw failed links
   * and sites as failed; `null` goes back to the scenario's own colours. Hover then shows the result's figures. */
  async showResult(overlay: ResultOverlay | null): Promise<void> {
    await this.ready;
    this.overlay = overlay;
    const links = [...this.shown().links.values()].map((f) => {
      const figures = overlay?.links.get(String(f.properties.id));
      return figures ? { ...f, properties: { ...f.properties, ...figures } } : f;
    });
    (this.map.getSource("links") as GeoJSONSource).setData({ type: "FeatureCollection", features: links } as never);
    for (const layer of ["links-terrestrial", "links-submarine"]) {
      const own = layer === "links-terrestrial" ? COLORS.terrestrial : COLORS.submarine;
      this.map.setPaintProperty(layer, "line-color", overlay ? utilisationColour() : own);
      this.map.setPaintProperty(layer, "line-width", overlay ? 2.6 : 1.8);
    }
    const filter = (ids: string[] | undefined) => ["in", ["get", "id"], ["literal", ids ?? []]] as ExpressionSpecification;
    this.map.setFilter("failed-links", filter(overlay?.failedLinks));
    this.map.setFilter("failed-sites", filter(overlay?.failedSites));
  }

  /** Draw a roadmap period (its own map: the links and routes built by then, the GPUs installed, with each build and
   * GPU site in its state's colour and labelled) in place of the scenario; `null` goes back to the scenario. */
  async showPeriod(view: PeriodView | null): Promise<void> {
    await this.ready;
    this.period = view === null ? null : byKind(splitCollection(view.collection));
    for (const marker of this.periodLabels) marker.remove();
    this.periodLabels = [];
    this.periodBuilds = new Map();
    const builds = (view?.builds ?? []).map((b) => ({ type: "Feature", geometry: b.geometry,
                                                      properties: { id: b.id, action: b.action, state: b.state } }));
    const sites = (view?.sites ?? []).map((s) => ({ type: "Feature", geometry: { type: "Point", coordinates: s.coordinates },
                                                    properties: { id: s.id, state: s.state } }));
    for (const b of [...(view?.builds ?? []), ...(view?.sites ?? [])]) this.periodBuilds.set(b.id, b);
    (this.map.getSource("builds") as GeoJSONSource).setData({ type: "FeatureCollection", features: builds } as never);
    (this.map.getSource("gpu-sites") as GeoJSONSource).setData({ type: "FeatureCollection", features: sites } as never);
    for (const site of view?.sites ?? []) {
      const element = h("div", { class: `gpu-label state-${site.state}`, "data-site": site.id }, site.label);
      this.periodLabels.push(new Marker({ element, anchor: "left", offset: [14, 0] }).setLngLat(site.coordinates).addTo(this.map));
    }
    for (const layer of ["links-terrestrial", "links-submarine"]) {
      this.map.setPaintProperty(layer, "line-opacity", view === null ? 0.9 : 0.5);
    }
    this.draw();
    await this.sizeSitesBy(this.siteSize);
    if (this.overlay !== null) await this.showResult(this.overlay);
  }

  /** Draw the what-if changes' candidate routes, not saved yet, as dashed lines between their sites (none: `[]`). */
  async showPending(routes: { id: string; site_a: string; site_b: string; coordinates: [number, number][] }[]): Promise<void> {
    await this.ready;
    const features = routes.map((r) => ({ type: "Feature", geometry: { type: "LineString", coordinates: r.coordinates },
                                          properties: { id: r.id, site_a: r.site_a, site_b: r.site_b, pending: true } }));
    (this.map.getSource("pending") as GeoJSONSource).setData({ type: "FeatureCollection", features } as never);
  }

  /** The scenario's candidate route of that id (its GeoJSON feature), drawn or not. */
  candidate(id: string): Feature | undefined {
    return this.features.candidates.get(id);
  }

  /** The features drawn now: the roadmap period's, or the scenario's. */
  private shown(): Record<ElementKind, Map<string, Feature>> {
    return this.period ?? this.features;
  }

  /** Put the features drawn now into the map's sources, and size sites against their largest. */
  private draw(): void {
    const shown = this.shown();
    for (const kind of ["sites", "links", "candidates"] as ElementKind[]) {
      (this.map.getSource(kind) as GeoJSONSource).setData({ type: "FeatureCollection", features: [...shown[kind].values()] } as never);
    }
    const values = (key: string) => [...shown.sites.values()].map((f) => Number(f.properties[key] ?? 0)).filter(Number.isFinite);
    this.maxima = { gpus: Math.max(1, ...values("gpus_installed")), mw: Math.max(1, ...values("power_available_mw")) };
  }

  /** The map as drawn now, as a PNG data URL (the canvas keeps its frame: `preserveDrawingBuffer`). */
  async snapshot(): Promise<string> {
    await this.ready;
    await new Promise<void>((resolve) => {
      this.map.once("idle", () => resolve());
      this.map.triggerRepaint();
    });
    return this.map.getCanvas().toDataURL("image/png");
  }

  /** Size the site circles by installed GPUs or available power (area proportional to the value). */
  async sizeSitesBy(size: SiteSize): Promise<void> {
    await this.ready;
    this.siteSize = size;
    const key = size === "gpus" ? "gpus_installed" : "power_available_mw";
    const max = size === "gpus" ? this.maxima.gpus : this.maxima.mw;
    this.map.setPaintProperty("sites", "circle-radius",
      ["+", 3, ["*", 15, ["sqrt", ["/", ["max", 0, ["to-number", ["coalesce", ["get", key], 0]]], max]]]]);
  }

  /** Show or hide a layer group of LAYER_GROUPS. */
  async setGroupVisible(group: string, visible: boolean): Promise<void> {
    await this.ready;
    for (const layer of LAYER_GROUPS.find((g) => g.id === group)?.layers ?? []) {
      this.map.setLayoutProperty(layer, "visibility", visible ? "visible" : "none");
    }
  }

  /** Centre the world on the Pacific (lon 150) or the Atlantic (lon -20). */
  centreOn(ocean: "pacific" | "atlantic"): void {
    this.centreLon = ocean === "pacific" ? 160 : 10;
    this.fitScenario();
  }

  /** Highlight elements (sites, links, candidate routes; none when empty) and fly to them when asked, or to
   * `point` when no element has a geometry here (a metro). */
  highlight(target: Highlight, fly = false): void {
    const filter = (ids: string[] | undefined) => ["in", ["get", "id"], ["literal", ids ?? []]] as ExpressionSpecification;
    this.map.setFilter("selected-site", filter(target.sites));
    this.map.setFilter("selected-line", filter(target.links));
    this.map.setFilter("selected-candidate", filter(target.candidates));
    if (fly) this.frame(target);
  }

  /** Fly to elements (or to `point` when none of them has a geometry here) without selecting them. */
  frame(target: Highlight): void {
    const points: number[][] = [];
    for (const kind of ["sites", "links", "candidates"] as ElementKind[]) {
      for (const id of target[kind] ?? []) {
        const feature = this.shown()[kind].get(id) ?? this.features[kind].get(id);
        if (feature !== undefined) points.push(...unwrapped(coordinates(feature), points.length ? points[0][0] : null));
      }
    }
    if (points.length === 0 && target.point) points.push(target.point);
    if (points.length === 1) {
      this.map.flyTo({ center: points[0] as [number, number], zoom: Math.max(this.map.getZoom(), 4) });
    } else if (points.length > 1) {
      const bounds = new LngLatBounds(points[0] as [number, number], points[0] as [number, number]);
      for (const p of points) bounds.extend(p as [number, number]);
      this.map.fitBounds(bounds, { padding: 60, maxZoom: 7 });
    }
  }

  /** Show the whole scenario: every site, the world centred on the chosen ocean. */
  fitScenario(): void {
    const lats = [...this.features.sites.values()].map((f) => (f.geometry.coordinates as number[])[1]);
    if (lats.length === 0) return;
    const c = this.centreLon;
    this.map.fitBounds([[c - 175, Math.max(-70, Math.min(...lats) - 4)], [c + 175, Math.min(80, Math.max(...lats) + 4)]],
                       { padding: 10, animate: false });
  }

  resize(): void {
    this.map.resize();
  }

  private at(event: MapMouseEvent) {
    const { x, y } = event.point;
    const layers = [...INTERACTIVE, ...PERIOD_LAYERS].filter((id) => this.map.getLayoutProperty(id, "visibility") !== "none");
    const found = this.map.queryRenderedFeatures([[x - 5, y - 5], [x + 5, y + 5]], { layers });
    return found.find((f) => f.layer.id === "sites") ?? found.find((f) => f.layer.id === "period-sites") ?? found[0];
  }

  private hover(event: MapMouseEvent): void {
    const feature = this.at(event);
    this.map.getCanvas().style.cursor = feature ? "pointer" : "";
    if (!feature) {
      this.popup.remove();
      return;
    }
    const id = String(feature.properties.id);
    const build = PERIOD_LAYERS.includes(feature.layer.id) ? this.periodBuilds.get(id) : undefined;
    if (build !== undefined) {
      this.showCard(event.lngLat, h("div", { class: "hover-card" }, h("strong", {}, build.label)));
      return;
    }
    const kind = kindOfLayer(feature.layer.id);
    const props = this.shown()[kind].get(id)?.properties ?? this.features[kind].get(id)?.properties ?? (feature.properties as Properties);
    const card = hoverCard(kind, props);
    const figures = kind === "links" ? this.overlay?.links.get(id) : undefined;
    const failed = (kind === "links" ? this.overlay?.failedLinks : kind === "sites" ? this.overlay?.failedSites : [])
      ?.includes(id);
    // the result's figures first, under the name: they are what a result view is read for
    if (figures) card.insertBefore(resultCard(figures), card.children[1] ?? null);
    if (failed) card.insertBefore(h("p", { class: "failed-note" }, "failed in this state"), card.children[1] ?? null);
    this.showCard(event.lngLat, card);
  }

  /** Show a hover card at `at`: above or below the pointer, where it fits (MapLibre's own choice), or beside it when
   * it is taller than the room on either side (a long result card on a short map pane would run off its edge). */
  private showCard(at: LngLat, card: HTMLElement): void {
    this.popup.options.anchor = undefined;
    this.popup.setLngLat(at).setDOMContent(card).addTo(this.map);
    const point = this.map.project(at);
    const box = this.map.getContainer();
    const tall = this.popup.getElement().offsetHeight + POPUP_OFFSET_PX;
    if (tall > point.y && tall > box.clientHeight - point.y) {
      this.popup.options.anchor = point.x > box.clientWidth / 2 ? "right" : "left";
      this.popup.setLngLat(at);  // laid out again beside the pointer
    }
  }

  private click(event: MapMouseEvent): void {
    const feature = this.at(event);
    if (!feature) return;
    const id = String(feature.properties.id);
    const layer = feature.layer.id;
    // a build selects its link (or, not yet built, its candidate route), a GPU site its site
    const kind = layer === "period-sites" ? "sites" : PERIOD_LAYERS.includes(layer)
      ? (this.features.links.has(id) || !this.features.candidates.has(id) ? "links" : "candidates") : kindOfLayer(layer);
    this.onSelect(kind, id);
  }
}

/** A scenario's GeoJSON split by element kind (the API's `feature_type`). */
function splitCollection(collection: FeatureCollection): Record<ElementKind, Feature[]> {
  const split: Record<ElementKind, Feature[]> = { sites: [], links: [], candidates: [] };
  for (const feature of collection.features) {
    const type = feature.properties.feature_type;
    const kind: ElementKind | null = type === "site" ? "sites" : type === "link" ? "links" : type === "candidate" ? "candidates" : null;
    if (kind !== null) split[kind].push(feature);
  }
  return split;
}

function byKind(split: Record<ElementKind, Feature[]>): Record<ElementKind, Map<string, Feature>> {
  return { sites: new Map(split.sites.map((f) => [String(f.properties.id), f])),
           links: new Map(split.links.map((f) => [String(f.properties.id), f])),
           candidates: new Map(split.candidates.map((f) => [String(f.properties.id), f])) };
}

function hoverCard(kind: ElementKind, props: Properties): HTMLElement {
  const rows = HOVER_FIELDS[kind].filter(([key]) => props[key] !== undefined && props[key] !== null && props[key] !== "")
    .map(([key, label]) => h("tr", {}, h("th", { scope: "row" }, label), h("td", {}, formatValue(props[key]))));
  return h("div", { class: "hover-card" }, h("strong", {}, formatValue(props.name ?? props.id)), h("table", {}, ...rows));
}

/** A link's result figures (utilisation as a percentage of the API's fraction, loads as sent). */
function resultCard(figures: LinkResult): HTMLElement {
  const rows = Object.entries(figures).map(([key, value]) => {
    const shown = key === "utilisation" && typeof value === "number" ? `${formatValue(value * 100)} %` : formatValue(value);
    return h("tr", { "data-figure": key }, h("th", { scope: "row" }, key.replaceAll("_", " ")), h("td", {}, shown));
  });
  return h("table", { class: "result-figures" }, ...rows);
}

/** A feature's points as GeoJSON gives them. */
function coordinates(feature: Feature): number[][] {
  const g = feature.geometry;
  return g.type === "Point" ? [g.coordinates as number[]]
    : g.type === "LineString" ? (g.coordinates as number[][])
    : g.type === "MultiLineString" ? (g.coordinates as number[][][]).flat() : [];
}

/** Points with longitudes unwrapped (each within 180 degrees of the one before, the first near `start`), so a
 * route across the antimeridian stays in one piece. */
function unwrapped(points: number[][], start: number | null): number[][] {
  const out: number[][] = [];
  let previous = start;
  for (const [lon, lat] of points) {
    let x = lon;
    if (previous !== null) {
      while (x - previous > 180) x -= 360;
      while (previous - x > 180) x += 360;
    }
    out.push([x, lat]);
    previous = x;
  }
  return out;
}
