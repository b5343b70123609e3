// The Documents page (a table with server-side sort, filters in the address, a result count,
// bulk actions and CSV export) and one document (extracted fields with their confidence and
// where on the original each was read, line items, inline corrections, archive and restore).

import * as api from "./api.js";
import { h, clear, money, announce, errorBox } from "./dom.js";
import { parseMoney, changeFactor, fractionDigits } from "./numbers.js";
import { state, loadWithWorkspace, WORKSPACES, DOC_TYPES } from "./state.js";
import { LIST_PATH, PAGE, ROW_FIELDS, STATUSES, SORTS, listFromHash, listHash, sortOf, searchInput, countInput, tagsOf, applyView, listWhere, archivedOf, whereOf, columnsOf, COLUMN_KEYS } from "./listing.js";
import { whereSentence } from "./where_words.js";
import { savedView, saveViewForm, viewHeader } from "./views.js";
import { TAGS_LIST, TAGS_PATH, rememberTags, knownTags, chip, documentTags } from "./tags.js";
import { documentTable, columnChooser } from "./table.js";
import { bulkBar } from "./bulk.js";
import { toCsv, download, DOCUMENT_COLUMNS } from "./csv.js";
import { evidencePreview } from "./evidence.js";
import { lineItemsSection } from "./line_items.js";
import { notesSection } from "./notes.js";
import { undoToast } from "./undo.js";
import { followEvents, readShown, sortsBefore, IDS_AT_ONCE } from "./follow.js";

const LIST_QUERY = `
query Documents($input: SearchDocumentsInput, $count: CountDocumentsInput, $categories: CountDocumentsInput) {
  ${WORKSPACES}
  workspace {
    id name preferredCurrency
    documents(input: $input) { documents { ${ROW_FIELDS} } nextCursor found }
    matched: counts(input: $count) { count }
    categoryNames: counts(input: $categories) { groups { key } }
  }
  ${TAGS_LIST}
}`;
const COUNT_QUERY = `query Matched($count: CountDocumentsInput) { workspace { matched: counts(input: $count) { count } } }`;
const MORE_QUERY = `query More($input: SearchDocumentsInput) { workspace { documents(input: $input) { documents { ${ROW_FIELDS} } nextCursor } } }`;
const CSV_PAGE = 100; // the most documents.search returns at once

let lastList = LIST_PATH; // where "← Documents" goes back to: the list as it was left

function go(list) {
  location.hash = listHash(list);
}

function field(id, label, input) {
  return h("div", { class: "field" }, h("label", { for: id }, label), input);
}

function rangeText(list) {
  if (!list.from && !list.to) return "all dates";
  return `dated ${list.from || "…"} to ${list.to || "…"}`;
}

// The tags to filter by: documents carrying every one ticked (the where clause's `all`), or none.
// fillTagFilter(box, tags) draws it again with `tags` (one created on this page), ticks kept.
function tagFilter(list, tags) {
  const box = h("fieldset", { class: "tag-filter", id: "d-tags" });
  fillTagFilter(box, tags, new Set(tagsOf(list)), Boolean(list.untagged));
  return box;
}

function fillTagFilter(box, tags, chosen = new Set([...box.querySelectorAll("input[name=tag]:checked")].map((b) => b.value)), untagged = Boolean(box.querySelector("#d-untagged")?.checked)) {
  clear(
    box,
    h("legend", {}, "Tags (documents with all ticked)"),
    // A name in the address that is no tag (deleted since, or typed) is shown too, to untick.
    [...tags.map((tag) => tag.name), ...[...chosen].filter((name) => !tags.some((tag) => tag.name === name))].map((name) =>
      h("label", {}, h("input", { type: "checkbox", name: "tag", value: name, checked: chosen.has(name) }), chip(name)),
    ),
    h("label", { for: "d-untagged" }, h("input", { type: "checkbox", id: "d-untagged", checked: untagged }), "Untagged"),
    h("a", { href: TAGS_PATH, id: "manage-tags" }, "Manage tags"),
  );
}

