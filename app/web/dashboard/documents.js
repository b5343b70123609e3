// The document list (search, filters, thumbnails, archive and duplicates) and one document
// (extracted fields with their confidence, inline corrections, archive and restore).

import * as api from "./api.js";
import { h, clear, money, announce, errorBox } from "./dom.js";
import { parseMoney, changeFactor, fractionDigits } from "./numbers.js";
import { state, filtersHash, whereClause, loadWithWorkspace, WORKSPACES, DOC_TYPES } from "./state.js";

const PAGE = 24;

const LIST_QUERY = `
query Documents($input: SearchDocumentsInput) {
  ${WORKSPACES}
  workspace {
    id name preferredCurrency
    documents(input: $input) {
      documents {
        id merchant amount currency docDate category docType processingStatus archived
        duplicateOfId file { mimeType fileName }
      }
      nextCursor
    }
  }
}`;

const listState = { query: "", archived: "exclude", duplicates: false, cursor: null };

function listInput(cursor) {
  const where = whereClause();
  const conditions = where ? [...where.conditions] : [];
  if (listState.duplicates) conditions.push({ field: "duplicateOf", op: "exists", value: true });
  const ranked = Boolean(listState.query.trim());
  return {
    query: ranked ? listState.query.trim() : null,
    useSearch: ranked,
    // The closest first: a person searching wants the matches, not variety (mmr).
    searchType: "similarity",
    limit: PAGE,
    sortBy: "docDate",
    sortOrder: -1,
    outputMode: "complete",
    archived: listState.archived,
    where: conditions.length ? { logic: "and", conditions } : null,
    cursor,
  };
}

function thumbnail(doc) {
  const box = h("span", { class: "thumb", "aria-hidden": "true" });
  if (doc.file) {
    const show = (url) => box.replaceChildren(h("img", { src: url, alt: "", loading: "lazy" }));
    api.thumbnailUrl(doc.id, show).then((url) => {
      if (url) show(url);
    });
  } else {
    box.textContent = (doc.merchant || "?").slice(0, 1).toUpperCase();
  }
  return box;
}

function card(doc) {
  return h(
    "li",
    { class: "doc-card" },
    thumbnail(doc),
    h(
      "a",
      { href: `#/documents/${encodeURIComponent(doc.id)}`, class: "doc-link" },
      h("strong", {}, doc.merchant || "(no merchant yet)"),
      h("span", { class: "num" }, money(doc.amount, doc.currency)),
      h("span", { class: "meta" }, [doc.docDate, doc.category, doc.docType].filter(Boolean).join(" · ") || "—"),
      badges(doc),
    ),
  );
}

function badges(doc) {
  const list = [];
  if (doc.archived) list.push(h("span", { class: "badge" }, "archived"));
  if (doc.duplicateOfId) list.push(h("span", { class: "badge warn" }, "possible duplicate"));
  if (doc.processingStatus && doc.processingStatus !== "processed") {
    list.push(h("span", { class: `badge status-${doc.processingStatus}` }, doc.processingStatus));
  }
  return list.length ? h("span", { class: "badges" }, list) : null;
}

export async function documentsView({ rerender }) {
  const data = await loadWithWorkspace(LIST_QUERY, { input: listInput(null) });
  const page = data.workspace.documents;
  // data-query says which search the list shows (tests and scripts wait on it).
  const list = h("ul", { class: "doc-grid", id: "doc-list", "data-query": listState.query }, page.documents.map(card));
  const more = h("div", { class: "more" });
  const showMore = (cursor) => {
    clear(more);
    if (!cursor) return;
    more.append(
      h(
        "button",
        {
          type: "button",
          onclick: async () => {
            try {
              const next = await api.data(`query More($input: SearchDocumentsInput) { workspace { documents(input: $input) {
                documents { id merchant amount currency docDate category docType processingStatus archived duplicateOfId file { mimeType fileName } }
                nextCursor } } }`, { input: listInput(cursor) });
              const docs = next.workspace.documents;
              list.append(...docs.documents.map(card));
              announce(`${docs.documents.length} more documents`);
              showMore(docs.nextCursor);
            } catch (error) {
              more.append(errorBox(error));
            }
          },
        },
        "Load more",
      ),
    );
  };
  showMore(page.nextCursor);

  const search = h("input", { id: "search", type: "search", value: listState.query, placeholder: "e.g. coffee in Berlin, hotel invoice" });
  const archived = h(
    "select",
    { id: "archived" },
    [["exclude", "Active"], ["only", "Archived"], ["include", "Active and archived"]].map(([v, t]) =>
      h("option", { value: v, selected: v === listState.archived }, t),
    ),
  );
  const duplicates = h("input", { id: "duplicates", type: "checkbox", checked: listState.duplicates });
  const active = Object.keys(state.filters);
  announce(`${page.documents.length} documents shown`);
  return h(
    "div",
    {},
    h("h1", {}, "Documents"),
    h(
      "form",
      {
        class: "search",
        role: "search",
        onsubmit: (event) => {
          event.preventDefault();
          listState.query = search.value;
          listState.archived = archived.value;
          listState.duplicates = duplicates.checked;
          rerender();
        },
      },
      h("div", { class: "field grow" }, h("label", { for: "search" }, "Search"), search),
      h("div", { class: "field" }, h("label", { for: "archived" }, "Show"), archived),
      h("div", { class: "field check" }, duplicates, h("label", { for: "duplicates" }, "Possible duplicates only")),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Search")),
    ),
    active.length
      ? h("p", { class: "hint" }, `Dashboard filters apply here too (${active.join(", ")}). `, h("a", { href: filtersHash(state.filters) }, "Change them"))
      : null,
    page.documents.length ? list : h("p", { class: "empty" }, "Nothing found."),
    more,
  );
}

