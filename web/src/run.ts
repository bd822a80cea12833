// The Run panel: start a job on the open scenario version with a form built from the job kind's options JSON schema
// (GET v1/job-kinds, the same pydantic models as the CLI), watch it by polling GET v1/jobs/<id>, cancel it, list the
// scenario's jobs (read from the API, so they survive a reload) and download a finished job's files. Only options
// the planner changed are sent; the API validates them and its 422 problems are shown beside the field they name.

import { api, ApiError, download } from "./api";
import type { Job, JobKind, JsonSchema, ProblemItem } from "./api";
import { clear, formatValue, h } from "./dom";
import { followJob } from "./live";
import type { ResultsView } from "./results";
import { jobLabel, serverJobDetail } from "./serverjobs";

const KIND_ORDER = ["te", "failures", "place", "design", "plan", "roadmap"];
const ACTIVE = new Set(["queued", "running"]);
const POLL_MS = 1000;
const LIST_POLL_MS = 5000;  // while the shown job's events stream, the list is refreshed less often

type Widget = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** One option's form field: its widget, how it reads back, and the text it started with (the default). */
interface Field {
  name: string;
  widget: Widget;
  initial: string;
  read: () => unknown;
  error: HTMLElement;
}

let kindsCache: Promise<JobKind[]> | null = null;

/** The schema a property is, without a `null` alternative (`anyOf: [X, {type: null}]` is X, nullable). */
function unwrap(schema: JsonSchema): { base: JsonSchema; nullable: boolean } {
  const alternatives = schema.anyOf ?? [];
  const real = alternatives.filter((s) => s.type !== "null");
  const nullable = real.length < alternatives.length;
  if (alternatives.length > 0 && real.length === 1) return { base: { ...real[0], ...pick(schema) }, nullable };
  return { base: schema, nullable };
}

function pick(schema: JsonSchema): JsonSchema {
  return { title: schema.title, description: schema.description, default: schema.default };
}

function text(value: unknown): string {
  return value === null || value === undefined ? "" : String(value);
}

/** Build the widget of one option from its schema, pre-filled with the default. */
function buildField(name: string, schema: JsonSchema, required: boolean): { row: HTMLElement; field: Field } {
  const { base, nullable } = unwrap(schema);
  const id = `opt-${name}`;
  const simple = base.$ref === undefined && base.type !== "object" && base.type !== "array" &&
    (base.anyOf === undefined || base.anyOf.length === 0);
  let widget: Widget;
  let read: () => unknown;
  if (simple && base.enum) {
    const select = h("select", { id, name });
    if (nullable || base.default === undefined) select.append(h("option", { value: "" }, "(default)"));
    for (const v of base.enum) select.append(h("option", { value: String(v) }, String(v)));
    select.value = text(base.default);
    widget = select;
    read = () => (select.value === "" ? null : base.enum?.find((v) => String(v) === select.value));
  } else if (simple && base.type === "boolean") {
    const box = h("input", { id, name, type: "checkbox", checked: base.default === true });
    widget = box;
    read = () => box.checked;
  } else if (simple && (base.type === "integer" || base.type === "number")) {
    const min = base.minimum ?? base.exclusiveMinimum;
    const max = base.maximum ?? base.exclusiveMaximum;
    const input = h("input", { id, name, type: "number", step: base.type === "integer" ? 1 : "any", min, max,
                               placeholder: nullable ? "default" : undefined });
    input.value = text(base.default);
    widget = input;
    read = () => (input.value.trim() === "" ? null : Number(input.value));
  } else if (simple) {
    const input = h("input", { id, name, type: "text", spellcheck: "false" });
    input.value = text(base.default);
    widget = input;
    read = () => (input.value === "" && nullable ? null : input.value);
  } else {
    const area = h("textarea", { id, name, rows: 2, spellcheck: "false", placeholder: "JSON" });
    area.value = base.default === undefined || base.default === null ? "" : JSON.stringify(base.default);
    widget = area;
    read = () => (area.value.trim() === "" ? null : (JSON.parse(area.value) as unknown));
  }
  const initial = widget instanceof HTMLInputElement && widget.type === "checkbox" ? String(widget.checked) : widget.value;
  const error = h("p", { class: "field-error", id: `err-${name}`, role: "alert" });
  error.hidden = true;
  const label = h("label", { for: id, title: base.description ?? "" }, name, required ? " *" : "");
  const row = h("div", { class: "field", "data-option": name }, label, widget,
    base.description ? h("small", { class: "hint" }, base.description) : null, error);
  return { row, field: { name, widget, initial, read, error } };
}

