// Single sign-on: the OpenID Connect Authorization Code flow with PKCE, as a single-page app does it with a
// public client (no secret). The server says whether it is on and where the issuer's endpoints are
// (GET v1/auth/config); the page sends the browser to the authorization endpoint with a PKCE challenge (S256), a
// state and a nonce, and the issuer sends it back to this page's own URL with ?code=…&state=…. The page removes
// them from the URL at once (history.replaceState), checks the state, trades the code and its verifier for tokens
// at the token endpoint (fetch, CORS), checks the ID token's nonce, issuer and audience, and keeps the token the
// server named (token_use: the one carrying the API's audience) like an API token: in sessionStorage, sent only as
// "Authorization: Bearer". The token never goes in a URL.

import { ApiError, saveToken, savedToken, savedTokenKind } from "./api";
import { h } from "./dom";

/** The server's single sign-on settings (GET v1/auth/config, `oidc`). */
export interface OidcClient {
  issuer: string;
  client_id: string;
  authorization_endpoint: string;
  token_endpoint: string;
  scopes: string[];
  /** Which token of the token endpoint's answer the API accepts: the one whose audience is the API's. */
  token_use: "access_token" | "id_token";
}

/** GET v1/auth/config: single sign-on, or null with the reason it is unavailable. */
export interface AuthConfig {
  oidc: OidcClient | null;
  oidc_problem: string | null;
}

/** What this tab remembers between sending the browser to the issuer and its return (one use). */
interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  redirect_uri: string;
  /** The view (URL hash) to land on after signing in; the redirect URI cannot carry it. */
  hash: string;
}

const PENDING_KEY = "backbone.oidc.pending";

/** Ask the server how to sign in (no token needed); null when it cannot be asked (an older server). */
export async function authConfig(): Promise<AuthConfig | null> {
  try {
    const response = await fetch("v1/auth/config", { cache: "no-cache", headers: { Accept: "application/json" } });
    return response.ok ? ((await response.json()) as AuthConfig) : null;
  } catch {
    return null;
  }
}

function base64url(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** `bytes` random bytes, base64url (32 bytes: a 43-character PKCE verifier, RFC 7636 section 4.1). */
function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The claims of a JWT, read without checking its signature (the server checks it; the page only reads its own
 * token's nonce, issuer, audience and expiry). Null when it is not a JWT. */
function jwtClaims(token: string): Record<string, unknown> | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const json = atob(parts[1].replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(parts[1].length / 4) * 4, "="));
    const claims: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
    return claims !== null && typeof claims === "object" ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** This page's own address without query or hash: where the issuer sends the browser back (under a path prefix
 * too, e.g. https://host/backbone/). The issuer must have it registered for the client. */
function redirectUri(): string {
  return `${location.origin}${location.pathname}`;
}

/** Send the browser to the issuer to sign in (a top-level navigation; the page comes back with a code). */
export async function startSsoSignIn(client: OidcClient): Promise<void> {
  const pending: Pending = { state: randomText(16), nonce: randomText(16), verifier: randomText(32),
                             redirect_uri: redirectUri(), hash: location.hash };
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(pending.verifier));
  const url = new URL(client.authorization_endpoint);
  for (const [name, value] of Object.entries({
    response_type: "code", client_id: client.client_id, redirect_uri: pending.redirect_uri,
    scope: client.scopes.join(" "), state: pending.state, nonce: pending.nonce,
    code_challenge: base64url(new Uint8Array(digest)), code_challenge_method: "S256" })) {
    url.searchParams.set(name, value);
  }
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  location.assign(url.toString());
}

function takePending(): Pending | null {
  const text = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  try {
    return text === null ? null : (JSON.parse(text) as Pending);
  } catch {
    return null;
  }
}

