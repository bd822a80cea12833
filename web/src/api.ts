// The REST client: every call goes to this server's public API by a URL relative to the page (so a reverse proxy
// may mount the app under a path prefix), with the token as "Authorization: Bearer", never in a URL.

const TOKEN_KEY = "backbone.token";

/** A refused call, with the server's problem document (RFC 9457) read into a sentence. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly path: string) {
    super(message);
  }
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

/** The tables of a scenario's canonical JSON this workspace reads (each a list of records keyed by column). */
export interface ScenarioContent {
  demands?: Properties[];
  srlgs?: (Properties & { links?: string[] })[];
  metros?: Properties[];
}

export interface ScenarioWithContent extends ScenarioSummary {
  content: ScenarioContent;
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

export function saveToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

async function problemMessage(response: Response): Promise<string> {
  try {
    const doc = (await response.json()) as { title?: string; detail?: string };
    const text = [doc.title, doc.detail].filter(Boolean).join(": ");
    if (text) return text;
  } catch {
    // not a problem document: fall through to the status line
  }
  return `${response.status} ${response.statusText}`.trim();
}

/** GET a path of the API (relative, e.g. "v1/scenarios") as JSON, with the given token. */
export async function getJson<T>(path: string, token: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
                                   cache: "no-cache" });
  } catch (error) {
    throw new ApiError(0, `the server did not answer (${String(error)})`, path);
  }
  if (!response.ok) throw new ApiError(response.status, await problemMessage(response), path);
  return (await response.json()) as T;
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
};
