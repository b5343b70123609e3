// The documents as a table: a checkbox per row, sortable headers (the sort is the server's, so it
// holds across pages), and a cell per row where bulk actions report what happened to it. On a
// phone each row is a small card (site.css), the column names beside the values.

import { h, money } from "./dom.js";
import { SORTS, COLUMN_KEYS } from "./listing.js";
import { chips } from "./tags.js";

const COLUMNS = [
  { key: "docDate", label: "Date", cell: (d) => d.docDate || "—" },
  {
    key: "merchant",
    label: "Merchant",
    cell: (d) => h("a", { href: `#/documents/${encodeURIComponent(d.id)}`, class: "doc-name" }, d.merchant || "(no merchant yet)"),
  },
  { key: "amount", label: "Amount", cell: (d) => money(d.amount, d.currency), num: true },
  { key: "convertedAmount", label: "Converted", cell: (d) => convertedCell(d), num: true },
  { key: "category", label: "Category", cell: (d) => d.category || "—" },
  { key: "tags", label: "Tags", cell: (d) => chips(d.tags) },
  { key: "docType", label: "Type", cell: (d) => d.docType || "—" },
  { key: "processingStatus", label: "Status", cell: (d) => statusCell(d) },
  { key: "receivedAt", label: "Added", cell: (d) => addedCell(d.receivedAt) },
];

// The amount in the workspace's currency, with the rate and its date (the document's) on hover.
function convertedCell(doc) {
  if (doc.convertedAmount == null || !doc.preferredCurrency) return "—";
  const rate = doc.conversionRate && doc.currency !== doc.preferredCurrency
    ? `${doc.currency} → ${doc.preferredCurrency} at ${doc.conversionRate}, the rate of ${doc.docDate || "its date"}`
    : null;
  return h("span", { title: rate }, money(doc.convertedAmount, doc.preferredCurrency));
}

// When it arrived, short: the time today, the day otherwise; the full moment on hover.
function addedCell(receivedAt) {
  if (!receivedAt) return "—";
  const when = new Date(receivedAt);
  const today = when.toDateString() === new Date().toDateString();
  const text = today
    ? when.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
    : when.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
  return h("time", { datetime: receivedAt, title: when.toLocaleString() }, text);
}

function statusCell(doc) {
  const status = doc.processingStatus || "processed";
  return [
    h("span", { class: `badge status-${status}` }, status),
    doc.archived ? h("span", { class: "badge" }, "archived") : null,
    doc.duplicateOfId ? h("span", { class: "badge warn" }, "possible duplicate") : null,
  ];
}

// Ticks for the columns to show (`shown`: their keys); `onChange(keys, key)` with the new
// choice, in the table's order, and the column just ticked or unticked. The merchant cannot be
// hidden: it is the link to the document. `focusKey`: the list was drawn again after that
// column's tick, so the box is open with the focus back on it (a keyboard keeps its place).
export function columnChooser(shown, onChange, focusKey = null) {
  const boxes = COLUMNS.map((c) =>
    h("input", { type: "checkbox", id: `col-${c.key}`, value: c.key, checked: shown.includes(c.key), disabled: c.key === "merchant" }),
  );
  const changed = (event) => onChange(boxes.filter((b) => b.checked).map((b) => b.value), event.target.value);
  for (const box of boxes) box.addEventListener("change", changed);
  const again = boxes.find((b) => b.value === focusKey);
  if (again) requestAnimationFrame(() => again.focus());
  return h(
    "details",
    { class: "columns-box", id: "columns-box", open: Boolean(again) },
    h("summary", {}, "Columns"),
    h(
      "fieldset",
      { class: "columns-choice" },
      h("legend", { class: "visually-hidden" }, "Columns shown"),
      COLUMNS.map((c, i) => h("label", { for: `col-${c.key}` }, boxes[i], ` ${c.label}`)),
    ),
  );
}

