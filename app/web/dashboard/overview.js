// The main page: totals, spend by month and by category, the filters, the latest documents.
// One GraphQL request (workspace list, both charts and the list) per render, and again when
// document events arrive (live.js), debounced.

import { h, money, monthLabel, errorBox } from "./dom.js";
import { columnChart, barChart } from "./charts.js";
import { onDocumentEvent, debounce } from "./live.js";
import { state, setFilters, whereClause, loadWithWorkspace, WORKSPACES, DOC_TYPES, filtersFromHash, filtersHash, effectiveFilters } from "./state.js";
import { listHash } from "./listing.js";

// At most one refresh per second however many events arrive (a bulk edit sends hundreds).
const REFRESH_MS = 1000;
// Categories beyond the largest TOP_CATEGORIES are one "Other" bar.
const TOP_CATEGORIES = 8;
// "New": received in the last NEW_DAYS days, whatever date the document bears (the line under
// the range says so).
export const NEW_DAYS = 7;

export const OVERVIEW_QUERY = `
query Overview($byMonth: CountDocumentsInput, $byCategory: CountDocumentsInput, $latest: SearchDocumentsInput,
  $newBefore: CountDocumentsInput, $newElse: CountDocumentsInput, $hasFrom: Boolean = false, $ranged: Boolean = false) {
  ${WORKSPACES}
  workspace {
    id name role preferredCurrency documentCount archivedCount
    byMonth: counts(input: $byMonth) {
      count
      preferredTotal { amount currency converted }
      groups { key count preferredTotal { amount } }
    }
    byCategory: counts(input: $byCategory) {
      groups { key count preferredTotal { amount } }
      groupsTruncated
    }
    latest: documents(input: $latest) {
      documents { id merchant amount currency docDate category docType }
    }
    newBefore: counts(input: $newBefore) @include(if: $hasFrom) { count }
    newElse: counts(input: $newElse) @include(if: $ranged) { count }
  }
}`;

export function overviewVariables(now = new Date()) {
  const filters = effectiveFilters();
  const where = whereClause(filters);
  return {
    // fillGaps: every month of the range, empty ones as 0, so the axis has no holes.
    byMonth: { groupBy: "month", where, fillGaps: true },
    byCategory: { groupBy: "category", where },
    latest: { limit: 10, sortBy: "docDate", sortOrder: -1, useSearch: false, where },
    ...outsideVariables(filters, now),
  };
}

// New documents the range leaves out, counted with the other filters: those dated before it, and
// those dated after it or not dated at all. A receipt from 2019 uploaded today is in neither
// chart; the overview says so instead of letting it seem lost.
function outsideVariables(filters, now) {
  if (!filters.from && !filters.to) return {};
  const others = whereClause({ ...filters, from: "", to: "" })?.conditions || [];
  const since = new Date(now.getTime() - NEW_DAYS * 86400000).toISOString();
  const base = [...others, { field: "receivedAt", op: "gte", value: since }];
  const later = [{ field: "docDate", op: "exists", value: false }];
  if (filters.to) later.push({ field: "docDate", op: "gt", value: filters.to });
  return {
    ranged: true,
    hasFrom: Boolean(filters.from),
    newBefore: filters.from ? { where: { logic: "and", conditions: [...base, { field: "docDate", op: "lt", value: filters.from }] } } : null,
    newElse: { where: { logic: "and", conditions: [...base, { logic: "or", conditions: later }] } },
  };
}

// The server sends every month of the range (fillGaps); documents without a date have no bar.
function monthRows(groups) {
  return groups
    .filter((g) => g.key)
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .map((g) => ({
      key: g.key,
      label: monthLabel(g.key),
      short: monthLabel(g.key).replace(/ \d{2}(\d{2})$/, " ’$1"),
      value: Number(g.preferredTotal?.amount || 0),
      count: g.count,
    }));
}

// The largest categories, and the rest (those listed past them and any the server cut off) as
// "Other": the total minus the bars shown, so the bars add up to the total.
function categoryRows(categories, totalAmount) {
  if (categories.length <= TOP_CATEGORIES) return categories;
  const top = categories.slice(0, TOP_CATEGORIES);
  const shown = top.reduce((sum, c) => sum + c.value, 0);
  const rest = categories.slice(TOP_CATEGORIES);
  const value = Math.max(Number(totalAmount || 0) - shown, rest.reduce((sum, c) => sum + c.value, 0));
  const count = rest.reduce((sum, c) => sum + c.count, 0);
  const named = rest.length === 1 ? "1 category" : `${rest.length} categories`;
  const hint = `Show the ${named} in “Other”`;
  return [...top, { key: null, other: true, label: `Other (${named})`, hint, value, count }];
}