function filtersForm(list, categories, tags) {
  const from = h("input", { id: "d-from", type: "date", value: list.from || "" });
  const to = h("input", { id: "d-to", type: "date", value: list.to || "" });
  const amountMin = h("input", { id: "d-amount-min", type: "text", inputmode: "decimal", size: "8", value: list.amountMin || "", autocomplete: "off" });
  const amountMax = h("input", { id: "d-amount-max", type: "text", inputmode: "decimal", size: "8", value: list.amountMax || "", autocomplete: "off" });
  const select = (id, all, values, chosen) =>
    h("select", { id }, h("option", { value: "" }, all), values.map((v) => h("option", { value: v, selected: v === chosen }, v)));
  const category = select("d-category", "All categories", categories, list.category);
  const docType = select("d-type", "All types", DOC_TYPES, list.docType);
  const status = select("d-status", "Any status", STATUSES, list.status);
  const search = h("input", { id: "search", type: "search", value: list.q || "", placeholder: "e.g. coffee in Berlin, hotel invoice" });
  const archived = h(
    "select",
    { id: "archived" },
    [["exclude", "Active"], ["only", "Archived"], ["include", "Active and archived"]].map(([v, t]) => h("option", { value: v, selected: v === (list.archived || "exclude") }, t)),
  );
  const duplicates = h("input", { id: "duplicates", type: "checkbox", checked: Boolean(list.dups) });
  const problem = h("p", { class: "error", role: "alert", id: "filter-error" });
  const active = ["from", "to", "amountMin", "amountMax", "category", "docType", "status", "q", "archived", "dups", "tags", "untagged"].filter((k) => list[k]).length;
  const tagBox = tagFilter(list, tags);
  return h(
    "form",
    {
      class: "search filters",
      role: "search",
      "aria-label": "Filters",
      onsubmit: (event) => {
        event.preventDefault();
        problem.textContent = "";
        const amounts = {};
        for (const [key, input, label] of [["amountMin", amountMin, "Amount from"], ["amountMax", amountMax, "Amount to"]]) {
          const read = parseMoney(input.value);
          if (read.error) {
            problem.textContent = `${label}: ${read.error}`;
            input.focus();
            return;
          }
          amounts[key] = read.text || "";
        }
        if (amounts.amountMin && amounts.amountMax && Number(amounts.amountMin) > Number(amounts.amountMax)) {
          problem.textContent = "Amount from is more than Amount to";
          return;
        }
        if (from.value && to.value && from.value > to.value) {
          problem.textContent = "The start date is after the end date";
          return;
        }
        go({
          from: from.value,
          to: to.value,
          ...amounts,
          category: category.value,
          docType: docType.value,
          status: status.value,
          q: search.value.trim(),
          archived: archived.value === "exclude" ? "" : archived.value,
          dups: duplicates.checked ? "1" : "",
          tags: [...tagBox.querySelectorAll("input[name=tag]:checked")].map((b) => b.value).join("\n"),
          untagged: tagBox.querySelector("#d-untagged").checked ? "1" : "",
          where: list.where,
          sort: list.sort,
          order: list.order,
        });
      },
    },
    h("div", { class: "field grow" }, h("label", { for: "search" }, "Search"), search),
    field("d-from", "From", from),
    field("d-to", "To", to),
    field("d-amount-min", "Amount from", amountMin),
    field("d-amount-max", "Amount to", amountMax),
    field("d-category", "Category", category),
    field("d-type", "Type", docType),
    field("d-status", "Status", status),
    field("archived", "Show", archived),
    h("div", { class: "field check" }, duplicates, h("label", { for: "duplicates" }, "Possible duplicates only")),
    tagBox,
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Apply"),
      active ? h("button", { type: "button", id: "d-clear", onclick: () => go({ sort: list.sort, order: list.order }) }, "Clear filters") : null,
    ),
    problem,
  );
}

// Every document the filters match, page after page (for the CSV file), with progress.
async function allMatching(list, onProgress) {
  const documents = [];
  let cursor = null;
  do {
    const next = await api.data(MORE_QUERY, { input: searchInput(list, cursor, CSV_PAGE) });
    const page = next.workspace.documents;
    documents.push(...page.documents);
    onProgress(documents.length);
    cursor = page.nextCursor;
  } while (cursor);
  return documents;
}

// The column whose tick drew the list again: its box gets the focus back.
let columnTicked = null;