// `sort` is {by, order} or null (search results come in relevance order); `onSort(key)` asks
// for another order; `onSelect()` runs when the selection changes; `columns` the keys of the
// columns shown, in their order (all by default).
export function documentTable({ sort, onSort, onSelect, columns = COLUMN_KEYS }) {
  const shown = columns.map((key) => COLUMNS.find((c) => c.key === key)).filter(Boolean);
  const rows = new Map(); // id -> {doc, tr, box, note}
  const all = h("input", { type: "checkbox", id: "select-page", "aria-label": "Select every document on the page" });
  all.addEventListener("change", () => {
    for (const row of rows.values()) row.box.checked = all.checked;
    onSelect();
  });
  const header = (column) => {
    if (!sort || !SORTS[column.key]) return h("th", { scope: "col", class: column.num ? "num" : null }, column.label);
    const active = sort.by === column.key;
    const next = active ? (sort.order === "asc" ? "descending" : "ascending") : SORTS[column.key].first === "asc" ? "ascending" : "descending";
    return h(
      "th",
      { scope: "col", class: column.num ? "num" : null, "aria-sort": active ? (sort.order === "asc" ? "ascending" : "descending") : null },
      h(
        "button",
        { type: "button", class: "sort", "data-sort": column.key, title: `Sort by ${column.label.toLowerCase()}, ${next}`, onclick: () => onSort(column.key) },
        column.label,
        h("span", { class: "arrow", "aria-hidden": "true" }, active ? (sort.order === "asc" ? " ▲" : " ▼") : ""),
      ),
    );
  };
  const body = h("tbody", { id: "doc-rows" });
  const table = h(
    "table",
    { class: "documents doc-table", id: "doc-table" },
    h("caption", { class: "visually-hidden" }, sort ? `Documents, sorted by ${SORTS[sort.by].label.toLowerCase()}, ${sort.order}ending` : "Documents, closest matches first"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col", class: "pick" }, all), shown.map(header), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Bulk action result")))),
    body,
  );

  function rowOf(doc) {
    const box = h("input", { type: "checkbox", class: "pick-row", value: doc.id, "aria-label": `Select ${doc.merchant || doc.id}` });
    box.addEventListener("change", () => {
      all.checked = [...rows.values()].every((r) => r.box.checked);
      onSelect();
    });
    const note = h("td", { class: "row-note", "data-label": "Result" });
    const tr = h(
      "tr",
      { "data-id": doc.id },
      h("td", { class: "pick" }, box),
      shown.map((c) => h("td", { class: c.num ? "num" : null, "data-col": c.key, "data-label": c.label }, c.cell(doc))),
      note,
    );
    const row = { doc, tr, box, note };
    rows.set(doc.id, row);
    return row;
  }

  function append(documents) {
    for (const doc of documents) {
      if (rows.has(doc.id)) continue;
      body.append(rowOf(doc).tr);
    }
    all.checked = false;
  }

  // A row that changed elsewhere is marked for a moment (site.css), so the eye finds it.
  function flash(row) {
    row.tr.classList.remove("changed");
    void row.tr.offsetWidth; // restart the fade when it changes again
    row.tr.classList.add("changed");
  }

  return {
    element: h("div", { class: "table-wrap" }, table),
    append,
    rows,
    selected: () => [...rows.values()].filter((r) => r.box.checked),
    // New documents above the others (a new upload, in a list of the newest first).
    prepend(documents) {
      for (const doc of [...documents].reverse()) {
        if (rows.has(doc.id)) continue;
        const row = rowOf(doc);
        body.prepend(row.tr);
        flash(row);
      }
      all.checked = false;
    },
    // One row's new values (after a bulk change, or an event from elsewhere: `live`), in place:
    // the row keeps its place, its checkbox and the keyboard focus (a link in a redrawn cell is a
    // new element; focus moves to its successor).
    update(id, changes, { live = false } = {}) {
      const row = rows.get(id);
      if (!row) return;
      row.doc = { ...row.doc, ...changes };
      row.box.setAttribute("aria-label", `Select ${row.doc.merchant || row.doc.id}`);
      for (const c of shown) {
        const cell = row.tr.querySelector(`[data-col="${c.key}"]`);
        const focused = cell.contains(document.activeElement);
        cell.replaceChildren(...[c.cell(row.doc)].flat().filter(Boolean));
        if (focused) cell.querySelector("a, button")?.focus({ preventScroll: true });
      }
      if (live) flash(row);
    },
    note(id, text, kind = "") {
      const row = rows.get(id);
      if (!row) return;
      row.note.replaceChildren(text ? h("span", { class: kind }, text) : "");
      row.tr.dataset.result = kind || "";
    },
    remove(id) {
      const row = rows.get(id);
      if (!row) return;
      // Focus in a row that leaves goes to the row that takes its place, not to the page's top.
      if (row.tr.contains(document.activeElement)) {
        const next = row.tr.nextElementSibling || row.tr.previousElementSibling;
        next?.querySelector(".doc-name")?.focus({ preventScroll: true });
      }
      row.tr.remove();
      rows.delete(id);
    },
  };
}
