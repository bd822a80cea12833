// The scenarios column's tools: search the team's scenarios by name, upload a scenario file in any format the API
// imports, and, for the open version, download it (canonical JSON, fetched with the token as a header) or fork it
// into a new scenario. An upload runs as an `import` job (`Prefer: respond-async`: the API process only stores the
// file; whoever runs jobs parses it): the panel lists this tab's imports with their status and progress, opens the
// new scenario when its import succeeds, and shows the problems of one that fails. Upload and fork are rendered
// only for a role that may write (`GET v1/whoami`'s can_write); a viewer sees search and download. Every refusal is
// the API's problem document, each problem with the file, table, record and field it names.

import { api, ApiError } from "./api";
import type { Job, ProblemItem, ScenarioSummary, ScenarioWithContent, WhoAmI } from "./api";
import { clear, h, saveBlob } from "./dom";
import { jobLabel, percentOf, problemItems, untilFinal } from "./serverjobs";

/** The formats `POST v1/scenarios` imports from a file (its suffix names the format; docs/api.md). */
const UPLOAD_ACCEPT = ".json,.yaml,.yml,.txt,.graphml,.zip";
const ACTIVE = new Set(["queued", "running"]);

/** What the panel needs from the workspace around it. */
export interface ScenarioHost {
  /** List the scenarios again (after an upload or a fork). */
  reload(): Promise<void>;
  /** Open a scenario's version (sets the URL hash). */
  open(id: string, version: number): void;
  status(text: string, isError: boolean): void;
}

/** A refusal as the upload shows it: the problem document's sentence, its HTTP status and its problems. */
interface Refusal {
  message: string;
  status: number;
  problems: ProblemItem[];
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
  private readonly importList = h("ol", { class: "import-jobs", id: "import-jobs", reversed: true,
                                          "aria-label": "Imports of this tab" });
  private readonly watching = new AbortController();
  private open: ScenarioWithContent | null = null;
  /** "As the next version of the open scenario" (shown while a scenario this role may change is open). */
  private readonly asVersion = h("input", { type: "checkbox", id: "upload-as-version" });
  private readonly asVersionLabel = h("label", { for: "upload-as-version", class: "upload-as-version", id: "upload-as-version-label" },
                                      this.asVersion);

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
    this.asVersion.checked = false;
    this.asVersionLabel.hidden = record === null || record.read_only;
    this.asVersionLabel.replaceChildren(this.asVersion, record === null ? "" :
      ` as a new version of “${record.name || "(unnamed)"}” (over v${record.version})`);
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

  /** Stop following this tab's imports (the panel is gone: signed out). */
  dispose(): void {
    this.watching.abort();
  }