export async function documentsView() {
  const asked = listFromHash();
  lastList = listHash(asked);
  // A saved view (#/documents?view=…): its clause, words and sort under the address's own.
  const view = asked.view ? await savedView(asked.view) : null;
  const list = view ? applyView(asked, view) : asked;
  const ranked = Boolean((list.q || "").trim());
  const sort = ranked ? null : sortOf(list);
  const data = await loadWithWorkspace(LIST_QUERY, { input: searchInput(list), count: countInput(list), categories: { groupBy: "category" } });
  const ws = data.workspace;
  if (!ws.documents || !ws.matched) throw new Error("The documents could not be listed; try again, or clear the filters.");
  const page = ws.documents;
  let matched = ws.matched.count;
  const categories = [...new Set([...(ws.categoryNames?.groups || []).map((g) => g.key).filter(Boolean), ...state.categories])].sort();
  state.categories = categories;
  const tags = rememberTags(data.tagsList?.tags);

  let shown = 0;
  const currencies = new Set(); // of the rows shown: an amount sort over several needs a word
  const summary = h("p", { id: "result-count", class: "result-count", "data-count": String(matched) });
  const sayShown = () => {
    const what = `${matched.toLocaleString()} document${matched === 1 ? "" : "s"} match${matched === 1 ? "es" : ""} (${rangeText(list)})`;
    // Amounts sort as written: say so when the rows mix currencies, or ¥21,780 above €362
    // reads as a mistake, and point at the converted column, which compares them.
    const mixed = sort && sort.by === "amount" && currencies.size > 1
      ? " Amounts are sorted as written, each in its own currency; sort by Converted to compare them."
      : "";
    // A search says how many it found (the server's count: every page together), best first.
    const found = page.found ?? 0;
    summary.textContent = ranked
      ? `${found.toLocaleString()} document${found === 1 ? "" : "s"} found for “${list.q.trim()}” (${rangeText(list)}), best first; showing ${shown.toLocaleString()}.`
      : `${what}; showing ${shown.toLocaleString()}.${mixed}`;
  };
  const shownRows = (documents) => {
    table.append(documents);
    shown += documents.length;
    for (const doc of documents) if (doc.currency) currencies.add(doc.currency);
    sayShown();
  };
  const columns = columnsOf(list);
  const table = documentTable({
    columns,
    sort,
    onSort: (key) => {
      const order = sort.by === key ? (sort.order === "asc" ? "desc" : "asc") : SORTS[key].first;
      go({ ...list, sort: key, order });
    },
    onSelect: () => {
      bulk.update();
      csvLabel();
    },
  });
  // After a bulk archive: the count line and the CSV label say what is left (counted again:
  // duplicates archived with a row may match too without being on the page).
  const recount = async () => {
    shown = table.rows.size;
    try {
      matched = (await api.data(COUNT_QUERY, { count: countInput(list) })).workspace.matched.count;
    } catch {
      matched = Math.max(shown, matched - table.selected().length);
    }
    summary.dataset.count = String(matched);
    sayShown();
    csvLabel();
  };
  // After tagging: the rows read again as the list shows them (one no longer matching a tag
  // filter leaves), then counted again.
  const reread = async (ids) => {
    const found = await readShown(MORE_QUERY, searchInput(list), ids);
    for (const id of ids) {
      if (found.has(id)) table.update(id, found.get(id));
      else table.remove(id);
    }
    await recount();
    const box = filters.querySelector("#d-tags");
    if (box) fillTagFilter(box, knownTags());
  };
  const bulk = bulkBar({ table, categories, onArchived: recount, onTagged: reread });
  const filters = filtersForm(list, categories, tags);
  shownRows(page.documents);

  const more = h("div", { class: "more" });
  const showMore = (cursor) => {
    clear(more);
    if (!cursor) return;
    more.append(
      h(
        "button",
        {
          type: "button",
          id: "load-more",
          onclick: async (event) => {
            event.target.disabled = true;
            try {
              const next = (await api.data(MORE_QUERY, { input: searchInput(list, cursor) })).workspace.documents;
              shownRows(next.documents);
              announce(`${next.documents.length} more documents`);
              showMore(next.nextCursor);
            } catch (error) {
              event.target.disabled = false;
              more.append(errorBox(error));
            }
          },
        },
        `Load ${PAGE} more`,
      ),
    );
  };
  showMore(page.nextCursor);

  const csvButton = h("button", { type: "button", id: "csv-download" });
  const csvStatus = h("span", { id: "csv-status", class: "hint", role: "status" });
  const csvLabel = () => {
    const picked = table.selected().length;
    csvButton.textContent = picked ? `Download CSV of the ${picked.toLocaleString()} selected` : `Download CSV of all ${matched.toLocaleString()} matching`;
  };
  csvButton.addEventListener("click", async () => {
    const picked = table.selected().map((r) => r.doc);
    csvButton.disabled = true;
    try {
      const rows = picked.length ? picked : await allMatching(list, (n) => (csvStatus.textContent = `Fetched ${n.toLocaleString()} of ${matched.toLocaleString()}…`));
      download(toCsv(rows, DOCUMENT_COLUMNS), `fincap-documents-${new Date().toISOString().slice(0, 10)}.csv`);
      csvStatus.textContent = `Saved ${rows.length.toLocaleString()} rows`;
      announce(csvStatus.textContent);
    } catch (error) {
      csvStatus.replaceChildren(errorBox(error));
    } finally {
      csvButton.disabled = false;
    }
  });
  csvLabel();

  // data-query says which search the list shows (tests and scripts wait on it).
  const listed = h("div", { id: "doc-list", "data-query": list.q || "", "data-hash": lastList }, table.element);
  const empty = h("p", { class: "empty", id: "no-documents" }, "Nothing matches. ", list.from || list.to ? "Documents dated outside these dates are not shown: empty the dates to see them." : "");
  const shownNow = () => (table.rows.size ? listed : empty);
  let showing = shownNow();
  followList({
    list,
    table,
    sort: ranked ? null : sort,
    alive: () => summary.isConnected,
    changed: ({ added, left }) => {
      for (const doc of added) if (doc.currency) currencies.add(doc.currency);
      const next = shownNow();
      if (next !== showing) showing.replaceWith(next);
      showing = next;
      if (left) bulk.update();
      const said = [added.length ? `${added.length} new` : "", left ? `${left} left the list` : ""].filter(Boolean).join(", ");
      if (said) announce(`Documents changed elsewhere: ${said}`);
      return recount();
    },
  });

  announce(summary.textContent);
  const saveView = saveViewForm(() => ({
    where: listWhere(list),
    query: (list.q || "").trim() || null,
    archived: archivedOf(list),
    sortBy: (sort || sortOf(list)).by,
    sortOrder: (sort || sortOf(list)).order === "asc" ? 1 : -1,
    columns,
  }));
  // A new choice of columns goes into the address (all of them: none named, unless a view with
  // fewer is open), so a reload, a link and a view saved now keep it.
  const chooser = columnChooser(
    columns,
    (keys, key) => {
      columnTicked = key;
      const next = { ...list, cols: keys.join(",") };
      if (keys.length === COLUMN_KEYS.length && !view) delete next.cols;
      go(next);
    },
    columnTicked,
  );
  columnTicked = null;
  return h(
    "div",
    {},
    h("h1", {}, view ? view.name : "Documents"),
    view ? viewHeader(view) : null,
    whereOf(list)
      ? h("p", { class: "meta", id: "where-meta" }, `Only documents where ${whereSentence(whereOf(list))}. `, h("a", { href: listHash({ ...list, where: "" }) }, "Drop this condition"))
      : null,
    h("details", { class: "filters-box", open: window.matchMedia("(min-width: 48rem)").matches || Object.keys(list).some((k) => !["sort", "order"].includes(k)) }, h("summary", {}, "Filters"), filters),
    summary,
    h("div", { class: "list-tools" }, bulk.element, h("div", { class: "actions csv" }, csvButton, csvStatus), chooser, saveView),
    showing,
    more,
  );
}

