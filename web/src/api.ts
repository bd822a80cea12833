// The REST client: every call goes to this server's public API by a URL relative to the page (so a reverse proxy
// may mount the app under a path prefix), with the token as "Authorization: Bearer", never in a URL.

import { saveBlob } from "./dom";

const TOKEN_KEY = "backbone.token";
const TOKEN_KIND_KEY = "backbone.token-kind";

/** A refused call, with the server's problem document (RFC 9457) read into a sentence. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly path: string, readonly problems: ProblemItem[] = []) {
    super(message);
  }
}

/** One structured problem of a problem document's `errors` (a 422 names the table and field it is about). */
export interface ProblemItem {
  message: string;
  file?: string;
  table?: string;
  record?: string;
  field?: string;
}

/** A JSON schema as the API publishes it for a job kind's options (the subset the Run form reads). */
export interface JsonSchema {
  type?: string;
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  $ref?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

export interface JobKind {
  kind: string;
  description: string;
  options_schema: JsonSchema;
}

export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

export interface Job {
  id: string;
  scenario_id: string;
  scenario_version: number;
  kind: string;
  status: JobStatus;
  status_detail: string;
  progress: { fraction: number; message: string };
  error: { title: string; detail?: string; status?: number; errors?: ProblemItem[] } | null;
  files: string[];
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  created_by: string;
  options?: Record<string, unknown>;
}

/** What a succeeded `import` job made (GET v1/jobs/{id}/result of an import). */
export interface ImportResult {
  scenario_id: string;
  version: number;
  etag: string;
  name: string;
  sites: number;
  links: number;
  demands: number;
  source_format: string;
}

export interface FileEntry {
  name: string;
  size_bytes: number;
  url: string;
}

export interface WhoAmI {
  token_id: string;
  name: string;
  scope: "viewer" | "planner" | "admin";
  team_id: string | null;
  team_name: string | null;
  can_write: boolean;
  can_admin: boolean;
}

export interface ScenarioSummary {
  id: string;
  name: string;
  version: number;
  etag: string;
  sites: number;
  links: number;
  demands: number;
  source_format: string;
  updated_at: string;
  created_by: string;
  version_created_by: string;
  team_id: string | null;
  read_only: boolean;
}

export interface ScenarioVersion {
  version: number;
  name: string;
  sites: number;
  links: number;
  demands: number;
  created_at: string;
  created_by: string;
  source_format: string;
}

export type Properties = Record<string, string | number | boolean | null>;

/** The tables of a scenario's canonical JSON this workspace reads (each a list of records keyed by column); the
 * editor keeps every other key as the API sent it. */
export interface ScenarioContent {
  [key: string]: unknown;
  name?: string;
  sites?: Properties[];
  links?: Properties[];
  demands?: Properties[];
  srlgs?: (Properties & { links?: string[] })[];
  metros?: Properties[];
}

export interface ScenarioWithContent extends ScenarioSummary {
  content: ScenarioContent;
}

export interface ScenarioValidation {
  valid: boolean;
  sites: number;
  links: number;
  demands: number;
  source_format: string;
}

export interface Feature {
  type: "Feature";
  geometry: { type: string; coordinates: unknown };
  properties: Properties;
}

export interface FeatureCollection {
  type: "FeatureCollection";
  features: Feature[];
}

export function savedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keep the token for this tab: an API token, or a JWT from single sign-on ("sso", see oidc.ts). */
export function saveToken(token: string, kind: "api" | "sso" = "api"): void {
  sessionStorage.setItem(TOKEN_KEY, token);
  sessionStorage.setItem(TOKEN_KIND_KEY, kind);
}

/** How the kept token was had: typed in ("api") or from single sign-on ("sso"). */
export function savedTokenKind(): "api" | "sso" {
  return sessionStorage.getItem(TOKEN_KIND_KEY) === "sso" ? "sso" : "api";
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(TOKEN_KIND_KEY);
}

async function refusal(response: Response, path: string): Promise<ApiError> {
  let text = "";
  let problems: ProblemItem[] = [];
  try {
    const doc = (await response.json()) as { title?: string; detail?: string; errors?: ProblemItem[] };
    text = [doc.title, doc.detail].filter(Boolean).join(": ");
    problems = Array.isArray(doc.errors) ? doc.errors : [];
  } catch {
    // not a problem document: fall back to the status line
  }
  return new ApiError(response.status, text || `${response.status} ${response.statusText}`.trim(), path, problems);
}

async function call(path: string, token: string, init: RequestInit = {},
                    extra: Record<string, string> = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, cache: "no-cache",
                                   headers: { Authorization: `Bearer ${token}`, Accept: "application/json",
                                              ...(typeof init.body === "string" ? { "Content-Type": "application/json" } : {}),
                                              ...extra } });
  } catch (error) {
    throw new ApiError(0, `the server did not answer (${String(error)})`, path);
  }
  if (!response.ok) throw await refusal(response, path);
  return response;
}

/** Send a JSON body (POST, PUT) or nothing (DELETE) to a path of the API, with extra headers (If-Match), and read
 * the JSON answer. */