  // ------------------------------------------------------------------ upload
  private uploadForm(): HTMLElement {
    const file = h("input", { type: "file", id: "upload-file", accept: UPLOAD_ACCEPT, "aria-describedby": "upload-hint" });
    const submit = h("button", { type: "submit", class: "secondary", id: "upload-submit" }, "Upload");
    const form = h("form", { class: "upload-form", id: "upload-form", novalidate: true },
      h("label", { for: "upload-file" }, "Upload a scenario"), file,
      h("p", { class: "hint", id: "upload-hint" },
        "Canonical JSON or YAML, node-link JSON, SNDlib .txt, GraphML, or a .zip of a scenario folder. " +
        "It is imported as a job; the new scenario opens when the job succeeds."),
      this.asVersionLabel, submit, this.uploadMessage, this.uploadErrors, this.importList);
    this.uploadMessage.hidden = true;
    this.asVersionLabel.hidden = true;
    this.importList.hidden = true;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.upload(file, submit);
    });
    return form;
  }

  /** Send the file as an import job, follow the job to its end, then open what it made or show its problems. */
  private async upload(input: HTMLInputElement, button: HTMLButtonElement): Promise<void> {
    clear(this.uploadErrors);
    const file = input.files?.[0];
    if (file === undefined) {
      this.showUpload("Choose a file first.", true);
      return;
    }
    button.disabled = true;
    this.showUpload(`Uploading ${file.name}…`, false);
    const target = this.asVersion.checked ? this.open : null;
    let answer: { job: Job } | { scenario: ScenarioSummary };
    try {
      answer = target === null ? await api.uploadAsync(this.token, file)
                               : { job: await api.uploadVersionAsync(this.token, target.id, file, target.etag) };
    } catch (error) {
      this.showRefusal(error, `${file.name} was not stored`);
      button.disabled = false;
      return;
    }
    input.value = "";
    button.disabled = false;  // the next file may go while this one is imported
    if ("scenario" in answer) {  // a server that stored it at once
      await this.opened(file.name, answer.scenario);
      return;
    }
    await this.follow(file.name, answer.job);
  }

  private async follow(fileName: string, queued: Job): Promise<void> {
    const row = this.importRow(fileName, queued);
    this.showUpload(`Importing ${fileName} (job ${queued.id})…`, false);
    let job: Job;
    try {
      job = await untilFinal(this.token, queued.id, (seen) => this.drawRow(row, fileName, seen), this.watching.signal);
    } catch (error) {
      if (!this.watching.signal.aborted) this.showRefusal(error, `${fileName}: the import job could not be followed`);
      return;
    }
    if (this.importList.firstElementChild !== row) {  // a later upload speaks in the message line and opens now
      if (job.status === "succeeded") await this.host.reload();
      return;
    }
    if (job.status === "succeeded") {
      try {
        const made = await api.importResult(this.token, job.id);
        await this.opened(fileName, { ...made, id: made.scenario_id });
      } catch (error) {
        this.showRefusal(error, `${fileName} was imported, but its scenario could not be read`);
      }
    } else if (job.status === "failed") {
      const e = job.error;
      this.showProblems({ message: [e?.title, e?.detail].filter(Boolean).join(": ") || job.status_detail,
                          status: e?.status ?? 0, problems: e?.errors ?? [] }, `${fileName} was not stored`);
    } else {
      this.showUpload(`${fileName} was not stored: its import job was ${job.status}.`, true);
    }
  }

  /** The uploaded scenario is stored: say what it holds, list it and open it. */
  private async opened(fileName: string, made: { id: string; version: number; name: string; sites: number;
                                                links: number; demands: number; source_format: string }): Promise<void> {
    this.showUpload(`Uploaded ${fileName}${made.version > 1 ? ` as version ${made.version}` : ""}: ` +
                    `${made.name || "(unnamed)"}, ${made.sites} sites, ${made.links} ` +
                    `links, ${made.demands} demands (${made.source_format}).`, false);
    this.clearSearch();
    await this.host.reload();
    this.host.open(made.id, made.version);
  }

  /** A row of the import list for a job (newest first), drawn with what is known of it now. */
  private importRow(fileName: string, job: Job): HTMLElement {
    const row = h("li", { class: "import-job" });
    this.importList.prepend(row);
    this.importList.hidden = false;
    while (this.importList.children.length > 5) this.importList.lastElementChild?.remove();
    this.drawRow(row, fileName, job);
    return row;
  }

  private drawRow(row: HTMLElement, fileName: string, job: Job): void {
    if (row.dataset.status !== undefined && !ACTIVE.has(row.dataset.status)) return;  // a late event after the end
    clear(row);
    row.dataset.id = job.id;
    row.dataset.kind = job.kind;
    row.dataset.status = job.status;
    const head = h("div", { class: "import-head" }, h("span", { class: "import-file" }, fileName),
      h("span", { class: `job-status status-${job.status}` }, job.status),
      h("span", { class: "meta import-percent" }, percentOf(job)));
    row.append(head, h("progress", { max: 1, value: job.progress.fraction, "aria-label": `${jobLabel(job.kind)} of ${fileName}` }),
               h("span", { class: "meta import-stage" }, job.error !== null ? job.status_detail || job.error.title
                                                                         : job.progress.message));
    if (ACTIVE.has(job.status) && this.who.can_write) {
      const cancel = h("button", { type: "button", class: "link import-cancel" }, "Cancel");
      cancel.addEventListener("click", () => {
        cancel.disabled = true;
        api.cancel(this.token, job.id).catch((e) => this.host.status(`Not cancelled: ${e instanceof Error ? e.message : String(e)}`, true));
      });
      head.append(cancel);
    }
    if (job.status === "succeeded") {
      head.append(h("a", { href: `#/scenario/${job.scenario_id}/version/${job.scenario_version}`, class: "import-open" },
                    `open v${job.scenario_version}`));
    }
  }

  private showUpload(text: string, isError: boolean): void {
    this.uploadMessage.textContent = text;
    this.uploadMessage.classList.toggle("error", isError);
    this.uploadMessage.hidden = text === "";
  }

  private showRefusal(error: unknown, what: string): void {
    if (error instanceof ApiError) {
      this.showProblems({ message: error.message, status: error.status, problems: error.problems }, what);
    } else {
      this.showUpload(`${what}: ${String(error)}`, true);
    }
  }

  /** A refusal, at once or by a failed import job, shown the same way: the sentence with its HTTP status, then
   * every problem with the file, table, record and field it names. */
  private showProblems(refusal: Refusal, what: string): void {
    clear(this.uploadErrors);
    this.showUpload(`${what}: ${refusal.message}${refusal.status ? ` (HTTP ${refusal.status})` : ""}`, true);
    this.uploadErrors.append(...problemItems(refusal.problems));
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