// The list follows changes made elsewhere (follow.js): a shown row that changed is read again and
// updated in place, or leaves when the list's filter no longer matches it (archived, say); a new
// document (an upload, a restore) joins at the top when the list's order puts it before the first
// row (`sort` null: a ranked search, where only the search knows the place, so it does not join).
// `changed({added, left})` runs after rows came or went, to count the list again.
function followList({ list, table, sort, alive, changed }) {
  const input = searchInput(list);
  followEvents(alive, async ({ changes, lagged }) => {
    const shown = [...table.rows.keys()];
    const touched = lagged ? shown : shown.filter((id) => changes.has(id));
    const arrivals = [...changes].filter(([id, types]) => !table.rows.has(id) && (types.has("document.created") || types.has("document.unarchived"))).map(([id]) => id);
    // Other documents off the page changed too: one that now sorts first (a date set to today in
    // a list of the latest dates) is read along, as far as the last request has room.
    const others = [...changes.keys()].filter((id) => !table.rows.has(id) && !arrivals.includes(id));
    const wanted = [...touched, ...arrivals];
    const room = wanted.length % IDS_AT_ONCE ? IDS_AT_ONCE - (wanted.length % IDS_AT_ONCE) : wanted.length ? 0 : IDS_AT_ONCE;
    wanted.push(...(sort ? others.slice(0, room) : []));
    const found = wanted.length ? await readShown(MORE_QUERY, input, wanted) : new Map();
    if (!alive()) return;
    let left = 0;
    for (const id of touched) {
      const doc = found.get(id);
      if (doc) table.update(id, doc, { live: true });
      else {
        table.remove(id);
        left += 1;
      }
    }
    let added = [];
    if (sort) {
      const firstId = table.element.querySelector("#doc-rows tr")?.dataset.id;
      const first = firstId ? table.rows.get(firstId).doc : null;
      added = wanted
        .filter((id) => !table.rows.has(id))
        .map((id) => found.get(id))
        .filter((doc) => doc && (!first || sortsBefore(doc, first, sort)))
        .sort((a, b) => (sortsBefore(a, b, sort) ? -1 : 1));
      table.prepend(added);
    }
    if (left || added.length || arrivals.length || others.length || lagged) await changed({ added, left });
  });
}

