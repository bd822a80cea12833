// The scenarios column's tools: search the team's scenarios by name, upload a scenario file in any format the API
// imports, and, for the open version, download it (canonical JSON, fetched with the token as a header) or fork it
// into a new scenario. Upload and fork are rendered only for a role that may write (`GET v1/whoami`'s can_write);
// a viewer sees search and download. Every refusal is the API's problem document, each problem with the file,
// table, record and field it names.

import { api, ApiError } from "./api";
import type { ProblemItem, ScenarioWithContent, WhoAmI } from "./api";
import { clear, h, saveBlob } from "./dom";

/** The formats `POST v1/scenarios` imports from a file (its suffix names the format; docs/api.md). */
const UPLOAD_ACCEPT = ".json,.yaml,.yml,.txt,.graphml,.zip";

/** What the panel needs from the workspace around it. */
export interface ScenarioHost {
  /** List the scenarios again (after an upload or a fork). */
  reload(): Promise<void>;
  /** Open a scenario's version (sets the URL hash). */
  open(id: string, version: number): void;
  status(text: string, isError: boolean): void;
}

/** One problem of a problem document as a line: where it is (file / table / record / field), then what. */
export function problemLine(p: ProblemItem): string {
  const where = [p.file, p.table, p.record, p.field].filter((part) => part !== undefined && part !== null && part !== "");
  return `${where.join(" / ")}${where.length ? ": " : ""}${p.message}`;
}

/** A file name made of safe characters (the download's name; the scenario's own name may hold anything). */
function fileName(name: string, version: number): string {
  const base = name.replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^[_.]+|_+$/g, "").slice(0, 80) || "scenario";
  return `${base}-v${version}.json`;
}

export class ScenarioPanel {
  readonly element: HTMLElement;
  private readonly search = h("input", { type: "search", id: "scenario-search", placeholder: "Search by name",
                                         "aria-label": "Search scenarios by name", autocomplete: "off" });
  private readonly searchNote = h("p", { class: "hint", id: "scenario-search-note", role: "status" });
  private readonly actions = h("section", { class: "scenario-actions", id: "scenario-actions",
                                            "aria-label": "The open scenario" });
  private readonly uploadMessage = h("p", { id: "upload-message", role: "alert" });
  private readonly uploadErrors = h("ul", { class: "error problem-list", id: "upload-errors" });
  private open: ScenarioWithContent | null = null;

  constructor(private readonly token: string, private readonly who: WhoAmI, private readonly host: ScenarioHost) {
    this.search.addEventListener("input", () => this.filter());
    this.actions.hidden = true;
    this.element = h("div", { class: "scenario-tools" }, this.search, this.searchNote,
                     who.can_write ? this.uploadForm() : null, this.actions);
  }

  /** Keep the listed scenarios whose name holds the search text (case-insensitive); call after listing them. */
  filter(): void {
    const text = this.search.value.trim().toLowerCase();
    const items = [...document.querySelectorAll<HTMLElement>("#scenario-list > li[data-id]")];
    let shown = 0;
    for (const li of items) {
      const name = (li.querySelector(".scenario-name")?.textContent ?? "").toLowerCase();
      li.hidden = text !== "" && !name.includes(text);
      if (!li.hidden) shown += 1;
    }
    this.searchNote.textContent = text === "" ? "" : `${shown} of ${items.length} scenarios match.`;
    this.searchNote.hidden = text === "";
  }

  /** Show every scenario again (a new one, uploaded or forked, is listed whatever its name). */
  private clearSearch(): void {
    this.search.value = "";
    this.filter();
  }

