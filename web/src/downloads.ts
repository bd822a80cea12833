// The job's own documents as downloads: the HTML report (report.html, a result file) and, for plan and roadmap jobs,
// the editable review deck (GET v1/jobs/{id}/deck, .pptx). Each is fetched with the token as a header and handed
// to the browser as a blob (a plain link could not send the token, and a token never goes in a URL).

import { download } from "./api";
import type { FileEntry, Job } from "./api";
import { h } from "./dom";

/** Job kinds the API makes a review deck for (GET v1/jobs/{id}/deck). */
export const DECK_KINDS = new Set(["plan", "roadmap"]);

/** The report and deck buttons of a succeeded job (null when it has neither). */
export function reportDownloads(token: string, job: Job, files: FileEntry[],
                                report: (text: string, isError: boolean) => void): HTMLElement | null {
  const base = `v1/jobs/${encodeURIComponent(job.id)}`;
  const buttons: HTMLButtonElement[] = [];
  const add = (id: string, label: string, path: string, name: string) => {
    const button = h("button", { type: "button", class: "secondary", id }, label);
    button.addEventListener("click", () => {
      button.disabled = true;
      report(`Downloading ${name}…`, false);
      download(path, token, name)
        .then(() => report(`Downloaded ${name}`, false))
        .catch((e) => report(`Could not download ${name}: ${e instanceof Error ? e.message : String(e)}`, true))
        .finally(() => { button.disabled = false; });
    });
    buttons.push(button);
  };
  if (files.some((f) => f.name === "report.html")) add("job-report", "Report (HTML)", `${base}/files/report.html`, `report-${job.id}.html`);
  if (DECK_KINDS.has(job.kind)) add("job-deck", "Review deck (PPTX)", `${base}/deck`, `review-${job.id}.pptx`);
  if (buttons.length === 0) return null;
  return h("div", { class: "report-downloads", id: "report-downloads" },
    h("span", { class: "meta" }, "Documents of this job:"), ...buttons);
}