// -- one document ---------------------------------------------------------------------------

export const DOC_FIELDS = `
  id merchant amount currency preferredCurrency conversionRate docDate category docType summary
  invoiceId receiptId paymentStatus paymentMethod paymentMethodEnding taxAmount subtotal
  processingStatus processingReason archived archivedAt source receivedAt
  file { fileName mimeType size }
  evidence { field confidence page box text source warning }
  duplicateOfId duplicateOf { id merchant amount currency docDate }
  duplicates { id merchant amount currency docDate }
  editHistory { field oldValue newValue editedAt via }
  reprocessedAt
  tags
  lineItems { description quantity unitPrice amount }`;

// The document alone, read again when it changes elsewhere.
const DOC_GET = `query Document($input: GetDocumentInput!) { documentsGet(input: $input) { document { ${DOC_FIELDS} } } }`;

const DOC_QUERY = `query Document($input: GetDocumentInput!) {
  ${WORKSPACES}
  workspace { id name preferredCurrency }
  ${TAGS_LIST}
  documentsGet(input: $input) { document { ${DOC_FIELDS} } } }`;

// The fields a person may correct, with their input kind.
export const EDITABLE = [
  ["merchant", "Merchant", "text"],
  ["amount", "Amount", "money"],
  ["currency", "Currency", "currency"],
  ["docDate", "Date", "date"],
  ["category", "Category", "category"],
  ["docType", "Type", "doctype"],
  ["taxAmount", "Tax", "money"],
  ["paymentMethod", "Payment method", "text"],
  ["invoiceId", "Invoice number", "text"],
  ["receiptId", "Receipt number", "text"],
  ["summary", "Summary", "text"],
];

