// What-if editing: a planner's pending change set over the open scenario version (link capacities, a site's GPUs and
// available MW, a demand's Gb/s and latency SLO, cell by cell; demand scaled by traffic class or region, GPUs moved
// between sites), shown as a list with undo. Every change is checked as it is
// made by the API's dry run (POST v1/scenarios/{id}/validate), and the 422 problem's errors are shown beside the
// cell or change they name. Saving is a new version guarded by If-Match on the opened version's ETag (a 409 or 412
// means someone else saved: reload, keeping the changes) or a fork into a new scenario. Nothing is edited in place,
// and the API is the only validator: this file holds no rule of what a valid scenario is.

import { api, ApiError } from "./api";
import type { ProblemItem, Properties, ScenarioContent, ScenarioValidation } from "./api";
import { clear, formatValue, h } from "./dom";
import { problemLine } from "./serverjobs";
import { addCandidate, addModules, candidateForm, failForm, modulesForm } from "./whatif";
import type { WhatIfEdit } from "./whatif";

const CHECK_DELAY_MS = 300;

/** The cells of sites and demands that can be edited in their tables, with the words a change is described in. */
export const EDITABLE_CELLS: Record<"sites" | "demands", Record<string, string>> = {
  sites: { gpus_installed: "GPUs installed", power_available_mw: "available MW" },
  demands: { demand_gbps: "demand Gb/s", slo_rtt_ms: "latency SLO (RTT ms)" },
};

export type CellTable = keyof typeof EDITABLE_CELLS;

export type Edit =
  | { kind: "capacity"; link: string; capacity_gbps: number | null; was: unknown }
  | { kind: "cell"; table: CellTable; record: string; field: string; value: number | null; was: unknown }
  | { kind: "scale-demand"; by: "traffic_class" | "region"; value: string; factor: number | null }
  | { kind: "move-gpus"; from: string; to: string; gpus: number | null }
  | WhatIfEdit;

/** What the editor needs from the workspace around it. */
export interface EditorHost {
  /** A version (or a fork) was saved: open it. */
  saved(scenario: string, version: number, forked: boolean): void;
  /** Reopen the scenario's latest version and re-apply these pending changes to it. */
  reload(pending: Edit[]): void;
  status(text: string, isError: boolean): void;
  /** Draw the pending (unsaved) candidate routes on the map, each as a line between its two sites. */
  drawPending?(routes: PendingRoute[]): void;
}

/** A candidate route of the pending changes, not saved yet: its id and its two sites' points. */
export interface PendingRoute {
  id: string;
  site_a: string;
  site_b: string;
  coordinates: [number, number][];
}

/** The opened version the changes apply to. */
export interface EditBase {
  scenario: string;
  version: number;
  etag: string;
  readOnly: boolean;
  content: ScenarioContent;
}

type Key = string;
const key = (table: string, record: string, field: string): Key => `${table}\u0000${record}\u0000${field}`;

/** The fields of the scenario a change writes: where the API's problems about it land. */
function touches(edit: Edit, content: ScenarioContent): Key[] {
  if (edit.kind === "capacity") return [key("links", edit.link, "capacity_gbps")];
  if (edit.kind === "cell") return [key(edit.table, edit.record, edit.field)];
  if (edit.kind === "move-gpus") return [key("sites", edit.from, "gpus_installed"), key("sites", edit.to, "gpus_installed")];
  if (edit.kind === "add-modules") return ["capacity_gbps", "module_gbps", "max_capacity_gbps"].map((f) => key("links", edit.link, f));
  if (edit.kind === "add-candidate") {
    return ["id", ...Object.keys(edit.record), "site_a", "site_b"].map((f) => key("candidates", String(edit.record.id), f));
  }
  return matchingDemands(edit, content).map((d) => key("demands", String(d.id), "demand_gbps"));
}

