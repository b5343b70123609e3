// What the views share: the workspace list, the preferred currency, the dashboard's filters.

import { graphql, setWorkspace, session, ApiError } from "./api.js";

const FILTERS = "fincap.filters";

export const state = {
  workspaces: [],
  workspace: null, // {id, name, role, preferredCurrency}
  categories: [],
  filters: loadFilters(),
};

function loadFilters() {
  try {
    return JSON.parse(sessionStorage.getItem(FILTERS)) || {};
  } catch {
    return {};
  }
}

export function setFilters(filters) {
  state.filters = Object.fromEntries(Object.entries(filters).filter(([k, v]) => v && FILTER_KEYS.includes(k)));
  sessionStorage.setItem(FILTERS, JSON.stringify(state.filters));
}

// The overview's filters live in the address (#/?from=…&category=…): a link shares them, a
// reload keeps them, back and forward step through them. "range=all" turns the default off.
export const FILTER_KEYS = ["from", "to", "category", "docType", "merchant", "range"];

// The Documents page keeps more in its address (amounts, status, sort…): it passes its own
// `keys` and `path` (#/documents).
export function filtersFromHash(hash = location.hash, keys = FILTER_KEYS) {
  const query = hash.split("?")[1] || "";
  const params = new URLSearchParams(query);
  return Object.fromEntries(keys.filter((k) => params.get(k)).map((k) => [k, params.get(k)]));
}

export function filtersHash(filters, { path = "#/", keys = FILTER_KEYS } = {}) {
  const params = new URLSearchParams(keys.filter((k) => filters[k]).map((k) => [k, filters[k]]));
  const query = params.toString();
  return query ? `${path}?${query}` : path;
}

// With no dates and no "range=all": the last 12 months, this month included.
export function defaultRange(today = new Date()) {
  const start = new Date(Date.UTC(today.getFullYear(), today.getMonth() - 11, 1));
  const end = new Date(Date.UTC(today.getFullYear(), today.getMonth() + 1, 0));
  return { from: start.toISOString().slice(0, 10), to: end.toISOString().slice(0, 10) };
}

export function effectiveFilters(filters = state.filters) {
  if (filters.range === "all" || filters.from || filters.to) return filters;
  return { ...filters, ...defaultRange() };
}

function escapeRegex(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// The filters as a where clause (the same typed clause REST and MCP callers send).
export function whereClause(filters = state.filters) {
  const conditions = [];
  if (filters.from) conditions.push({ field: "docDate", op: "gte", value: filters.from });
  if (filters.to) conditions.push({ field: "docDate", op: "lte", value: filters.to });
  if (filters.category) conditions.push({ field: "category", op: "eq", value: filters.category });
  if (filters.docType) conditions.push({ field: "docType", op: "eq", value: filters.docType });
  if (filters.merchant) {
    conditions.push({ field: "merchant", op: "regex", value: escapeRegex(filters.merchant) });
  }
  // The Documents page's filters (amounts as decimal text, "12.50"; a processing status).
  if (filters.amountMin) conditions.push({ field: "amount", op: "gte", value: filters.amountMin });
  if (filters.amountMax) conditions.push({ field: "amount", op: "lte", value: filters.amountMax });
  if (filters.status) conditions.push({ field: "processingStatus", op: "eq", value: filters.status });
  return conditions.length ? { logic: "and", conditions } : null;
}

export const DOC_TYPES = ["receipt", "invoice", "other"];

// Run a query that selects `workspacesList { … }` and `workspace { … }` together (one
// request). With no workspace chosen yet, choose the first one listed and ask again.

export const WORKSPACES = `workspacesList { currentOrgId workspaces { id name role } }`;

export async function loadWithWorkspace(query, variables) {
  let body = await graphql(query, variables);
  const listed = body.data?.workspacesList?.workspaces || [];
  if (!body.data?.workspace && listed.length && !session()?.orgId) {
    setWorkspace(listed[0].id);
    body = await graphql(query, variables);
  }
  const errors = body.errors || [];
  if (!body.data?.workspace) {
    const first = errors[0];
    throw new ApiError(first ? first.message : "No workspace to show", first?.extensions?.code, first?.extensions?.status);
  }
  state.workspaces = body.data.workspacesList?.workspaces || state.workspaces;
  const ws = body.data.workspace;
  state.workspace = { ...(state.workspace || {}), ...ws };
  if (!session()?.orgId) setWorkspace(ws.id);
  return body.data;
}