/** Trade the code for tokens and pick the one the API takes, after checking the ID token belongs to this sign-in. */
async function exchange(client: OidcClient, code: string, pending: Pending): Promise<string> {
  let response: Response;
  try {
    response = await fetch(client.token_endpoint, {
      method: "POST", credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: pending.redirect_uri,
                                  client_id: client.client_id, code_verifier: pending.verifier }) });
  } catch (error) {
    throw new Error(`the identity provider's token endpoint did not answer (${String(error)})`);
  }
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    const why = [body.error, body.error_description].filter((x) => typeof x === "string" && x).join(": ");
    throw new Error(`the identity provider refused the code (${why || `HTTP ${response.status}`})`);
  }
  const idClaims = typeof body.id_token === "string" ? jwtClaims(body.id_token) : null;
  if (idClaims === null) throw new Error("the identity provider sent no ID token");
  const audience = Array.isArray(idClaims.aud) ? idClaims.aud : [idClaims.aud];
  if (idClaims.nonce !== pending.nonce) throw new Error("the ID token's nonce is not this sign-in's");
  if (idClaims.iss !== client.issuer || !audience.includes(client.client_id)) {
    throw new Error("the ID token was not issued by this server's identity provider for this workspace");
  }
  const token = body[client.token_use];
  if (typeof token !== "string" || jwtClaims(token) === null) {
    throw new Error(`the identity provider's ${client.token_use.replace("_", " ")} is not a JWT the API can check`);
  }
  return token;
}

/** The end of a single sign-on: when the issuer has just sent the browser back here, remove the code and state
 * from the URL (before anything else), check and trade them, and keep the token (sessionStorage, marked "sso").
 * Returns null when this page load is not a return from the issuer, the token, or the reason it failed. */
export async function completeSsoSignIn(): Promise<{ token: string } | { error: string } | null> {
  const params = new URLSearchParams(location.search);
  if (!params.has("state") && !params.has("code") && !params.has("error")) return null;
  const pending = takePending();
  history.replaceState(null, "", `${location.pathname}${pending?.hash ?? location.hash}`);
  const failed = (why: string) => ({ error: `Single sign-on failed: ${why}. Sign in again.` });
  if (pending === null || params.get("state") !== pending.state) {
    return failed("the answer does not belong to a sign-in this tab started (state)");
  }
  if (params.has("error")) {
    return failed(`the identity provider said ${[params.get("error"), params.get("error_description")].filter(Boolean).join(": ")}`);
  }
  const config = await authConfig();
  if (config?.oidc == null) return failed(config?.oidc_problem ?? "this server no longer offers it");
  try {
    const token = await exchange(config.oidc, params.get("code") ?? "", pending);
    saveToken(token, "sso");
    return { token };
  } catch (error) {
    return failed(error instanceof Error ? error.message : String(error));
  }
}

/** The sign-in form's single sign-on option ("Sign in with SSO"), or the reason it is unavailable; null when the
 * server offers API tokens only. */
export function ssoOption(config: AuthConfig | null, showError: (text: string) => void): HTMLElement | null {
  if (config?.oidc) {
    const client = config.oidc;
    const button = h("button", { type: "button", id: "sso-sign-in", class: "sso-button" }, "Sign in with SSO");
    button.addEventListener("click", () => {
      button.disabled = true;
      startSsoSignIn(client).catch((error) => {
        button.disabled = false;
        showError(`Single sign-on could not start: ${String(error)}`);
      });
    });
    return h("div", { class: "sso", id: "sso" }, h("p", { class: "or" }, "or"), button,
      h("p", { class: "hint" }, `Your organisation's single sign-on at ${new URL(client.issuer).host}. Its token `,
        "stays in this tab like an API token and is sent only to this server."));
  }
  if (config?.oidc_problem) return h("p", { class: "hint", id: "sso" }, `Single sign-on is unavailable now: ${config.oidc_problem}.`);
  return null;
}

/** The sentence for a 401 when the token came from single sign-on: expired (its `exp` has passed, or the server
 * says so) or refused. Null for an API token. */
export function ssoRefusal(error: ApiError): string | null {
  if (error.status !== 401 || savedTokenKind() !== "sso") return null;
  const exp = jwtClaims(savedToken() ?? "")?.exp;
  if ((typeof exp === "number" && exp * 1000 <= Date.now()) || /expired/i.test(error.message)) {
    return "Your single sign-on has expired. Sign in again.";
  }
  return `The server refused your single sign-on token (${error.message}). Sign in again, or ask an administrator.`;
}