function matchingDemands(edit: Extract<Edit, { kind: "scale-demand" }>, content: ScenarioContent): Properties[] {
  const regionOf = new Map((content.sites ?? []).map((s) => [String(s.id), String(s.region)]));
  return (content.demands ?? []).filter((d) => edit.by === "traffic_class"
    ? String(d.traffic_class ?? "bulk") === edit.value : regionOf.get(String(d.src)) === edit.value);
}

/** The candidate scenario: the opened version with the changes applied in order (a copy; the base is untouched). */
export function applyEdits(base: ScenarioContent, edits: Edit[]): ScenarioContent {
  const content = structuredClone(base);
  const links = new Map((content.links ?? []).map((l) => [String(l.id), l]));
  const sites = new Map((content.sites ?? []).map((s) => [String(s.id), s]));
  const demands = new Map((content.demands ?? []).map((d) => [String(d.id), d]));
  for (const edit of edits) {
    if (edit.kind === "capacity") {
      const link = links.get(edit.link);
      if (link) link.capacity_gbps = edit.capacity_gbps;
    } else if (edit.kind === "cell") {
      const record = (edit.table === "sites" ? sites : demands).get(edit.record);
      if (record) record[edit.field] = edit.value;
    } else if (edit.kind === "add-modules") {
      addModules(links.get(edit.link), edit.modules);
    } else if (edit.kind === "add-candidate") {
      addCandidate(content, edit.record);
    } else if (edit.kind === "move-gpus") {
      const from = sites.get(edit.from);
      const to = sites.get(edit.to);
      if (from && to) {
        from.gpus_installed = Number(from.gpus_installed ?? 0) - (edit.gpus ?? 0);
        to.gpus_installed = Number(to.gpus_installed ?? 0) + (edit.gpus ?? 0);
      }
    } else {
      for (const d of matchingDemands(edit, content)) d.demand_gbps = edit.factor === null ? null : Number(d.demand_gbps) * edit.factor;
    }
  }
  return content;
}

function describe(edit: Edit): string {
  if (edit.kind === "capacity") {
    return `Link ${edit.link}: capacity ${formatValue(edit.was)} → ${edit.capacity_gbps === null ? "(empty)" : formatValue(edit.capacity_gbps)} Gb/s`;
  }
  if (edit.kind === "cell") {
    const what = EDITABLE_CELLS[edit.table][edit.field] ?? edit.field;
    return `${edit.table === "sites" ? "Site" : "Demand"} ${edit.record}: ${what} ${formatValue(edit.was)} → ` +
           `${edit.value === null ? "(empty)" : formatValue(edit.value)}`;
  }
  if (edit.kind === "move-gpus") return `Move ${formatValue(edit.gpus)} GPUs from ${edit.from} to ${edit.to}`;
  if (edit.kind === "add-modules") {
    return `Link ${edit.link}: add ${edit.modules === null ? "(empty)" : formatValue(edit.modules)} module(s) of ` +
           `${formatValue(edit.module_gbps)} Gb/s`;
  }
  if (edit.kind === "add-candidate") {
    const r = edit.record;
    return `New candidate route ${formatValue(r.id)}: ${formatValue(r.site_a)}–${formatValue(r.site_b)}, ${formatValue(r.kind)}, ` +
           `up to ${formatValue(r.max_modules)} × ${formatValue(r.module_gbps)} Gb/s`;
  }
  const what = edit.by === "traffic_class" ? `class ${edit.value}` : `region ${edit.value} (by source site)`;
  return `Scale demand of ${what} by ×${edit.factor === null ? "(empty)" : formatValue(edit.factor)}`;
}

function numberOrNull(input: HTMLInputElement): number | null {
  return input.value.trim() === "" || !Number.isFinite(input.valueAsNumber) ? null : input.valueAsNumber;
}