export async function documentView({ id, rerender }) {
  const data = await loadWithWorkspace(DOC_QUERY, { input: { id } });
  if (!data.documentsGet) throw new Error(`Document ${id} was not found`);
  let doc = data.documentsGet.document;
  rememberTags(data.tagsList?.tags);
  const root = h("div", { class: "document" });
  // The original with its evidence boxes: fetched once, kept across repaints after a correction.
  const preview = evidencePreview(doc);
  // What changed elsewhere while the page was open (kept across repaints).
  const elsewhere = h("p", { id: "changed-elsewhere", class: "changed-note", role: "status" });
  let saving = Promise.resolve(); // this page's own correction, under way
  // Its notes read and write themselves: kept across repaints, so a note being typed stays.
  const notes = notesSection(doc.id);

  // `keep`: rows whose correction form is open (field name → row), carried over as they are.
  const paint = (keep = new Map()) => {
    const evidence = new Map((doc.evidence || []).map((e) => [e.field, e]));
    clear(
      root,
      h("p", {}, h("a", { href: lastList, id: "back-to-list" }, "← Documents")),
      h("h1", {}, doc.merchant || "Document"),
      elsewhere,
      h(
        "p",
        { class: "meta" },
        `${doc.id} · ${doc.processingStatus || "processed"}`,
        doc.processingReason ? ` — ${doc.processingReason}` : "",
        doc.file ? ` · ${doc.file.fileName}` : "",
      ),
      h(
        "div",
        { class: "doc-layout" },
        h("div", {}, preview.element, doc.file ? h("p", {}, h("button", { type: "button", onclick: () => openOriginal(doc) }, "Open the original")) : null),
        h(
          "div",
          {},
          h("h2", {}, "Extracted fields"),
          h("dl", { class: "fields", id: "fields" }, EDITABLE.map(([name, label, kind]) => keep.get(name) || fieldRow(name, label, kind, evidence.get(name)))),
          preferredLine(doc),
        ),
      ),
      documentTags(doc, (tags) => save("tags", tags)),
      lineItemsSection(doc, (lines) => save("lineItems", lines)),
      notes,
      duplicatesSection(doc),
      historySection(doc),
      actions(doc),
    );
  };

  const editing = (except = null) => new Map([...root.querySelectorAll(".field-row[data-editing]")].filter((r) => r.dataset.field !== except).map((r) => [r.dataset.field, r]));

  const save = async (name, value) => {
    const request = api.data(
      `mutation Correct($input: UpdateDocumentInput!) { documentsUpdate(input: $input) { document { ${DOC_FIELDS} } } }`,
      { input: { id: doc.id, [name]: value } },
    );
    saving = request.catch(() => {});
    const result = await request;
    doc = result.documentsUpdate.document;
    paint(editing(name));
    announce("Saved");
    const button = root.querySelector(`[data-edit="${name}"]`);
    if (button) button.focus();
  };

  function fieldRow(name, label, kind, evidence) {
    const dd = h("dd", { id: `value-${name}` });
    const confidence = evidence
      ? h(
          "span",
          { class: `confidence ${evidence.confidence < 0.6 ? "low" : ""}`, title: evidence.text ? `Read from: ${evidence.text}` : null },
          `${Math.round(evidence.confidence * 100)}% sure`,
        )
      : null;
    // The value as stored now (it may have changed elsewhere while a correction was open).
    const view = () => {
      delete row.dataset.editing;
      clear(
        dd,
        h("span", { class: "value" }, shownValue(doc, name, kind)),
        confidence,
        h("button", { type: "button", class: "link", "data-edit": name, "aria-label": `Correct ${label}`, onclick: edit }, "Correct"),
      );
    };
    function edit() {
      const value = doc[name]; // what the person saw when they began
      row.dataset.editing = "1";
      const input = editor(name, kind, value);
      input.id = `edit-${name}`;
      // The stored amount as this person writes numbers ("12,50" in German), so it reads back.
      if (kind === "money" && value != null) input.value = new Intl.NumberFormat(undefined, { useGrouping: false, minimumFractionDigits: fractionDigits(doc.currency), maximumFractionDigits: 20 }).format(Number(value));
      const error = h("span", { class: "error", role: "alert" });
      // Money: what the typed text will be saved as, shown while typing.
      const parsed = h("output", { class: "parsed", for: input.id, id: `parsed-${name}` });
      const submit = h("button", { type: "submit", class: "primary" }, "Save");
      let confirmed = null; // the value a person agreed to after the factor-of-10 warning
      const readMoney = () => parseMoney(input.value, { currency: doc.currency });
      const showParsed = () => {
        const result = readMoney();
        error.textContent = "";
        confirmed = null;
        submit.textContent = "Save";
        parsed.textContent = result.error ? "" : result.value == null ? "Empty (clears the amount)" : `Saves as ${money(result.text, doc.currency)}`;
      };
      if (kind === "money") {
        input.addEventListener("input", showParsed);
        showParsed();
      }
      const cancel = () => {
        view();
        dd.querySelector("button").focus();
      };
      const form = h(
        "form",
        {
          class: "inline-edit",
          onsubmit: async (event) => {
            event.preventDefault();
            const raw = input.value.trim();
            let next = raw === "" ? null : raw;
            if (next !== null && kind === "currency") next = next.toUpperCase();
            if (kind === "money") {
              const result = readMoney();
              if (result.error) {
                error.textContent = result.error;
                input.focus();
                return;
              }
              next = result.text;
              const factor = changeFactor(value, next);
              if (factor >= 10 && confirmed !== next) {
                confirmed = next;
                error.textContent = `That is ${Math.round(factor)}× ${Number(next) > Number(value) ? "more" : "less"} than ${money(value, doc.currency)}. Save ${money(next, doc.currency)} anyway?`;
                submit.textContent = `Yes, save ${money(next, doc.currency)}`;
                submit.focus();
                return;
              }
            }
            try {
              await save(name, next);
            } catch (failure) {
              error.textContent = failure.message;
              input.focus();
            }
          },
          onkeydown: (event) => {
            if (event.key === "Escape") cancel();
          },
        },
        h("label", { for: input.id, class: "visually-hidden" }, label),
        input,
        submit,
        h("button", { type: "button", onclick: cancel }, "Cancel"),
        kind === "money" ? parsed : null,
        error,
      );
      clear(dd, form);
      input.focus();
    }
    const row = h("div", { class: "field-row", "data-field": name }, h("dt", {}, label), dd);
    view();
    // Pointing at a field, or moving the keyboard into it, shows where it was read.
    if (preview.hasBox(name)) {
      row.classList.add("has-box");
      for (const [type, on] of [["mouseenter", true], ["mouseleave", false], ["focusin", true], ["focusout", false]]) {
        row.addEventListener(type, () => preview.highlight(name, on));
      }
    }
    return row;
  }

  // Changes made elsewhere (follow.js): read the document again and repaint, keeping an open
  // correction as it is (saying when its field changed underneath it) and the keyboard focus.
  followEvents(() => root.isConnected, async ({ changes, lagged }) => {
    if (!changes.has(doc.id) && !lagged) return;
    await saving; // the event of this page's own correction: compared once it is saved
    let next;
    try {
      next = (await api.data(DOC_GET, { input: { id: doc.id } })).documentsGet?.document || null;
    } catch (error) {
      if (error.code !== "not_found" && error.status !== 404) throw error;
      next = null;
    }
    if (!root.isConnected) return;
    if (!next) {
      elsewhere.textContent = "This document was deleted elsewhere: it can no longer be corrected.";
      for (const button of root.querySelectorAll("[data-edit], #archive, form.inline-edit button")) button.disabled = true;
      return;
    }
    if (JSON.stringify(next) === JSON.stringify(doc)) return;
    const before = doc;
    doc = next;
    const differ = EDITABLE.filter(([name]) => JSON.stringify(before[name]) !== JSON.stringify(next[name]));
    const keep = editing();
    const focused = root.contains(document.activeElement) ? document.activeElement : null;
    const kept = focused && [...keep.values()].some((row) => row.contains(focused));
    const again = focused && !kept ? focusKey(focused) : null;
    // Moving the open form into the new page blurs it: the caret goes back where it was.
    const caret = kept && "selectionStart" in focused ? [focused.selectionStart, focused.selectionEnd] : null;
    paint(keep);
    if (again) root.querySelector(again)?.focus({ preventScroll: true });
    else if (kept && document.activeElement !== focused) {
      focused.focus({ preventScroll: true });
      if (caret && caret[0] !== null) focused.setSelectionRange(...caret);
    }
    for (const [name, label, kind] of differ) {
      const row = keep.get(name);
      if (!row) continue;
      row.querySelector(".changed-under")?.remove();
      row.querySelector("dd").append(
        h("span", { class: "changed-under", role: "alert", id: `changed-${name}` }, `${label} was changed elsewhere to ${shownValue(doc, name, kind)} while you were correcting it. Save replaces it; Cancel shows it.`),
      );
    }
    const said = [];
    if (next.archived && !before.archived) said.push("This document was archived elsewhere.");
    else if (!next.archived && before.archived) said.push("This document was restored elsewhere.");
    const reread = next.reprocessedAt !== before.reprocessedAt;
    if (reread) said.push(differ.length ? "Read again with the current extraction." : "Read again with the current extraction: nothing changed.");
    const what = differ.map(([, label]) => label.toLowerCase()).join(", ");
    if (differ.length) said.push(reread ? `Changed: ${what}.` : `Changed elsewhere: ${what}.`);
    else if (next.processingStatus !== before.processingStatus) said.push(`Processing: ${next.processingStatus}.`);
    if (said.length) elsewhere.textContent = `${said.join(" ")} (${new Date().toLocaleTimeString()})`;
  });

  paint();
  void rerender;
  return root;
}