  /** The open version (null: none): its download and, for a role that may write, its fork. */
  setOpen(record: ScenarioWithContent | null): void {
    this.open = record;
    clear(this.actions);
    this.actions.hidden = record === null;
    this.actions.dataset.id = record?.id ?? "";
    this.actions.dataset.version = String(record?.version ?? "");
    if (record === null) return;
    const download = h("button", { type: "button", class: "secondary", id: "scenario-download" },
                       `Download v${record.version} (JSON)`);
    download.addEventListener("click", () => void this.download(record));
    this.actions.append(h("h3", {}, `Version ${record.version}`), download);
    if (!this.who.can_write) return;
    const name = h("input", { type: "text", id: "scenario-fork-name", "aria-label": "Name of the fork",
                              value: `${record.name || "scenario"} (fork)` });
    const fork = h("button", { type: "submit", class: "secondary", id: "scenario-fork" }, "Fork");
    const form = h("form", { class: "fork-form", id: "scenario-fork-form", novalidate: true },
                   h("label", { for: "scenario-fork-name" }, `Fork v${record.version} into a new scenario named`),
                   name, fork);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.fork(record, name.value.trim(), fork);
    });
    this.actions.append(form);
  }

  // ------------------------------------------------------------------ upload
  private uploadForm(): HTMLElement {
    const file = h("input", { type: "file", id: "upload-file", accept: UPLOAD_ACCEPT, "aria-describedby": "upload-hint" });
    const submit = h("button", { type: "submit", class: "secondary", id: "upload-submit" }, "Upload");
    const form = h("form", { class: "upload-form", id: "upload-form", novalidate: true },
      h("label", { for: "upload-file" }, "Upload a scenario"), file,
      h("p", { class: "hint", id: "upload-hint" },
        "Canonical JSON or YAML, node-link JSON, SNDlib .txt, GraphML, or a .zip of a scenario folder."),
      submit, this.uploadMessage, this.uploadErrors);
    this.uploadMessage.hidden = true;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.upload(file, submit);
    });
    return form;
  }

  private async upload(input: HTMLInputElement, button: HTMLButtonElement): Promise<void> {
    clear(this.uploadErrors);
    const file = input.files?.[0];
    if (file === undefined) {
      this.showUpload("Choose a file first.", true);
      return;
    }
    button.disabled = true;
    this.showUpload(`Uploading ${file.name}…`, false);
    try {
      const created = await api.upload(this.token, file);
      this.showUpload(`Uploaded ${file.name}: ${created.name || "(unnamed)"}, ${created.sites} sites, ${created.links} ` +
                      `links, ${created.demands} demands (${created.source_format}).`, false);
      input.value = "";
      this.clearSearch();
      await this.host.reload();
      this.host.open(created.id, created.version);
    } catch (error) {
      this.showRefusal(error, `${file.name} was not stored`);
    } finally {
      button.disabled = false;
    }
  }

  private showUpload(text: string, isError: boolean): void {
    this.uploadMessage.textContent = text;
    this.uploadMessage.classList.toggle("error", isError);
    this.uploadMessage.hidden = text === "";
  }

  private showRefusal(error: unknown, what: string): void {
    if (error instanceof ApiError) {
      this.showUpload(`${what}: ${error.message} (HTTP ${error.status})`, true);
      for (const p of error.problems.slice(0, 50)) {
        this.uploadErrors.append(h("li", { "data-file": p.file ?? "", "data-table": p.table ?? "",
                                           "data-record": p.record ?? "", "data-field": p.field ?? "" }, problemLine(p)));
      }
      if (error.problems.length > 50) this.uploadErrors.append(h("li", {}, `and ${error.problems.length - 50} more`));
    } else {
      this.showUpload(`${what}: ${String(error)}`, true);
    }
  }

  // ------------------------------------------------------------------ download and fork
  private async download(record: ScenarioWithContent): Promise<void> {
    try {
      const fresh = await api.scenario(this.token, record.id, record.version);
      const blob = new Blob([JSON.stringify(fresh.content, null, 2)], { type: "application/json" });
      saveBlob(blob, fileName(fresh.name, fresh.version));
      this.host.status(`Downloaded version ${fresh.version} of ${fresh.name || fresh.id}.`, false);
    } catch (error) {
      this.host.status(`Not downloaded: ${error instanceof Error ? error.message : String(error)}`, true);
    }
  }

  private async fork(record: ScenarioWithContent, name: string, button: HTMLButtonElement): Promise<void> {
    if (this.open !== record) return;
    button.disabled = true;
    clear(this.uploadErrors);
    try {
      const created = await api.create(this.token, { ...record.content, name: name || record.content.name });
      this.host.status(`Forked version ${record.version} into a new scenario, ${created.name}.`, false);
      this.clearSearch();
      await this.host.reload();
      this.host.open(created.id, created.version);
    } catch (error) {
      this.host.status(`Not forked: ${error instanceof ApiError ? `${error.message} (HTTP ${error.status})`
                                                                : String(error)}`, true);
    } finally {
      button.disabled = false;
    }
  }
}