export class Editor {
  readonly element: HTMLElement;
  private edits: Edit[];
  private problems: ProblemItem[] = [];
  private readonly cellErrors = new Map<Key, HTMLElement>();
  private readonly list = h("ol", { class: "edit-list", id: "edit-list" });
  private readonly state = h("p", { class: "edit-state", id: "edit-state", "data-state": "idle", role: "status" });
  private readonly general = h("ul", { class: "edit-problems error", id: "edit-problems" });
  private readonly conflict = h("div", { class: "edit-conflict", id: "edit-conflict", role: "alert" });
  private readonly saveButton: HTMLButtonElement | null;
  private readonly forkButton: HTMLButtonElement;
  private readonly forkName: HTMLInputElement;
  private timer: number | undefined;
  private sequence = 0;
  private busy = false;

  constructor(private readonly token: string, private readonly base: EditBase, pending: Edit[],
              private readonly host: EditorHost, private readonly onChange: () => void) {
    this.edits = pending;
    this.conflict.hidden = true;
    this.saveButton = base.readOnly ? null
      : h("button", { type: "button", id: "edit-save" }, `Save as version ${base.version + 1}`);
    this.saveButton?.addEventListener("click", () => void this.save(false));
    this.forkName = h("input", { type: "text", id: "fork-name", "aria-label": "Name of the new scenario",
                                 value: `${base.content.name ?? "scenario"} (what-if)` });
    this.forkButton = h("button", { type: "button", id: "edit-fork", class: base.readOnly ? undefined : "secondary" },
                        "Fork into a new scenario");
    this.forkButton.addEventListener("click", () => void this.save(true));
    const undoAll = h("button", { type: "button", class: "secondary", id: "edit-undo-all" }, "Undo all");
    undoAll.addEventListener("click", () => this.setEdits([]));
    this.element = h("section", { class: "edit-panel", id: "edit-panel", "aria-label": "What-if changes" },
      h("div", { class: "edit-head" },
        h("h3", {}, `Pending changes to version ${base.version}`), undoAll),
      h("p", { class: "hint" }, base.readOnly
        ? "This scenario is shared and read-only: save the changes as a new scenario (a fork)."
        : "Nothing is edited in place: saving makes a new version, or a new scenario."),
      this.list, this.state, this.general, this.conflict,
      h("div", { class: "edit-save" }, this.saveButton, h("label", { class: "inline" }, "New scenario", this.forkName),
        this.forkButton),
      h("div", { class: "edit-forms" }, this.scaleForm(), this.moveForm(),
        modulesForm(base.content, (edit) => this.setEdits([...this.edits, edit])),
        candidateForm(base.content, (edit) => this.setEdits([...this.edits, edit])),
        failForm(token, base, (text, isError) => host.status(text, isError))));
    this.render();
    this.scheduleCheck();  // changes carried over a reload are checked against the new base at once
  }

  /** The pending changes (to carry across a reload). */
  pending(): Edit[] {
    return this.edits.slice();
  }

  /** The value a capacity cell shows: the pending change's, else the table's. */
  capacity(link: string, shown: unknown): unknown {
    const edit = this.edits.find((e) => e.kind === "capacity" && e.link === link);
    return edit && edit.kind === "capacity" ? edit.capacity_gbps : shown;
  }

  /** The editable capacity cell of a link: a number box and, beside it, the API's problem with that field. */
  capacityCell(link: string, shown: unknown): HTMLElement {
    const value = this.capacity(link, shown);
    const input = h("input", { type: "number", step: "any", class: "cell-edit", "data-edit": "capacity_gbps",
                               "data-id": link, "aria-label": `capacity of ${link} in Gb/s`,
                               value: value === null || value === undefined ? "" : String(value) });
    input.classList.toggle("changed", value !== shown);
    input.addEventListener("click", (event) => event.stopPropagation());
    input.addEventListener("keydown", (event) => event.stopPropagation());
    input.addEventListener("input", () => {
      const typed = numberOrNull(input);
      const rest = this.edits.filter((e) => !(e.kind === "capacity" && e.link === link));
      input.classList.toggle("changed", typed !== shown);
      this.setEdits(typed === shown ? rest : [...rest, { kind: "capacity", link, capacity_gbps: typed, was: shown }], false);
    });
    const error = h("span", { class: "field-error", "data-table": "links", "data-record": link,
                              "data-field": "capacity_gbps", role: "alert" });
    this.cellErrors.set(key("links", link, "capacity_gbps"), error);
    this.fillCellError(key("links", link, "capacity_gbps"), error);
    return h("span", { class: "cell-editor" }, input, error);
  }