// How a field's value reads on the page.
export function shownValue(doc, name, kind) {
  const value = doc[name];
  return kind === "money" ? (value == null ? "—" : money(value, doc.currency)) : String(value ?? "—");
}

// A selector that finds the focused element again after a repaint (its id, or the field it
// corrects), or null.
function focusKey(element) {
  if (element.id) return `#${CSS.escape(element.id)}`;
  if (element.dataset.edit) return `[data-edit="${CSS.escape(element.dataset.edit)}"]`;
  return null;
}

export function editor(name, kind, value) {
  if (kind === "doctype") {
    return h("select", {}, DOC_TYPES.map((t) => h("option", { value: t, selected: t === value }, t)));
  }
  const attributes = { value: value ?? "", autocomplete: "off" };
  if (kind === "money") Object.assign(attributes, { type: "text", inputmode: "decimal", size: "12", "aria-describedby": `parsed-${name}` });
  else if (kind === "date") attributes.type = "date";
  else if (kind === "currency") Object.assign(attributes, { maxlength: "3", pattern: "[A-Za-z]{3}", size: "4" });
  else if (kind === "category") {
    attributes.list = "category-options";
    const input = h("input", attributes);
    const options = h("datalist", { id: "category-options" }, state.categories.map((c) => h("option", { value: c })));
    document.getElementById("category-options")?.remove();
    document.body.append(options);
    return input;
  }
  return h("input", attributes);
}

function preferredLine(doc) {
  const currency = state.workspace?.preferredCurrency;
  if (!doc.amount || !doc.conversionRate || !currency || doc.currency === currency) return null;
  return h("p", { class: "hint" }, `≈ ${money(Number(doc.amount) * doc.conversionRate, currency)} at ${doc.conversionRate} on ${doc.docDate}`);
}

