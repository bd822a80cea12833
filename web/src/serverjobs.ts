// The server's own job kinds, `import` (an upload parsed where jobs run: POST v1/scenarios with `Prefer:
// respond-async`) and `map` (a map drawn where jobs run): their labels in a job list, what a job list shows for one
// (they have no Results view as a planning job has: an import names the scenario version it made, a map its file),
// and waiting for a job to end while showing its progress (its event stream, else polling GET v1/jobs/{id}).

import { api, download } from "./api";
import type { Job, ProblemItem } from "./api";
import { formatValue, h } from "./dom";
import { followJob } from "./live";

/** The kinds the server creates itself (never submitted through the Run form). */
export const SERVER_KINDS = new Set(["import", "map"]);
const FINAL = new Set(["succeeded", "failed", "cancelled"]);
const POLL_MS = 1000;

const LABELS: Record<string, string> = { import: "import (upload)", map: "map (drawing)" };

/** A job kind as a job list names it: a planning kind as it is, a server kind with what it does. */
export function jobLabel(kind: string): string {
  return LABELS[kind] ?? kind;
}

/** One problem of a problem document as a line: where it is (file / table / record / field), then what. */
export function problemLine(p: ProblemItem): string {
  const where = [p.file, p.table, p.record, p.field].filter((part) => part !== undefined && part !== null && part !== "");
  return `${where.join(" / ")}${where.length ? ": " : ""}${p.message}`;
}

/** The items of a problem list (at most 50, then how many more), each with the file, table, record and field it
 * names as data attributes. */
export function problemItems(problems: ProblemItem[]): HTMLElement[] {
  const items = problems.slice(0, 50).map((p) => h("li", { "data-file": p.file ?? "", "data-table": p.table ?? "",
                                                           "data-record": p.record ?? "", "data-field": p.field ?? "" },
                                                    problemLine(p)));
  if (problems.length > 50) items.push(h("li", {}, `and ${problems.length - 50} more`));
  return items;
}

/** Wait until job `id` ends, handing every state seen to `onJob`: its event stream while the server gives one, else
 * polling; answers the final job (read once more after the stream ends). Rejects with the API's error (and stops
 * when `signal` aborts). */
export async function untilFinal(token: string, id: string, onJob: (job: Job) => void,
                                 signal: AbortSignal): Promise<Job> {
  let stream = true;
  for (;;) {
    if (stream) {
      stream = (await followJob(token, id, onJob, signal)) === "end";
    } else {
      await new Promise((done) => setTimeout(done, POLL_MS));
    }
    if (signal.aborted) throw new DOMException("stopped", "AbortError");
    const job = await api.job(token, id);
    onJob(job);
    if (FINAL.has(job.status)) return job;
  }
}

/** What a job list's detail shows of a server-kind job beyond its facts (null for any other kind): a succeeded
 * import's scenario version (a link that opens it), a failed one's problems, a succeeded map's file. */
export function serverJobDetail(job: Job, token: string, report: (text: string, isError: boolean) => void): HTMLElement | null {
  if (!SERVER_KINDS.has(job.kind)) return null;
  const box = h("div", { class: "server-job", id: "server-job", "data-kind": job.kind });
  if (job.kind === "import" && job.status === "succeeded") {
    box.append(h("p", {}, "It made ", h("a", { href: `#/scenario/${job.scenario_id}/version/${job.scenario_version}`,
                                              id: "import-opens", class: "scenario-version-link" },
                                           `version ${job.scenario_version} of its scenario`), "."));
  } else if (job.kind === "import" && (job.error?.errors ?? []).length > 0) {
    box.append(h("ul", { class: "error problem-list", id: "import-problems" }, ...problemItems(job.error?.errors ?? [])));
  } else if (job.kind === "map" && job.status === "succeeded") {
    const list = h("ul", { class: "job-files", id: "job-files" });
    for (const name of job.files) {
      const button = h("button", { type: "button", class: "link", "data-file": name }, name);
      button.addEventListener("click", () => {
        download(`v1/jobs/${encodeURIComponent(job.id)}/files/${encodeURIComponent(name)}`, token, name)
          .catch((e) => report(e instanceof Error ? e.message : String(e), true));
      });
      list.append(h("li", {}, button));
    }
    box.append(h("h4", {}, "The map"), list);
  }
  return box.childElementCount > 0 ? box : null;
}

/** A job's progress as a percentage. */
export function percentOf(job: Job): string {
  return `${formatValue(Math.round(job.progress.fraction * 100))} %`;
}