function current(field: Field): string {
  const w = field.widget;
  return w instanceof HTMLInputElement && w.type === "checkbox" ? String(w.checked) : w.value;
}

function when(iso: string | null): string {
  return iso ? iso.slice(0, 19).replace("T", " ") : "";
}

function percent(job: Job): string {
  return `${Math.round(job.progress.fraction * 100)} %`;
}

/** The Run panel of one open scenario (and version, null: the newest). */
export class RunPanel {
  readonly element = h("section", { class: "run-panel", id: "run-panel", "aria-label": "Run" });
  // novalidate: the API is the one validator; its 422 problems are shown beside the fields they name
  private readonly form = h("form", { class: "run-form", id: "run-form", "aria-label": "Start a job", novalidate: true });
  private readonly jobList = h("tbody", { id: "job-list" });
  private readonly detail = h("div", { class: "job-detail", id: "job-detail", "aria-live": "polite" });
  private fields: Field[] = [];
  private selected: string | null = null;
  private timer: number | null = null;
  private disposed = false;
  private failure: string | null = null;
  private period: string | null = null;
  private results: ResultsView | null = null;
  private live: { id: string; abort: AbortController } | null = null;
  private liveBroken = false;  // the event stream could not be had: poll from then on

  constructor(private readonly token: string, private readonly scenario: string, private readonly version: number | null,
              private readonly canWrite: boolean, private readonly openJob: (id: string) => void,
              private readonly report: (text: string, isError: boolean) => void,
              private readonly makeResults: ((job: Job) => ResultsView) | null = null) {
    const jobs = h("div", { class: "jobs" }, h("h3", {}, "Jobs of this scenario"),
      h("table", { class: "data job-table" },
        h("thead", {}, h("tr", {}, h("th", {}, "kind"), h("th", {}, "version"), h("th", {}, "status"),
                                 h("th", {}, "progress"), h("th", {}, "created"), h("th", {}, "by"))), this.jobList),
      this.detail);
    if (canWrite) this.element.append(this.form);  // a role that may not write gets no Run form at all
    this.element.append(jobs);
  }

  /** Load the job kinds (once per page) and this scenario's jobs, then keep them fresh while any job is active. */
  async start(): Promise<void> {
    if (this.canWrite) {
      kindsCache ??= api.jobKinds(this.token);
      try {
        this.buildForm(await kindsCache);
      } catch (error) {
        kindsCache = null;
        this.report(`Could not read the job kinds: ${String(error instanceof Error ? error.message : error)}`, true);
      }
    }
    await this.refresh();
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.live?.abort.abort();
    this.closeResults();
  }

  private closeResults(): void {
    this.results?.dispose();
    this.results = null;
  }

  /** Show one job (a deep link `#/job/<id>` or a click in the list) and watch it; `failure` selects a failure state
   * of its results (`#/job/<id>/failure/<state>`), `period` a roadmap's period (`#/job/<id>/period/<period>`). */
  async select(id: string, failure: string | null = null, period: string | null = null): Promise<void> {
    this.failure = failure;
    this.period = period;
    if (id === this.selected && this.results !== null) {
      await this.results.selectFailure(failure);
      await this.results.selectPeriod(period);
      return;
    }
    this.selected = id;
    if (this.live !== null && this.live.id !== id) {
      this.live.abort.abort();
      this.live = null;
    }
    await this.refresh();
  }