function docLink(d) {
  return h("a", { href: `#/documents/${encodeURIComponent(d.id)}` }, `${d.merchant || d.id} · ${d.docDate || "no date"} · ${money(d.amount, d.currency)}`);
}

function duplicatesSection(doc) {
  if (!doc.duplicateOf && !(doc.duplicates || []).length) return null;
  return h(
    "section",
    { class: "panel", "aria-labelledby": "dup-h" },
    h("h2", { id: "dup-h" }, "Duplicates"),
    doc.duplicateOf ? h("p", {}, "This looks like a duplicate of ", docLink(doc.duplicateOf), ". Archive it if it is.") : null,
    (doc.duplicates || []).length
      ? h("div", {}, h("p", {}, "These look like duplicates of this one:"), h("ul", {}, doc.duplicates.map((d) => h("li", {}, docLink(d)))))
      : null,
  );
}

function historySection(doc) {
  const history = doc.editHistory || [];
  if (!history.length) return null;
  return h(
    "details",
    { class: "history" },
    h("summary", {}, `Corrections (${history.length})`),
    h(
      "ul",
      {},
      history.map((e) => h("li", {}, `${new Date(e.editedAt).toLocaleString()}: ${e.field} ${JSON.stringify(e.oldValue)} → ${JSON.stringify(e.newValue)}`)),
    ),
  );
}

function actions(doc) {
  const status = h("p", { role: "status" });
  const archive = async () => {
    const mutation = doc.archived
      ? `mutation Restore($input: UnarchiveDocumentInput!) { documentsUnarchive(input: $input) { document { id archived } } }`
      : `mutation Archive($input: DeleteDocumentInput!) { documentsDelete(input: $input) { document { id archived } archivedDuplicates } }`;
    try {
      const result = await api.data(mutation, { input: { id: doc.id } });
      const duplicates = result.documentsDelete?.archivedDuplicates || [];
      const extra = duplicates.length;
      const said = doc.archived ? "Restored" : `Archived${extra ? ` with ${extra} duplicates` : ""}`;
      announce(said);
      if (!doc.archived) undoToast(`${said}: ${doc.merchant || doc.id}`, [doc.id, ...duplicates]);
      location.hash = lastList;
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  };
  return h(
    "div",
    { class: "actions" },
    h("button", { type: "button", id: "archive", onclick: archive }, doc.archived ? "Restore" : "Archive"),
    doc.file ? readAgain(doc, status) : null,
    status,
  );
}

// Read the original again with the current extraction (documents.reprocess, in the
// background): what changes arrives as a correction, and this page repaints when it lands.
let keepCorrections = true; // the person's choice, kept across the page's repaints

function readAgain(doc, status) {
  const keep = h("input", { type: "checkbox", id: "reprocess-keep", checked: keepCorrections, onchange: () => (keepCorrections = keep.checked) });
  const run = async () => {
    try {
      const result = await api.data(
        `mutation ReadAgain($input: ReprocessDocumentsInput!) { documentsReprocess(input: $input) { queued notReady } }`,
        { input: { ids: [doc.id], keepCorrections: keep.checked } },
      );
      const queued = result.documentsReprocess.queued.length > 0;
      const said = queued
        ? "Reading it again. What changes shows here and under Corrections."
        : "It cannot be read again now: it is still being read, or has no original.";
      status.textContent = said;
      announce(said);
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  };
  return h(
    "span",
    { class: "read-again" },
    h("button", { type: "button", id: "reprocess", onclick: run }, "Read again"),
    h("label", { for: "reprocess-keep" }, keep, " keep corrections"),
    doc.reprocessedAt ? h("span", { class: "meta", id: "reprocessed-at", "data-at": doc.reprocessedAt }, ` Last read again ${new Date(doc.reprocessedAt).toLocaleString()}`) : null,
  );
}

async function openOriginal(doc) {
  const response = await fetch(`/v1/files/${encodeURIComponent(doc.id)}`, { headers: api.headers() });
  if (!response.ok) return;
  const url = URL.createObjectURL(await response.blob());
  // A blob: URL belongs to this page's origin: a type the server sends as an attachment
  // (one that could run script, such as SVG or HTML) is saved, never opened here.
  if ((response.headers.get("Content-Disposition") || "").startsWith("attachment")) {
    const link = h("a", { href: url, download: doc.file?.fileName || "original" });
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    return;
  }
  window.open(url, "_blank", "noopener");
}
