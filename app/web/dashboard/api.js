// The dashboard's only way to the server: GraphQL at /v1/graphql, with either an API key or
// an OAuth access token (authorization code + PKCE, as a public client), never both.
// Credentials live in sessionStorage: they end with the tab, and no other site can read them.

const GRAPHQL = "/v1/graphql";
const STORE = "fincap.session";
const CLIENT = "fincap.oauthClient"; // a registered client, only off the public address
const PENDING = "fincap.oauthPending";

export class ApiError extends Error {
  // retryAfter: seconds the server asked to wait (429, 503), when it said.
  constructor(message, code, status, retryAfter = null) {
    super(message);
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

// A GraphQL error as an ApiError, with its code, HTTP status and Retry-After in seconds.
function fromGraphQLError(error, response) {
  const ext = error.extensions || {};
  const header = response ? Number(response.headers.get("Retry-After")) : NaN;
  const wait = Number(ext.retryAfter ?? header);
  return new ApiError(error.message, ext.code, ext.status, wait > 0 ? wait : null);
}

export function session() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE)) || null;
  } catch {
    return null;
  }
}

export function saveSession(value) {
  if (value) sessionStorage.setItem(STORE, JSON.stringify(value));
  else sessionStorage.removeItem(STORE);
}

export function useApiKey(apiKey) {
  saveSession({ kind: "key", secret: apiKey.trim(), orgId: null });
}

export function setWorkspace(orgId) {
  const current = session();
  if (current) saveSession({ ...current, orgId });
}

export function headers() {
  const current = session();
  const out = {};
  if (!current) return out;
  out.Authorization = `Bearer ${current.secret}`;
  if (current.orgId) out["X-Service-Org-Id"] = current.orgId;
  return out;
}

export let requestCount = 0; // GraphQL requests sent (the bench reads it)

// One GraphQL operation. Field errors come back with the data (the caller decides); a request
// that fails as a whole, or a 401, throws.
export async function graphql(query, variables = {}, { retry = true } = {}) {
  requestCount += 1;
  window.__fincapRequests = requestCount;
  const response = await fetch(GRAPHQL, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", ...headers() },
    body: JSON.stringify({ query, variables }),
  });
  const body = await response.json().catch(() => ({}));
  const unauthenticated = (body.errors || []).some(
    (e) => e.extensions && e.extensions.status === 401,
  );
  if ((response.status === 401 || unauthenticated) && retry && (await refreshToken())) {
    return graphql(query, variables, { retry: false });
  }
  if (unauthenticated || response.status === 401) {
    throw new ApiError("Your sign-in has expired or the key was revoked.", "UNAUTHENTICATED", 401);
  }
  // A failure with no GraphQL answer at all (a 500's plain text): said, not taken as no data.
  if (!response.ok && !body.data && !body.errors) {
    throw new ApiError(`The server could not answer (HTTP ${response.status}); try again`, "SERVER_ERROR", response.status);
  }
  if (!body.data && body.errors) throw fromGraphQLError(body.errors[0], response);
  return body;
}

// The data of an operation, throwing the first field error.
export async function data(query, variables) {
  const body = await graphql(query, variables);
  if (body.errors && body.errors.length) throw fromGraphQLError(body.errors[0]);
  return body.data;
}

// Upload one file through GraphQL with progress (fetch has no upload progress; XHR does).
export function uploadFile(file, base64Data, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", GRAPHQL);
    xhr.setRequestHeader("Content-Type", "application/json");
    for (const [name, value] of Object.entries(headers())) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      requestCount += 1;
      let body = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON: reported below */
      }
      const error = (body.errors || [])[0];
      if (error) reject(new ApiError(error.message, error.extensions?.code));
      else if (body.data?.filesUpload) resolve(body.data.filesUpload);
      else reject(new ApiError(`Upload failed (HTTP ${xhr.status})`));
    };
    xhr.onerror = () => reject(new ApiError("The upload was interrupted"));
    xhr.send(
      JSON.stringify({
        query: `mutation Upload($input: UploadFileInput!) {
          filesUpload(input: $input) { documentId status } }`,
        variables: { input: { fileName: file.name, base64Data } },
      }),
    );
  });
}

// A document's thumbnail as a blob: URL (fetched with the credentials; null when none). A 202
// is a placeholder while the server makes the preview: asked again after Retry-After, a few
// times, and shown meanwhile through onPlaceholder.
export async function thumbnailUrl(documentId, onPlaceholder = () => {}, attempts = 5) {
  const url = `/v1/files/${encodeURIComponent(documentId)}/thumbnail`;
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const response = await fetch(url, { headers: headers() });
    if (!response.ok) return null;
    const image = URL.createObjectURL(await response.blob());
    if (response.status !== 202 || attempt === attempts) return image;
    onPlaceholder(image);
    const seconds = Number(response.headers.get("Retry-After")) || 2;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  }
  return null;
}

// -- OAuth 2.1: authorization code with PKCE, as a public client --------------------------

