// More what-if changes for the editor (web/src/edit.ts): add capacity modules to a link, add a candidate route, and
// fail a cable system or an SRLG. The first two are pending changes like the others (checked by the API's dry run,
// saved as a new version or a fork). A failure is not a change to the scenario, which has no link-down state: it
// runs a `failures` job (kind "list") on the opened version with that one state, and opens the job's failure state
// (`#/job/<id>/failure/<state>`), drawn by the results view (the failed links dashed red, the rest at the state's
// utilisation). This file holds no rule of what a valid scenario is: the API is the validator.

import { api, ApiError } from "./api";
import type { Properties, ScenarioContent } from "./api";
import { clear, formatValue, h } from "./dom";

export type WhatIfEdit =
  | { kind: "add-modules"; link: string; modules: number | null; module_gbps: unknown }
  | { kind: "add-candidate"; record: Properties };

/** The candidate kinds and link kinds the form offers (the scenario schema's choices; the API checks them). */
const CANDIDATE_KINDS = ["spectrum", "fibre_pair", "terrestrial", "backhaul", "cable"];
const LINK_KINDS = ["terrestrial", "submarine"];

function numberOrNull(input: HTMLInputElement): number | null {
  return input.value.trim() === "" || !Number.isFinite(input.valueAsNumber) ? null : input.valueAsNumber;
}

function select(id: string, label: string, values: string[], texts?: string[]): HTMLSelectElement {
  const el = h("select", { id, "aria-label": label });
  values.forEach((v, i) => el.append(h("option", { value: v }, texts?.[i] ?? v)));
  return el;
}

/** Add `modules` modules to a link of the candidate content: capacity + modules × the link's module_gbps (an empty
 * count empties the capacity, so the API's problem names it). */
export function addModules(link: Properties | undefined, modules: number | null): void {
  if (link === undefined) return;
  link.capacity_gbps = modules === null ? null : Number(link.capacity_gbps) + modules * Number(link.module_gbps);
}

/** Add a candidate route record to the candidate content (the table is created when the scenario has none). */
export function addCandidate(content: ScenarioContent, record: Properties): void {
  const table = Array.isArray(content.candidates) ? (content.candidates as Properties[]) : [];
  content.candidates = [...table, { ...record }];
}

/** The form that adds modules to a link. */
export function modulesForm(content: ScenarioContent, add: (edit: WhatIfEdit) => void): HTMLElement {
  const links = (content.links ?? []).slice().sort((a, b) => String(a.id).localeCompare(String(b.id)));
  const link = select("modules-link", "Link", links.map((l) => String(l.id)));
  const count = h("input", { type: "number", step: "1", id: "modules-count", value: "1", "aria-label": "Modules" });
  const note = h("span", { class: "hint", id: "modules-note" });
  const describe = () => {
    const l = links.find((x) => String(x.id) === link.value);
    note.textContent = l ? `module ${formatValue(l.module_gbps)} Gb/s; now ${formatValue(l.capacity_gbps)} of at most ` +
                           `${formatValue(l.max_capacity_gbps)} Gb/s` : "";
  };
  link.addEventListener("change", describe);
  describe();
  const form = h("form", { class: "edit-form", id: "modules-form", novalidate: true },
    h("h4", {}, "Add modules"), count, h("label", { class: "inline" }, "to link", link), note,
    h("button", { type: "submit", class: "secondary", id: "modules-add" }, "Add"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const l = links.find((x) => String(x.id) === link.value);
    if (l) add({ kind: "add-modules", link: link.value, modules: numberOrNull(count), module_gbps: l.module_gbps });
  });
  return form;
}