  /** The editable cell of a site (GPUs installed, available MW) or a demand (Gb/s, latency SLO): a number box and,
   * beside it, the API's problem with that field. Emptying a latency SLO removes it (no SLO). */
  cell(table: CellTable, record: string, field: string, shown: unknown): HTMLElement {
    const pending = this.edits.find((e) => e.kind === "cell" && e.table === table && e.record === record && e.field === field);
    const value = pending && pending.kind === "cell" ? pending.value : shown;
    const input = h("input", { type: "number", step: "any", class: "cell-edit", "data-edit": field, "data-table": table,
                               "data-id": record, "aria-label": `${EDITABLE_CELLS[table][field] ?? field} of ${record}`,
                               value: value === null || value === undefined ? "" : String(value) });
    input.classList.toggle("changed", value !== shown);
    input.addEventListener("click", (event) => event.stopPropagation());
    input.addEventListener("keydown", (event) => event.stopPropagation());
    input.addEventListener("input", () => {
      const typed = numberOrNull(input);
      const same = typed === shown || (typed === null && (shown === null || shown === undefined));
      const rest = this.edits.filter((e) => !(e.kind === "cell" && e.table === table && e.record === record && e.field === field));
      input.classList.toggle("changed", !same);
      this.setEdits(same ? rest : [...rest, { kind: "cell", table, record, field, value: typed, was: shown }], false);
    });
    const k = key(table, record, field);
    const error = h("span", { class: "field-error", "data-table": table, "data-record": record, "data-field": field,
                              role: "alert" });
    this.cellErrors.set(k, error);
    this.fillCellError(k, error);
    return h("span", { class: "cell-editor" }, input, error);
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    this.sequence += 1;
  }