// Spend by category; "Other" opens in place into every category it holds (each then a filter
// like the others), focus on the first of them so a keyboard user carries on from there.
function categoryChart(categories, totalAmount, currency, pick) {
  const chart = (rows) =>
    barChart({
      id: "chart-categories",
      title: `Spend by category (${currency})`,
      rows,
      currency,
      onPick: (row) => {
        if (row.other) {
          const opened = chart(categories);
          document.getElementById("chart-categories").closest("figure").replaceWith(opened);
          opened.querySelectorAll(".hbar-label")[TOP_CATEGORIES]?.focus();
        } else if (row.key) {
          pick({ category: row.key });
        }
      },
    });
  return chart(categoryRows(categories, totalAmount));
}

function lastDay(key) {
  const [year, month] = key.split("-").map(Number);
  return new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10);
}

export async function overviewView({ rerender }) {
  setFilters(filtersFromHash()); // the address is the truth: shared links, reload, back/forward
  const data = await loadWithWorkspace(OVERVIEW_QUERY, overviewVariables());
  void rerender;
  const view = overviewContent(data);
  followChanges(view);
  return view;
}

// Documents change by themselves (uploads finishing, rules, other people): on their events the
// overview reads itself again, at most once per REFRESH_MS, and replaces itself in place (no
// focus move, no new history entry); not while a filter is being typed.
function followChanges(first) {
  let view = first;
  const refresh = debounce(async () => {
    if (!view.isConnected) return;
    if (view.querySelector("form")?.contains(document.activeElement)) {
      refresh();
      return;
    }
    const data = await loadWithWorkspace(OVERVIEW_QUERY, overviewVariables());
    if (!view.isConnected) return;
    const next = overviewContent(data);
    view.replaceWith(next);
    view = next;
    window.__fincapOverviewRefreshes = (window.__fincapOverviewRefreshes || 0) + 1;
  }, REFRESH_MS);
  const stop = onDocumentEvent(() => {
    if (view.isConnected) refresh();
    else stop(); // the person went to another page
  });
}

function overviewContent(data) {
  const ws = data.workspace;
  const currency = ws.preferredCurrency;
  const categories = (ws.byCategory?.groups || [])
    .map((g) => ({ key: g.key, label: g.key || "Uncategorized", value: Number(g.preferredTotal.amount), count: g.count }))
    .sort((a, b) => b.value - a.value);
  state.categories = [...new Set([...categories.map((c) => c.key).filter(Boolean), ...state.categories])].sort();
  const months = monthRows(ws.byMonth?.groups || []);
  const total = ws.byMonth?.preferredTotal;

  const pick = (filters) => go({ ...state.filters, ...filters });

  return h(
    "div",
    { class: "overview" },
    h("h1", {}, ws.name),
    h(
      "dl",
      { class: "stats" },
      h("div", {}, h("dt", {}, "Spend"), h("dd", { id: "total" }, money(total?.amount, currency))),
      h("div", {}, h("dt", {}, "Documents"), h("dd", { id: "doc-count" }, String(ws.byMonth?.count ?? ws.documentCount))),
      h("div", {}, h("dt", {}, "Archived"), h("dd", {}, String(ws.archivedCount))),
      h("div", {}, h("dt", {}, "Currency"), h("dd", {}, currency)),
    ),
    total && total.converted < (ws.byMonth?.count ?? 0)
      ? h("p", { class: "hint" }, `${(ws.byMonth.count - total.converted).toLocaleString()} documents have no amount in ${currency} yet and are not in the totals.`)
      : null,
    h("p", { class: "hint", id: "range" }, rangeText(effectiveFilters())),
    outsideLine(ws.newBefore?.count || 0, ws.newElse?.count || 0),
    filtersForm(),
    h(
      "div",
      { class: "charts" },
      columnChart({
        id: "chart-months",
        title: `Spend by month (${currency})`,
        rows: months,
        currency,
        onPick: (row) => pick({ from: `${row.key}-01`, to: lastDay(row.key) }),
      }),
      categoryChart(categories, total?.amount, currency, pick),
    ),
    h("h2", {}, "Latest documents"),
    latestTable(ws.latest?.documents || []),
    h("p", {}, h("a", { href: "#/documents" }, "All documents and search →")),
  );
}