/** The form that adds a candidate route (a buildable link) between two sites. */
export function candidateForm(content: ScenarioContent, add: (edit: WhatIfEdit) => void): HTMLElement {
  const sites = (content.sites ?? []).map((s) => String(s.id)).sort();
  const taken = new Set((Array.isArray(content.candidates) ? (content.candidates as Properties[]) : []).map((c) => String(c.id)));
  let n = 1;
  while (taken.has(`new-route-${n}`)) n += 1;
  const id = h("input", { type: "text", id: "cand-id", value: `new-route-${n}`, "aria-label": "Candidate id" });
  const a = select("cand-a", "From site", sites);
  const b = select("cand-b", "To site", sites);
  b.value = sites.find((s) => s !== a.value) ?? a.value;
  const kind = select("cand-kind", "Candidate kind", CANDIDATE_KINDS);
  kind.value = "terrestrial";
  const linkKind = select("cand-link-kind", "Link kind", LINK_KINDS);
  const num = (field: string, label: string, value: string) =>
    h("input", { type: "number", step: "any", id: `cand-${field}`, value, "aria-label": label, "data-field": field });
  const numbers = [num("module_gbps", "Module Gb/s", "400"), num("max_modules", "Max modules", "4"),
                   num("module_cost_usd", "Module cost USD", "100000"), num("fixed_cost_usd", "Fixed cost USD", "0"),
                   num("lead_time_quarters", "Lead time, quarters", "4")];
  const form = h("form", { class: "edit-form", id: "candidate-form", novalidate: true },
    h("h4", {}, "Add a candidate route"), id, h("label", { class: "inline" }, "from", a), h("label", { class: "inline" }, "to", b),
    kind, linkKind, ...numbers.map((input) => h("label", { class: "inline" }, input.getAttribute("aria-label"), input)),
    h("button", { type: "submit", class: "secondary", id: "candidate-add" }, "Add"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const record: Properties = { id: id.value.trim(), site_a: a.value, site_b: b.value, kind: kind.value,
                                 link_kind: linkKind.value };
    for (const input of numbers) record[String(input.dataset.field)] = numberOrNull(input);
    add({ kind: "add-candidate", record });
  });
  return form;
}

/** The form that fails a cable system or an SRLG: a `failures` job with that one state, on the opened version. */
export function failForm(token: string, base: { scenario: string; version: number; content: ScenarioContent },
                         status: (text: string, isError: boolean) => void): HTMLElement {
  const srlgs = (base.content.srlgs ?? []).map((g) => ({ id: `srlg:${String(g.id)}`, text: `SRLG ${String(g.id)}` +
    (g.name ? ` (${String(g.name)})` : ""), state: { id: `srlg:${String(g.id)}`, srlgs: [String(g.id)] } }));
  const cables = new Map<string, string[]>();
  for (const l of base.content.links ?? []) {
    const cable = String(l.cable_system ?? "");
    if (cable !== "") cables.set(cable, [...(cables.get(cable) ?? []), String(l.id)]);
  }
  const systems = [...cables.keys()].sort().map((c) => ({ id: `cable:${c}`, text: `cable ${c} (${cables.get(c)?.length} links)`,
                                                          state: { id: `cable:${c}`, links: cables.get(c) ?? [] } }));
  const options = [...systems, ...srlgs];
  const target = select("fail-target", "Cable system or SRLG", options.map((o) => o.id), options.map((o) => o.text));
  const run = h("button", { type: "submit", class: "secondary", id: "fail-run", disabled: options.length === 0 }, "Run the failure");
  const problem = h("span", { class: "field-error", id: "fail-error", role: "alert" });
  problem.hidden = true;
  const form = h("form", { class: "edit-form", id: "fail-form", novalidate: true },
    h("h4", {}, "Fail a cable system or an SRLG"), target, run,
    h("span", { class: "hint" }, `A failures job on version ${base.version} as saved (not the pending changes); the scenario is not changed.`),
    problem);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = options.find((o) => o.id === target.value);
    if (chosen === undefined) return;
    run.disabled = true;
    problem.hidden = true;
    api.submit(token, base.scenario, { kind: "failures", version: base.version,
                                       options: { kind: "list", scenarios: [chosen.state], engine: "serial" } })
      .then((job) => {
        status(`Failing ${chosen.text}: job ${job.id}.`, false);
        location.hash = `#/job/${job.id}/failure/${encodeURIComponent(chosen.state.id)}`;
      })
      .catch((error: unknown) => {
        clear(problem);
        problem.textContent = error instanceof ApiError
          ? [error.message, ...error.problems.map((p) => `${p.field ?? ""}: ${p.message}`)].join("; ") : String(error);
        problem.hidden = false;
      })
      .finally(() => { run.disabled = false; });
  });
  return form;
}