  // ------------------------------------------------------------------ forms
  private scaleForm(): HTMLElement {
    const content = this.base.content;
    const classes = [...new Set((content.demands ?? []).map((d) => String(d.traffic_class ?? "bulk")))].sort();
    const regions = [...new Set((content.sites ?? []).map((s) => String(s.region)))].sort();
    const by = h("select", { id: "scale-by", "aria-label": "Scale demand by" },
      h("option", { value: "traffic_class" }, "class"), h("option", { value: "region" }, "region"));
    const value = h("select", { id: "scale-value", "aria-label": "Class or region" });
    const fill = () => {
      clear(value);
      for (const v of by.value === "region" ? regions : classes) value.append(h("option", { value: v }, v));
    };
    by.addEventListener("change", fill);
    fill();
    const factor = h("input", { type: "number", step: "any", id: "scale-factor", value: "1.2", "aria-label": "Factor" });
    const add = h("button", { type: "submit", class: "secondary", id: "scale-add" }, "Add");
    const form = h("form", { class: "edit-form", id: "scale-form", novalidate: true },
      h("h4", {}, "Scale demand"), by, value, h("label", { class: "inline" }, "×", factor), add);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.setEdits([...this.edits, { kind: "scale-demand", by: by.value as "traffic_class" | "region", value: value.value,
                                      factor: numberOrNull(factor) }]);
    });
    return form;
  }

  private moveForm(): HTMLElement {
    const sites = (this.base.content.sites ?? []).map((s) => String(s.id)).sort();
    const options = (id: string) => {
      const select = h("select", { id, "aria-label": id === "move-from" ? "From site" : "To site" });
      for (const s of sites) select.append(h("option", { value: s }, s));
      return select;
    };
    const from = options("move-from");
    const to = options("move-to");
    const most = (this.base.content.sites ?? []).reduce<Properties | null>(
      (best, s) => (best === null || Number(s.gpus_installed ?? 0) > Number(best.gpus_installed ?? 0) ? s : best), null);
    if (most) from.value = String(most.id);  // start from the site with the most GPUs, to another site
    to.value = sites.find((s) => s !== from.value) ?? from.value;
    const gpus = h("input", { type: "number", step: "1", id: "move-gpus", value: "1000", "aria-label": "GPUs" });
    const form = h("form", { class: "edit-form", id: "move-form", novalidate: true },
      h("h4", {}, "Move GPUs"), gpus, h("label", { class: "inline" }, "from", from), h("label", { class: "inline" }, "to", to),
      h("button", { type: "submit", class: "secondary", id: "move-add" }, "Add"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.setEdits([...this.edits, { kind: "move-gpus", from: from.value, to: to.value, gpus: numberOrNull(gpus) }]);
    });
    return form;
  }

  // ------------------------------------------------------------------ changes and checks
  private setEdits(edits: Edit[], refreshTable = true): void {
    this.edits = edits;
    this.conflict.hidden = true;
    this.render();
    if (refreshTable) this.onChange();
    this.scheduleCheck();
  }

  private scheduleCheck(): void {
    window.clearTimeout(this.timer);
    this.sequence += 1;
    if (this.edits.length === 0) {
      this.showProblems([]);
      this.setState("idle", "No pending changes.");
      return;
    }
    this.setState("checking", "Checking with the server…");
    this.timer = window.setTimeout(() => void this.check(), CHECK_DELAY_MS);
  }

  private async check(): Promise<void> {
    const ticket = this.sequence;
    let result: ScenarioValidation;
    try {
      result = await api.validate(this.token, this.base.scenario, applyEdits(this.base.content, this.edits));
    } catch (error) {
      if (ticket !== this.sequence) return;
      if (error instanceof ApiError && error.status === 422) {
        this.showProblems(error.problems.length ? error.problems : [{ message: error.message }]);
        this.setState("invalid", `The server refuses these changes: ${error.problems.length || 1} problem(s).`);
      } else {
        this.showProblems([]);
        this.setState("error", `Could not check the changes: ${error instanceof Error ? error.message : String(error)}`);
      }
      return;
    }
    if (ticket !== this.sequence) return;
    this.showProblems([]);
    this.setState("valid", `Valid: ${formatValue(result.sites)} sites, ${formatValue(result.links)} links, ` +
                           `${formatValue(result.demands)} demands.`);
  }

  private setState(state: string, text: string): void {
    this.state.dataset.state = state;
    this.state.textContent = text;
    this.state.classList.toggle("error", state === "invalid" || state === "error");
    const blocked = this.busy || this.edits.length === 0 || state !== "valid";
    if (this.saveButton) this.saveButton.disabled = blocked;
    this.forkButton.disabled = blocked;
  }

  private showProblems(problems: ProblemItem[]): void {
    this.problems = problems;
    for (const [k, el] of this.cellErrors) {
      if (!el.isConnected) this.cellErrors.delete(k);
      else this.fillCellError(k, el);
    }
    this.render();
  }

  private problemsAt(k: Key): ProblemItem[] {
    return this.problems.filter((p) => key(p.table ?? "", p.record ?? "", p.field ?? "") === k);
  }

  private fillCellError(k: Key, el: HTMLElement): void {
    el.textContent = this.problemsAt(k).map((p) => p.message).join("; ");
    el.hidden = el.textContent === "";
  }

  private render(): void {
    clear(this.list);
    const placed = new Set<Key>();
    this.edits.forEach((edit, index) => {
      const undo = h("button", { type: "button", class: "secondary undo", "aria-label": `Undo: ${describe(edit)}` }, "Undo");
      undo.addEventListener("click", () => this.setEdits(this.edits.filter((_, i) => i !== index)));
      const keys = touches(edit, this.base.content);
      keys.forEach((k) => placed.add(k));
      const messages = keys.flatMap((k) => this.problemsAt(k).map((p) => `${p.record}: ${p.message}`));
      this.list.append(h("li", { "data-index": index, "data-kind": edit.kind }, h("span", {}, describe(edit)), undo,
        messages.length ? h("span", { class: "field-error", role: "alert" }, messages.slice(0, 3).join("; ") +
          (messages.length > 3 ? ` (and ${messages.length - 3} more)` : "")) : null));
    });
    if (this.edits.length === 0) this.list.append(h("li", { class: "empty" }, "No pending changes."));
    this.host.drawPending?.(this.pendingRoutes());
    clear(this.general);
    for (const p of this.problems) {
      if (placed.has(key(p.table ?? "", p.record ?? "", p.field ?? ""))) continue;
      this.general.append(h("li", {}, problemLine(p)));
    }
  }

  /** The candidate routes the pending changes add, each between its two sites (as the opened version places them). */
  private pendingRoutes(): PendingRoute[] {
    const sites = new Map((this.base.content.sites ?? []).map((s) => [String(s.id), s]));
    const routes: PendingRoute[] = [];
    for (const edit of this.edits) {
      if (edit.kind !== "add-candidate") continue;
      const a = sites.get(String(edit.record.site_a));
      const b = sites.get(String(edit.record.site_b));
      if (a === undefined || b === undefined) continue;
      const [ax, ay, bx, by] = [Number(a.lon), Number(a.lat), Number(b.lon), Number(b.lat)];
      if (![ax, ay, bx, by].every(Number.isFinite)) continue;
      // the shorter way round: across the antimeridian when that is nearer
      const east = bx - ax > 180 ? bx - 360 : ax - bx > 180 ? bx + 360 : bx;
      routes.push({ id: String(edit.record.id), site_a: String(edit.record.site_a), site_b: String(edit.record.site_b),
                    coordinates: [[ax, ay], [east, by]] });
    }
    return routes;
  }

  // ------------------------------------------------------------------ save
  private async save(fork: boolean): Promise<void> {
    const content = applyEdits(this.base.content, this.edits);
    this.busy = true;
    this.setState("saving", fork ? "Creating the new scenario…" : `Saving version ${this.base.version + 1}…`);
    try {
      const saved = fork ? await api.create(this.token, { ...content, name: this.forkName.value.trim() || content.name })
                         : await api.saveVersion(this.token, this.base.scenario, content, this.base.etag);
      this.busy = false;
      this.edits = [];
      this.host.saved(saved.id, saved.version, fork);
    } catch (error) {
      this.busy = false;
      if (error instanceof ApiError && (error.status === 409 || error.status === 412) && !fork) {
        this.showConflict();
        this.setState("conflict", "Not saved: the scenario changed on the server.");
      } else if (error instanceof ApiError && error.status === 422) {
        this.showProblems(error.problems.length ? error.problems : [{ message: error.message }]);
        this.setState("invalid", "Not saved: the server refuses these changes.");
      } else {
        this.setState("error", `Not saved: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private showConflict(): void {
    clear(this.conflict);
    const reload = h("button", { type: "button", id: "edit-reload" }, "Reload the latest version, keep my changes");
    reload.addEventListener("click", () => this.host.reload(this.pending()));
    this.conflict.append(h("p", {}, `Someone else saved a new version of this scenario after you opened version ` +
                                     `${this.base.version}, so yours was not saved (nothing was overwritten).`), reload);
    this.conflict.hidden = false;
  }
}