// "3 new documents dated before this range …", with a link to them on the Documents page (all
// dates, the newest added first, the overview's other filters kept).
function outsideLine(before, other) {
  if (!before && !other) return null;
  const documents = (n) => `${n.toLocaleString()} new document${n === 1 ? "" : "s"}`;
  const parts = [];
  if (before) parts.push(`${documents(before)} dated before this range`);
  if (other) parts.push(`${before ? other.toLocaleString() : documents(other)} dated after it or undated`);
  const { category, docType, merchant } = state.filters;
  return h(
    "p",
    { class: "outside-range", id: "outside-range" },
    `${parts.join(" and ")} (added in the last ${NEW_DAYS} days; not in these totals). `,
    h("a", { href: listHash({ category, docType, merchant }), id: "outside-link" }, "Show them, the newest added first →"),
  );
}

function latestTable(documents) {
  if (!documents.length) {
    return h("p", { class: "empty" }, "No documents match. ", h("a", { href: "#/upload" }, "Upload a receipt"), ".");
  }
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { class: "documents", id: "latest" },
      h("thead", {}, h("tr", {}, ["Date", "Merchant", "Category", "Amount"].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        documents.map((d) =>
          h(
            "tr",
            {},
            h("td", {}, d.docDate || "—"),
            h("td", {}, h("a", { href: `#/documents/${encodeURIComponent(d.id)}` }, d.merchant || "(no merchant)")),
            h("td", {}, d.category || "—"),
            h("td", { class: "num" }, money(d.amount, d.currency)),
          ),
        ),
      ),
    ),
  );
}

function field(id, label, input) {
  return h("div", { class: "field" }, h("label", { for: id }, label), input);
}

function rangeText(f) {
  if (!f.from && !f.to) return "All time";
  const isDefault = !state.filters.from && !state.filters.to;
  return `${isDefault ? "Last 12 months: " : ""}${f.from || "…"} to ${f.to || "…"}`;
}

// A new address for new filters: a history entry, and the hash change renders it.
function go(filters) {
  const { range, ...rest } = filters;
  location.hash = filtersHash(rest.from || rest.to ? rest : { ...rest, range });
}

export function filtersForm() {
  const f = state.filters;
  const shown = effectiveFilters(f);
  const from = h("input", { id: "f-from", type: "date", value: shown.from || "" });
  const to = h("input", { id: "f-to", type: "date", value: shown.to || "" });
  const category = h(
    "select",
    { id: "f-category" },
    h("option", { value: "" }, "All categories"),
    state.categories.map((c) => h("option", { value: c, selected: c === f.category }, c)),
  );
  const docType = h(
    "select",
    { id: "f-doctype" },
    h("option", { value: "" }, "All types"),
    DOC_TYPES.map((t) => h("option", { value: t, selected: t === f.docType }, t)),
  );
  const merchant = h("input", { id: "f-merchant", type: "search", value: f.merchant || "", placeholder: "e.g. Tesco" });
  const active = Object.keys(f).length;
  // Open on a wide screen or when filters are set; on a phone the charts come first.
  const open = active > 0 || window.matchMedia("(min-width: 48rem)").matches;
  return h(
    "details",
    { class: "filters-box", open },
    h("summary", {}, active ? `Filters (${active})` : "Filters"),
    h(
    "form",
    {
      class: "filters",
      "aria-label": "Filters",
      onsubmit: (event) => {
        event.preventDefault();
        if (from.value && to.value && from.value > to.value) {
          event.target.append(errorBox(new Error("The start date is after the end date")));
          return;
        }
        const picked = { category: category.value, docType: docType.value, merchant: merchant.value.trim() };
        // The default range unchanged stays the default (a shorter address, "Clear" not offered).
        const defaults = effectiveFilters({});
        const dates = from.value === defaults.from && to.value === defaults.to ? {} : { from: from.value, to: to.value };
        go({ ...picked, ...dates, range: from.value || to.value ? undefined : "all" });
      },
    },
    field("f-from", "From", from),
    field("f-to", "To", to),
    field("f-category", "Category", category),
    field("f-doctype", "Type", docType),
    field("f-merchant", "Merchant", merchant),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Apply"),
      f.range === "all"
        ? null
        : h("button", { type: "button", id: "all-time", onclick: () => go({ ...f, from: "", to: "", range: "all" }) }, "All time"),
      active ? h("button", { type: "button", onclick: () => go({}) }, `Clear ${active} filter${active > 1 ? "s" : ""}`) : null,
    ),
  ),
  );
}