export async function sendJson<T>(method: "POST" | "PUT" | "DELETE", path: string, token: string, body?: unknown,
                                  headers: Record<string, string> = {}): Promise<T> {
  const response = await call(path, token, { method, body: body === undefined ? undefined : JSON.stringify(body) },
                              headers);
  return (await response.json()) as T;
}

/** Fetch a file of the API with the token (a plain link cannot send it) and hand it to the browser as a download. */
export async function download(path: string, token: string, name: string): Promise<void> {
  saveBlob(await (await call(path, token)).blob(), name);
}

/** GET a path of the API as text (a CSV result file). */
export async function getText(path: string, token: string): Promise<string> {
  return (await call(path, token)).text();
}

/** GET a path of the API (relative, e.g. "v1/scenarios") as JSON, with the given token. */
export async function getJson<T>(path: string, token: string): Promise<T> {
  return (await (await call(path, token)).json()) as T;
}

export const api = {
  whoami: (token: string) => getJson<WhoAmI>("v1/whoami", token),
  scenarios: (token: string) => getJson<ScenarioSummary[]>("v1/scenarios?limit=1000", token),
  versions: (token: string, id: string) => getJson<ScenarioVersion[]>(`v1/scenarios/${encodeURIComponent(id)}/versions`, token),
  scenario: (token: string, id: string, version: number | null) =>
    getJson<ScenarioWithContent>(`v1/scenarios/${encodeURIComponent(id)}${version ? `?version=${version}` : ""}`, token),
  geojson: (token: string, id: string, version: number | null) =>
    getJson<FeatureCollection>(`v1/scenarios/${encodeURIComponent(id)}/map?format=geojson${version ? `&version=${version}` : ""}`, token),
  basemap: (token: string) => getJson<FeatureCollection>("v1/basemap", token),
  jobKinds: (token: string) => getJson<JobKind[]>("v1/job-kinds", token),
  jobs: (token: string, scenario: string) =>
    getJson<Job[]>(`v1/scenarios/${encodeURIComponent(scenario)}/jobs?limit=50`, token),
  job: (token: string, id: string) => getJson<Job>(`v1/jobs/${encodeURIComponent(id)}`, token),
  result: (token: string, id: string) => getJson<unknown>(`v1/jobs/${encodeURIComponent(id)}/result`, token),
  files: (token: string, id: string) => getJson<FileEntry[]>(`v1/jobs/${encodeURIComponent(id)}/files`, token),
  submit: (token: string, scenario: string, body: { kind: string; version?: number; options: Record<string, unknown> }) =>
    sendJson<Job>("POST", `v1/scenarios/${encodeURIComponent(scenario)}/jobs`, token, body),
  /** The dry run of a candidate new version: 200 with its counts, or the 422 problem PUT would give. */
  validate: (token: string, scenario: string, content: ScenarioContent) =>
    sendJson<ScenarioValidation>("POST", `v1/scenarios/${encodeURIComponent(scenario)}/validate`, token, content),
  /** A new version of a scenario, only if its head is still the version whose ETag is given (else 409). */
  saveVersion: (token: string, scenario: string, content: ScenarioContent, etag: string) =>
    sendJson<ScenarioSummary>("PUT", `v1/scenarios/${encodeURIComponent(scenario)}`, token, content, { "If-Match": etag }),
  /** A new scenario (a fork) at version 1. */
  create: (token: string, content: ScenarioContent) => sendJson<ScenarioSummary>("POST", "v1/scenarios", token, content),
  /** A new scenario from a file of any format the API imports, sent as multipart/form-data field `file` (the
   * browser writes the boundary; the file's name tells the API its format) with `Prefer: respond-async`: 202 with
   * the `import` job, whose worker parses the file with the synchronous path's parser and caps; a server that
   * answers 201 (it stored the scenario at once) gives the scenario instead. The request itself (its size, type,
   * an empty file) is still refused at once. */
  uploadAsync: async (token: string, file: File): Promise<{ job: Job } | { scenario: ScenarioSummary }> => {
    const form = new FormData();
    form.append("file", file, file.name);
    const response = await call("v1/scenarios", token, { method: "POST", body: form }, { Prefer: "respond-async" });
    return response.status === 202 ? { job: (await response.json()) as Job }
                                    : { scenario: (await response.json()) as ScenarioSummary };
  },
  /** A file as the next version of a scenario, imported as a job (`PUT v1/scenarios/{id}`, `Prefer: respond-async`),
   * only if its head is still the version whose ETag is given (the job fails with 409 when it went stale). */
  uploadVersionAsync: async (token: string, scenario: string, file: File, etag: string): Promise<Job> => {
    const form = new FormData();
    form.append("file", file, file.name);
    return (await (await call(`v1/scenarios/${encodeURIComponent(scenario)}`, token, { method: "PUT", body: form },
                              { Prefer: "respond-async", "If-Match": etag })).json()) as Job;
  },
  importResult: (token: string, id: string) => getJson<ImportResult>(`v1/jobs/${encodeURIComponent(id)}/result`, token),
  cancel: (token: string, id: string) => sendJson<Job>("DELETE", `v1/jobs/${encodeURIComponent(id)}`, token),
};