  // ------------------------------------------------------------------ the form
  private buildForm(kinds: JobKind[]): void {
    const ordered = kinds.slice().sort((a, b) => rank(a.kind) - rank(b.kind) || a.kind.localeCompare(b.kind));
    const kind = h("select", { id: "run-kind", name: "kind" }, ...ordered.map((k) => h("option", { value: k.kind }, k.kind)));
    const fields = h("div", { class: "fields", id: "run-fields" });
    const general = h("p", { class: "error", id: "run-error", role: "alert" });
    general.hidden = true;
    const submit = h("button", { type: "submit", id: "run-submit" }, "Run");
    const about = h("p", { class: "hint", id: "run-about" });
    const target = this.version === null ? "the newest version" : `version ${this.version}`;
    const show = () => {
      const chosen = ordered.find((k) => k.kind === kind.value);
      clear(fields);
      this.fields = [];
      about.textContent = chosen?.description ?? "";
      const schema = chosen?.options_schema;
      for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
        const { row, field } = buildField(name, prop, (schema?.required ?? []).includes(name));
        fields.append(row);
        this.fields.push(field);
      }
    };
    kind.addEventListener("change", show);
    this.form.append(h("h3", {}, "Run a job"),
      h("div", { class: "run-head" }, h("label", { for: "run-kind" }, "Kind"), kind,
        h("span", { class: "meta" }, `on ${target}; defaults pre-filled, only changed options are sent`), submit),
      about, general, fields);
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.submit(kind.value, general, submit);
    });
    show();
  }

  private async submit(kind: string, general: HTMLElement, button: HTMLButtonElement): Promise<void> {
    general.hidden = true;
    const options: Record<string, unknown> = {};
    let bad = false;
    for (const field of this.fields) {
      field.error.hidden = true;
      if (current(field) === field.initial) continue;
      try {
        options[field.name] = field.read();
      } catch {
        this.fieldError(field, "not valid JSON");
        bad = true;
      }
    }
    if (bad) return;
    button.disabled = true;
    try {
      const body = { kind, options, ...(this.version === null ? {} : { version: this.version }) };
      const job = await api.submit(this.token, this.scenario, body);
      this.report(`Started ${job.kind} job ${job.id}`, false);
      this.openJob(job.id);
    } catch (error) {
      this.showRefusal(error, general);
    } finally {
      button.disabled = false;
    }
  }

  private fieldError(field: Field, message: string): void {
    field.error.textContent = message;
    field.error.hidden = false;
  }

  /** A refused submission: each problem beside the field it names (`te.k_paths` beside `te`), the rest on top. */
  private showRefusal(error: unknown, general: HTMLElement): void {
    const rest: string[] = [];
    const problems: ProblemItem[] = error instanceof ApiError ? error.problems : [];
    for (const problem of problems) {
      const name = (problem.field ?? "").split(/[.[]/)[0];
      const field = this.fields.find((f) => f.name === name);
      if (field) this.fieldError(field, field.error.hidden ? problem.message : `${field.error.textContent}; ${problem.message}`);
      else rest.push([problem.field, problem.message].filter(Boolean).join(": "));
    }
    if (problems.length === 0 || rest.length > 0) {
      general.textContent = [error instanceof Error ? error.message : String(error), ...rest].join(" · ");
      general.hidden = false;
    }
  }

  // ------------------------------------------------------------------ watching
  private async refresh(): Promise<void> {
    if (this.disposed) return;
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.timer = null;
    let jobs: Job[] = [];
    let shown: Job | null = null;
    try {
      jobs = await api.jobs(this.token, this.scenario);
      if (this.selected !== null) shown = await api.job(this.token, this.selected);
    } catch (error) {
      this.report(error instanceof Error ? error.message : String(error), true);
    }
    if (this.disposed) return;
    this.showJobs(jobs);
    await this.showDetail(shown);
    if (shown !== null && ACTIVE.has(shown.status)) this.follow(shown.id);
    this.detail.setAttribute("data-live", this.live !== null ? "events" : "polling");
    if (jobs.some((j) => ACTIVE.has(j.status)) || (shown !== null && ACTIVE.has(shown.status))) {
      this.timer = window.setTimeout(() => void this.refresh(), this.live !== null ? LIST_POLL_MS : POLL_MS);
    }
  }

  /** Follow the shown job's events (GET v1/jobs/<id>/events); when the stream ends, refresh; when it cannot be had,
   * fall back to polling for the rest of this panel's life. */
  private follow(id: string): void {
    if (this.liveBroken || this.live?.id === id) return;
    this.live?.abort.abort();
    const abort = new AbortController();
    this.live = { id, abort };
    const onJob = (job: Job) => {
      // a finished job is drawn by the refresh after the stream's end (its files and results are read once)
      if (!this.disposed && job.id === this.selected && ACTIVE.has(job.status)) void this.showDetail(job);
    };
    void followJob(this.token, id, onJob, abort.signal).then((end) => {
      if (this.live?.abort !== abort) return;  // replaced or disposed meanwhile
      this.live = null;
      if (end === "broken") this.liveBroken = true;
      void this.refresh();
    });
  }

  private showJobs(jobs: Job[]): void {
    clear(this.jobList);
    if (jobs.length === 0) {
      this.jobList.append(h("tr", {}, h("td", { colspan: 6, class: "empty" }, "No jobs yet.")));
    }
    for (const job of jobs) {
      const open = h("a", { href: `#/job/${job.id}`, class: "job-link" }, jobLabel(job.kind));
      this.jobList.append(h("tr", { "data-id": job.id, "data-status": job.status, "data-kind": job.kind,
                                    class: job.id === this.selected ? "selected" : undefined },
        h("td", {}, open), h("td", { class: "num" }, `v${job.scenario_version}`),
        h("td", {}, h("span", { class: `job-status status-${job.status}` }, job.status)),
        h("td", { class: "num" }, percent(job)), h("td", {}, when(job.created_at)), h("td", {}, job.created_by)));
    }
  }

  private async showDetail(job: Job | null): Promise<void> {
    clear(this.detail);
    if (job === null || job.id !== this.results?.jobId || job.status !== "succeeded") this.closeResults();
    if (job === null) return;
    this.detail.setAttribute("data-id", job.id);
    this.detail.setAttribute("data-status", job.status);
    const bar = h("progress", { max: 1, value: job.progress.fraction, "aria-label": "progress" });
    const rows: [string, string][] = [["kind", jobLabel(job.kind)], ["scenario version", `v${job.scenario_version}`],
      ["status", job.status_detail || job.status], ["stage", job.progress.message], ["progress", percent(job)],
      ["created", `${when(job.created_at)} by ${job.created_by}`], ["started", when(job.started_at)],
      ["finished", when(job.finished_at)]];
    const facts = h("dl", { class: "job-facts" });
    for (const [term, value] of rows) facts.append(h("dt", {}, term), h("dd", { "data-fact": term.replace(" ", "-") }, value));
    this.detail.append(h("h3", {}, `Job ${job.id}`), bar, facts);
    if (this.canWrite && ACTIVE.has(job.status)) {
      const cancel = h("button", { type: "button", class: "danger", id: "job-cancel" }, "Cancel");
      cancel.addEventListener("click", () => void this.cancel(job.id, cancel));
      this.detail.append(cancel);
    }
    if (job.error) {
      this.detail.append(h("p", { class: "error", id: "job-error" },
        [job.error.title, job.error.detail].filter(Boolean).join(": ")));
    }
    const server = serverJobDetail(job, this.token, this.report);  // an import's scenario, a map's file
    if (server !== null) this.detail.append(server);
    else if (job.status === "succeeded") {
      await this.showFiles(job);
      this.showResults(job);
    }
  }

  /** The Results view of a succeeded job (built once per job, kept across refreshes of this panel). */
  private showResults(job: Job): void {
    if (this.makeResults === null || this.disposed) return;
    if (this.results === null) {
      this.results = this.makeResults(job);
      void this.results.load(this.failure, this.period);
    }
    this.detail.append(this.results.element);
  }

  private async showFiles(job: Job): Promise<void> {
    const list = h("ul", { class: "job-files", id: "job-files" });
    const item = (label: string, path: string, name: string, size: string) => {
      const button = h("button", { type: "button", class: "link", "data-file": name }, label);
      button.addEventListener("click", () => {
        download(path, this.token, name).catch((e) => this.report(e instanceof Error ? e.message : String(e), true));
      });
      list.append(h("li", {}, button, h("span", { class: "meta" }, size)));
    };
    const base = `v1/jobs/${encodeURIComponent(job.id)}`;
    item("result (JSON)", `${base}/result`, `${job.kind}-${job.id}.json`, "");
    try {
      for (const f of await api.files(this.token, job.id)) {
        item(f.name, `${base}/files/${f.name.split("/").map(encodeURIComponent).join("/")}`, f.name.split("/").pop() ?? f.name,
             `${formatValue(f.size_bytes / 1024)} KiB`);
      }
    } catch (error) {
      this.report(error instanceof Error ? error.message : String(error), true);
    }
    this.detail.append(h("h4", {}, "Results"), list);
  }

  private async cancel(id: string, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await api.cancel(this.token, id);
      this.report(`Cancelled job ${id}`, false);
    } catch (error) {
      this.report(error instanceof Error ? error.message : String(error), true);
    }
    await this.refresh();
  }
}

function rank(kind: string): number {
  const i = KIND_ORDER.indexOf(kind);
  return i < 0 ? KIND_ORDER.length : i;
}