// -- one document ---------------------------------------------------------------------------

const DOC_FIELDS = `
  id merchant amount currency preferredCurrency conversionRate docDate category docType summary
  invoiceId receiptId paymentStatus paymentMethod paymentMethodEnding taxAmount subtotal
  processingStatus processingReason archived archivedAt source receivedAt
  file { fileName mimeType size }
  evidence { field confidence text source }
  duplicateOfId duplicateOf { id merchant amount currency docDate }
  duplicates { id merchant amount currency docDate }
  editHistory { field oldValue newValue editedAt via }
  lineItems { description amount }`;

const DOC_QUERY = `query Document($input: GetDocumentInput!) {
  ${WORKSPACES}
  workspace { id name preferredCurrency }
  documentsGet(input: $input) { document { ${DOC_FIELDS} } } }`;

// The fields a person may correct, with their input kind.
const EDITABLE = [
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
  const root = h("div", { class: "document" });

  const paint = () => {
    const evidence = new Map((doc.evidence || []).map((e) => [e.field, e]));
    const preview = h(
      "div",
      { class: "preview" },
      doc.file ? h("p", { class: "hint" }, "Loading the original…") : h("p", { class: "hint" }, "No original file is stored for this document."),
    );
    if (doc.file) {
      const show = (url) => preview.replaceChildren(h("img", { src: url, alt: `The original: ${doc.file.fileName}` }));
      api.thumbnailUrl(doc.id, show).then((url) => {
        if (url) show(url);
      });
    }
    clear(
      root,
      h("p", {}, h("a", { href: "#/documents" }, "← Documents")),
      h("h1", {}, doc.merchant || "Document"),
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
        h("div", {}, preview, doc.file ? h("p", {}, h("button", { type: "button", onclick: () => openOriginal(doc) }, "Open the original")) : null),
        h(
          "div",
          {},
          h("h2", {}, "Extracted fields"),
          h("dl", { class: "fields", id: "fields" }, EDITABLE.map(([name, label, kind]) => fieldRow(name, label, kind, evidence.get(name)))),
          preferredLine(doc),
        ),
      ),
      duplicatesSection(doc),
      historySection(doc),
      actions(doc),
    );
  };

  const save = async (name, value) => {
    const result = await api.data(
      `mutation Correct($input: UpdateDocumentInput!) { documentsUpdate(input: $input) { document { ${DOC_FIELDS} } } }`,
      { input: { id: doc.id, [name]: value } },
    );
    doc = result.documentsUpdate.document;
    paint();
    announce("Saved");
    const button = root.querySelector(`[data-edit="${name}"]`);
    if (button) button.focus();
  };

  function fieldRow(name, label, kind, evidence) {
    const value = doc[name];
    const shown = kind === "money" ? (value == null ? "—" : money(value, doc.currency)) : value ?? "—";
    const dd = h("dd", { id: `value-${name}` });
    const confidence = evidence
      ? h(
          "span",
          { class: `confidence ${evidence.confidence < 0.6 ? "low" : ""}`, title: evidence.text ? `Read from: ${evidence.text}` : null },
          `${Math.round(evidence.confidence * 100)}% sure`,
        )
      : null;
    const view = () =>
      clear(
        dd,
        h("span", { class: "value" }, String(shown)),
        confidence,
        h("button", { type: "button", class: "link", "data-edit": name, "aria-label": `Correct ${label}`, onclick: edit }, "Correct"),
      );
    function edit() {
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
    view();
    return h("div", { class: "field-row" }, h("dt", {}, label), dd);
  }

  paint();
  void rerender;
  return root;
}

function editor(name, kind, value) {
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
      location.hash = "#/documents";
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  };
  return h(
    "div",
    { class: "actions" },
    h("button", { type: "button", id: "archive", onclick: archive }, doc.archived ? "Restore" : "Archive"),
    status,
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

// "Archived … Undo": a toast that outlives the move back to the list (it sits on <body>) for
// a few seconds; Undo restores the document and the duplicates archived with it.
const UNDO_SECONDS = 10;

function undoToast(text, ids) {
  document.getElementById("toast")?.remove();
  const toast = h("div", { id: "toast", class: "toast", role: "status" });
  const close = () => toast.remove();
  const timer = setTimeout(close, UNDO_SECONDS * 1000);
  const undo = async () => {
    clearTimeout(timer);
    try {
      for (const id of ids) {
        await api.data(`mutation Restore($input: UnarchiveDocumentInput!) { documentsUnarchive(input: $input) { document { id archived } } }`, { input: { id } });
      }
      clear(toast, h("span", {}, "Restored"));
      announce("Restored");
      setTimeout(close, 3000);
      window.dispatchEvent(new HashChangeEvent("hashchange")); // the list shows it again
    } catch (error) {
      clear(toast, errorBox(error), h("button", { type: "button", onclick: close }, "Close"));
    }
  };
  clear(toast, h("span", {}, text), h("button", { type: "button", id: "undo", onclick: undo }, "Undo"), h("button", { type: "button", class: "link", "aria-label": "Dismiss", onclick: close }, "×"));
  document.body.append(toast);
}
