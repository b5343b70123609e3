// What the Documents page shows, as its address says it (#/documents?from=…&sort=amount&order=asc):
// the overview's filters, amounts, processing status, search words, archived, duplicates, and
// the sort. Unlike the overview it has no default date range: it opens on every document, the
// newest added first, so a receipt dated 2019 uploaded a minute ago is at the top, not hidden
// before a 12-month window. The address is the truth: a link shares the view, a reload keeps
// it, back and forward step through it.

import { FILTER_KEYS, filtersFromHash, filtersHash, whereClause, DOC_TYPES } from "./state.js";

export const LIST_PATH = "#/documents";
export const LIST_KEYS = [...FILTER_KEYS, "amountMin", "amountMax", "status", "q", "archived", "dups", "tags", "untagged", "sort", "order", "view", "where", "cols"];
export const PAGE = 50;

// The columns a person can sort by, with the capability's sortBy and the first order of a click
// (newest and largest first; names from A).
export const SORTS = {
  receivedAt: { label: "Added", first: "desc" },
  docDate: { label: "Date", first: "desc" },
  merchant: { label: "Merchant", first: "asc" },
  amount: { label: "Amount", first: "desc" },
  convertedAmount: { label: "Converted", first: "desc" },
  category: { label: "Category", first: "asc" },
  docType: { label: "Type", first: "asc" },
  processingStatus: { label: "Status", first: "asc" },
};

// The table's columns in their order (a saved view's `columns` take these names). The address
// lists the chosen ones ("cols=docDate,merchant,amount"); none listed: all of them.
export const COLUMN_KEYS = ["docDate", "merchant", "amount", "convertedAmount", "category", "tags", "docType", "processingStatus", "receivedAt"];

// With no sort in the address: the newest added first.
export const DEFAULT_SORT = "receivedAt";

export const STATUSES = ["queued", "processing", "processed", "warning", "skipped", "failed"];

// What an address may hold, so a hand-edited or stale link shows the list without the odd value
// rather than an error (the API would refuse it as a where clause).
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DECIMAL = /^-?\d{1,13}(\.\d{1,2})?$/;
const VALID = {
  from: (v) => DATE.test(v),
  to: (v) => DATE.test(v),
  amountMin: (v) => DECIMAL.test(v),
  amountMax: (v) => DECIMAL.test(v),
  docType: (v) => DOC_TYPES.includes(v),
  status: (v) => STATUSES.includes(v),
  archived: (v) => ["only", "include"].includes(v),
  sort: (v) => v in SORTS,
  order: (v) => v === "asc" || v === "desc",
  range: (v) => v === "all",
  untagged: (v) => v === "1",
  view: (v) => /^view_[\w-]{1,60}$/.test(v),
  cols: (v) => v.split(",").every((k) => COLUMN_KEYS.includes(k)),
  where: (v) => whereOf({ where: v }) !== null,
};

// Any where clause, as JSON in the address (#/documents?where={"logic":"and","conditions":[…]}):
// what a rule's "matches N documents" opens. Not a clause (bad JSON, no conditions): ignored.
// The API checks its fields and operators, and says what it refuses.
export function whereOf(list) {
  if (!list.where || list.where.length > 8000) return null;
  try {
    const clause = JSON.parse(list.where);
    return clause && typeof clause === "object" && Array.isArray(clause.conditions) ? clause : null;
  } catch {
    return null;
  }
}

// An and-clause's conditions join the list's own; another (or, nor) goes in as one group.
function addressed(clause) {
  if (!clause) return [];
  return !clause.logic || clause.logic === "and" ? clause.conditions : [clause];
}

// The Documents page listing exactly what `where` matches.
export function whereHref(where) {
  return listHash({ where: JSON.stringify(where) });
}

// The tags chosen in the filter: one name a line in the address ("tags=Q4%0ATravel"), the one
// character no tag name holds.
export function tagsOf(list) {
  return (list.tags || "").split("\n").map((t) => t.trim()).filter(Boolean);
}

export function listFromHash(hash = location.hash) {
  const found = filtersFromHash(hash, LIST_KEYS);
  return Object.fromEntries(Object.entries(found).filter(([k, v]) => !VALID[k] || VALID[k](v)));
}

export function listHash(list) {
  return filtersHash(list, { path: LIST_PATH, keys: LIST_KEYS });
}

export function sortOf(list) {
  const by = SORTS[list.sort] ? list.sort : DEFAULT_SORT;
  const order = list.order === "asc" || list.order === "desc" ? list.order : SORTS[by].first;
  return { by, order };
}

// The where clause of the list and of its count: the same one, so the count is the list's.
export function listWhere(list) {
  const where = whereClause(list);
  // A saved view's clause (applyView), and the page's own filters on top of it.
  const conditions = [
    ...(list.viewWhere ? [list.viewWhere] : []),
    ...addressed(whereOf(list)),
    ...(where ? where.conditions : []),
  ];
  if (list.dups) conditions.push({ field: "duplicateOf", op: "exists", value: true });
  // Untagged, or carrying every tag chosen (untagged wins: both together match nothing).
  if (list.untagged) conditions.push({ field: "tags", op: "exists", value: false });
  else if (tagsOf(list).length) conditions.push({ field: "tags", op: "all", value: tagsOf(list) });
  return conditions.length ? { logic: "and", conditions } : null;
}

// The columns shown, in their order; the merchant always (it is the link to the document).
export function columnsOf(list) {
  const chosen = list.cols ? list.cols.split(",").filter((k) => COLUMN_KEYS.includes(k)) : COLUMN_KEYS;
  return chosen.includes("merchant") ? chosen : ["merchant", ...chosen];
}

export function archivedOf(list) {
  return ["only", "include"].includes(list.archived) ? list.archived : "exclude";
}

// A saved view opened by its address (#/documents?view=view_…): its clause under the page's
// filters, and its words, archive filter, sort and columns where the address names none of its own.
export function applyView(list, view) {
  const out = { ...list, viewWhere: view.where || null };
  if (!out.cols && view.columns?.length) out.cols = view.columns.join(",");
  if (!out.q && view.query) out.q = view.query;
  if (!out.archived && view.archived !== "exclude") out.archived = view.archived;
  if (!out.sort && SORTS[view.sortBy]) {
    out.sort = view.sortBy;
    out.order = view.sortOrder === 1 ? "asc" : "desc";
  }
  return out;
}

// documents.search's input for one page. With search words the closest matches come first
// (similarity: a person searching wants the matches, not variety) and the sort is relevance.
export function searchInput(list, cursor = null, limit = PAGE) {
  const words = (list.q || "").trim();
  const { by, order } = sortOf(list);
  return {
    query: words || null,
    useSearch: Boolean(words),
    searchType: "similarity",
    limit,
    sortBy: by,
    sortOrder: order === "asc" ? 1 : -1,
    archived: archivedOf(list),
    where: listWhere(list),
    cursor,
  };
}

export function countInput(list) {
  return { where: listWhere(list), archived: archivedOf(list) };
}

// The fields the table, the bulk actions and the CSV file need, in one selection.
export const ROW_FIELDS = "id merchant amount currency docDate category docType processingStatus archived duplicateOfId receivedAt convertedAmount preferredCurrency conversionRate tags";