function randomString(bytes = 32) {
  const values = crypto.getRandomValues(new Uint8Array(bytes));
  return base64url(values);
}

function base64url(bytes) {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// The server knows the dashboard as its own client: one client id for every browser, so a
// consent given once holds everywhere. Its redirect URI is this page on the server's public
// address; opened at another address (the public one is configured elsewhere), the dashboard
// registers itself as a client for this address instead (RFC 7591), once per browser.
async function oauthClient() {
  const response = await fetch("/v1/oauth/dashboard-client", { headers: { Accept: "application/json" } });
  if (!response.ok) throw new ApiError("The server did not say how the dashboard signs in");
  const known = await response.json();
  if (new URL(known.redirect_uri).origin === location.origin) {
    return { id: known.client_id, redirectUri: known.redirect_uri, scope: known.scope };
  }
  return registeredClient(`${location.origin}/app/`, known.scope);
}

async function registeredClient(redirectUri, scope) {
  const stored = JSON.parse(localStorage.getItem(CLIENT) || "null");
  if (stored && stored.redirectUri === redirectUri && stored.scope === scope) return stored;
  const response = await fetch("/v1/oauth/register", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "fincap dashboard",
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope,
    }),
  });
  if (!response.ok) throw new ApiError("The server did not accept the dashboard as a client");
  const registered = { id: (await response.json()).client_id, redirectUri, scope };
  localStorage.setItem(CLIENT, JSON.stringify(registered));
  return registered;
}

// chooseWorkspace: ask with prompt=consent, so the consent page (where the workspace is chosen)
// shows even though the server remembers this person's last choice.
export async function startSignIn({ chooseWorkspace = false } = {}) {
  const client = await oauthClient();
  const verifier = randomString(48);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  const state = randomString(16);
  sessionStorage.setItem(
    PENDING,
    JSON.stringify({ verifier, state, clientId: client.id, redirectUri: client.redirectUri }),
  );
  const params = new URLSearchParams({
    response_type: "code",
    client_id: client.id,
    redirect_uri: client.redirectUri,
    code_challenge: base64url(new Uint8Array(digest)),
    code_challenge_method: "S256",
    state,
    scope: client.scope,
  });
  if (chooseWorkspace) params.set("prompt", "consent");
  location.assign(`/v1/oauth/authorize?${params}`);
}

// Back from the consent page with ?code=…&state=…: exchange the code for tokens.
export async function finishSignIn() {
  const query = new URLSearchParams(location.search);
  if (!query.has("code") && !query.has("error")) return false;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || "null");
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, "", "/app/" + location.hash);
  if (query.has("error")) {
    throw new ApiError(query.get("error_description") || "Sign-in was cancelled");
  }
  if (!pending || pending.state !== query.get("state")) {
    throw new ApiError("The sign-in answer does not match this tab; sign in again");
  }
  const tokens = await tokenRequest({
    grant_type: "authorization_code",
    code: query.get("code"),
    redirect_uri: pending.redirectUri,
    client_id: pending.clientId,
    code_verifier: pending.verifier,
  });
  saveSession({
    kind: "oauth",
    secret: tokens.access_token,
    refresh: tokens.refresh_token,
    clientId: pending.clientId,
    // What this sign-in may do (the role's scopes): the pages disable what it may not.
    scopes: (tokens.scope || "").split(" ").filter(Boolean),
    orgId: null,
  });
  return true;
}

async function tokenRequest(fields) {
  const response = await fetch("/v1/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(body.error_description || body.error || "Sign-in failed");
  return body;
}

async function refreshToken() {
  const current = session();
  if (!current || current.kind !== "oauth" || !current.refresh) return false;
  try {
    const tokens = await tokenRequest({
      grant_type: "refresh_token",
      refresh_token: current.refresh,
      client_id: current.clientId,
    });
    saveSession({ ...current, secret: tokens.access_token, refresh: tokens.refresh_token });
    return true;
  } catch {
    return false;
  }
}

// A one-time sign-in link (#/sign-in-link/sil_…, printed by `fincap admin bootstrap`): the
// server consumes it and opens its sign-in session in this browser; startSignIn() then goes
// through without a password. Throws the server's reason for a used or expired link.
export async function useSignInLink(token) {
  const response = await fetch("/v1/oauth/sign-in-link", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ token }),
  });
  if (response.ok) return;
  const body = await response.json().catch(() => ({}));
  throw new ApiError(body.error_description || `The sign-in link did not work (HTTP ${response.status})`);
}

// Whether this sign-in holds `scope` (unknown for an API key: the server says, naming it).
export function allows(scope) {
  const scopes = session()?.scopes;
  return !scopes || scopes.includes("all") || scopes.includes(scope);
}

export async function signOut() {
  const current = session();
  saveSession(null);
  if (current && current.kind === "oauth") {
    // Revoke the refresh token's family (RFC 7009); the access token dies with it.
    await fetch("/v1/oauth/revoke", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: current.refresh, client_id: current.clientId }),
    }).catch(() => {});
  }
}
