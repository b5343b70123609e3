// The Bank page: a statement imported (statements.import), the transactions no document accounts
// for yet, newest booking first (transactions.search, matched = false), one opened with its
// candidates ranked and each signal's contribution in words (transactions.candidates), the
// selected candidate's original with its evidence boxes (evidence.js, as on a document's page),
// confirmed or rejected (matches.confirm / matches.reject) and a match taken back (matches.undo);
// and "receipts missing": per month, the money out that no document accounts for
// (transactions.count per month). Keyboard: j / k or the arrows move through the list (or the
// candidates, when the focus is in the opened transaction), Enter opens, c or Enter on a
// candidate confirms it, x rejects it, u undoes a match, Escape goes back to the list.

import * as api from "./api.js";
import { h, clear, announce, errorBox, money, monthLabel, plural } from "./dom.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";
import { evidencePreview } from "./evidence.js";
import { DOC_FIELDS } from "./documents.js";

const PAGE = 25;
const MONTHS = 12;
const TXN_FIELDS = `id account bookingDate valueDate amount currency counterparty reference matched matches
  rejectedDocumentIds source { format fileName place }`;
const PAGE_QUERY = `query Bank($list: SearchTransactionsInput!, $newest: SearchTransactionsInput!) {
  ${WORKSPACES}
  workspace { id name preferredCurrency }
  transactionsSearch(input: $list) { transactions { ${TXN_FIELDS} } nextCursor }
  newest: transactionsSearch(input: $newest) { transactions { bookingDate } } }`;
const MORE_QUERY = `query More($list: SearchTransactionsInput!) {
  transactionsSearch(input: $list) { transactions { ${TXN_FIELDS} } nextCursor } }`;
const IMPORT = `mutation Import($input: ImportStatementInput!) { statementsImport(input: $input) {
  format added alreadyThere notBooked account currency periodStart periodEnd statementId
  openingBalance { amount currency date } closingBalance { amount currency date } } }`;
const CANDIDATES = `query Candidates($input: TransactionCandidatesInputInput!) {
  transactionsCandidates(input: $input) { outcome why threshold margin
    candidates { documentIds kind score signals { name contribution reason } } } }`;
const DOCUMENTS = `query Documents($input: SearchDocumentsInput) {
  workspace { id documents(input: $input) { documents { ${DOC_FIELDS} } } } }`;
const CONFIRM = `mutation Confirm($input: ConfirmMatchInput!) { matchesConfirm(input: $input) { transaction { ${TXN_FIELDS} } } }`;
const REJECT = `mutation Reject($input: RejectMatchInput!) { matchesReject(input: $input) { transaction { ${TXN_FIELDS} } } }`;
const UNDO = `mutation Undo($input: UndoMatchInput!) { matchesUndo(input: $input) { transaction { ${TXN_FIELDS} } } }`;

// Per month and currency, in one aggregation in the store (Workspace.transactionTotals): every
// transaction, and the money out that no document accounts for (missing).
const MISSING_QUERY = `query Missing($filter: TransactionFilter) { workspace { id
  transactionTotals(filter: $filter, groupBy: [MONTH]) { groups { key { month currency } count missing { count sum } } } } }`;

const FORMATS = { csv: "CSV", ofx: "OFX", camt053: "CAMT.053", mt940: "MT940" };
const ACCEPT = ".csv,.txt,.ofx,.qfx,.xml,.053,.sta,.mt940";
const KEYS = [
  ["j / ↓", "next"],
  ["k / ↑", "previous"],
  ["Enter", "open, or confirm a candidate"],
  ["c", "confirm"],
  ["x", "reject"],
  ["u", "undo a match"],
  ["Esc", "back to the list"],
];
const KINDS = { single: "one document", split: "a split payment", partial: "a partial payment" };

const cond = (field, op, value) => ({ field, op, value });
const UNMATCHED = { conditions: [cond("matched", "eq", false)] };

export function dateText(iso) {
  if (!iso) return "—";
  return new Date(`${String(iso).slice(0, 10)}T00:00:00Z`).toLocaleDateString(undefined, { dateStyle: "medium", timeZone: "UTC" });
}

function points(value) {
  return new Intl.NumberFormat(undefined, { signDisplay: "exceptZero", maximumFractionDigits: 1 }).format(value);
}

// "2026-11" for the month `back` months before `newest` ("2026-11-03").
function monthKey(newest, back) {
  const [year, month] = newest.split("-").map(Number);
  const at = new Date(Date.UTC(year, month - 1 - back, 1));
  return at.toISOString().slice(0, 7);
}

function nextMonth(key) {
  const [year, month] = key.split("-").map(Number);
  return new Date(Date.UTC(year, month, 1)).toISOString().slice(0, 10);
}

// The months to show, newest first: the 12 ending with the newest booking's month, and the
// filter of their bookings.
function monthsFilter(newest) {
  const keys = Array.from({ length: MONTHS }, (_, i) => monthKey(newest, i));
  const filter = { bookingDate: { gte: `${keys[MONTHS - 1]}-01`, lt: nextMonth(keys[0]) } };
  return { keys, filter };
}

// The groups (month × currency) as one row per month: all its transactions, the payments out
// without a document, and their sum per currency.
function byMonth(groups) {
  const months = new Map();
  for (const g of groups) {
    const month = months.get(g.key.month) || { all: 0, count: 0, totals: [] };
    month.all += g.count;
    month.count += g.missing.count;
    if (g.missing.count) month.totals.push({ currency: g.key.currency, debits: g.missing.sum });
    months.set(g.key.month, month);
  }
  return months;
}

async function readDocuments(ids) {
  if (!ids.length) return new Map();
  const input = { where: { conditions: [cond("id", "in", ids)] }, useSearch: false, limit: Math.min(100, ids.length) };
  const data = await api.data(DOCUMENTS, { input });
  return new Map(data.workspace.documents.documents.map((d) => [d.id, d]));
}

function fileAsBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",")[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

// What an import did, in words.
function importedText(result) {
  const parts = [`Read a ${FORMATS[result.format] || result.format} statement: ${plural(result.added, "transaction")} imported, ${result.alreadyThere} already there.`];
  if (result.notBooked) parts.push(`${plural(result.notBooked, "entry", "entries")} not booked yet, left out.`);
  const about = [];
  if (result.account) about.push(`Account ${result.account}`);
  if (result.periodStart || result.periodEnd) about.push(`${dateText(result.periodStart)} – ${dateText(result.periodEnd)}`);
  if (about.length) parts.push(`${about.join(", ")}.`);
  const balance = (label, b) => `${label} ${money(b.amount, b.currency)}${b.date ? ` on ${dateText(b.date)}` : ""}`;
  const balances = [];
  if (result.openingBalance) balances.push(balance("Opening balance", result.openingBalance));
  if (result.closingBalance) balances.push(balance("closing balance", result.closingBalance));
  if (balances.length) parts.push(`${balances.join("; ")}.`);
  return parts.join(" ");
}

export async function bankView() {
  let showAll = false;
  const listInput = (cursor = null) => ({ where: showAll ? null : UNMATCHED, sortBy: "bookingDate", sortOrder: -1, limit: PAGE, cursor });
  const first = await loadWithWorkspace(PAGE_QUERY, { list: listInput(), newest: { limit: 1 } });
  if (!first.transactionsSearch) throw new api.ApiError("The transactions could not be read");
  let transactions = first.transactionsSearch.transactions;
  let cursor = first.transactionsSearch.nextCursor;
  let newest = first.newest?.transactions[0]?.bookingDate || null;
  let selected = 0; // the list's selected row
  let opened = null; // {transaction, candidates, documents, pick}
  let busy = false;

  const root = h("section", { class: "bank", id: "bank", "aria-labelledby": "bank-h" });
  const status = h("p", { role: "status", id: "bank-status" });
  const listBox = h("div", { id: "txn-list-box" });
  const detail = h("div", { id: "txn-detail-box" });
  const missing = h("div", { id: "missing-box" });

  const say = (text) => {
    status.textContent = text;
    announce(text);
  };
  const fail = (error) => {
    status.replaceChildren(errorBox(error));
  };

  // -- 1. import ------------------------------------------------------------------------------
  const importResult = h("div", { id: "import-result" });
  const fileInput = h("input", { id: "statement-file", type: "file", accept: ACCEPT });
  fileInput.addEventListener("change", async () => {
    const file = fileInput.files[0];
    if (!file) return;
    clear(importResult, h("p", { class: "hint" }, `Reading ${file.name}…`));
    try {
      const base64Data = await fileAsBase64(file);
      const data = await api.data(IMPORT, { input: { fileName: file.name, base64Data } });
      const text = importedText(data.statementsImport);
      clear(importResult, h("p", { class: "ok", id: "import-done" }, text));
      announce(text);
      await reload();
    } catch (error) {
      clear(importResult, h("p", { class: "error", role: "alert", id: "import-error" }, `${file.name} was not imported: ${error.message}`));
    } finally {
      fileInput.value = "";
    }
  });
  const importPanel = h(
    "section",
    { class: "panel", "aria-labelledby": "import-h" },
    h("h2", { id: "import-h" }, "Import a statement"),
    h("div", { class: "field" }, h("label", { for: "statement-file" }, "Statement file"), fileInput),
    h("p", { class: "hint", id: "import-hint" }, "CSV, OFX or QFX, CAMT.053 (XML) or MT940, up to 10 MB; the format is told from the content. Importing the same statement again adds nothing."),
    importResult,
  );

  // -- 2. the list ----------------------------------------------------------------------------
  async function reload() {
    const data = await api.data(PAGE_QUERY.replace(WORKSPACES, ""), { list: listInput(), newest: { limit: 1 } });
    transactions = data.transactionsSearch.transactions;
    cursor = data.transactionsSearch.nextCursor;
    newest = data.newest.transactions[0]?.bookingDate || null;
    selected = Math.min(selected, Math.max(0, transactions.length - 1));
    paintList();
    await paintMissing();
  }

  async function more() {
    try {
      const data = await api.data(MORE_QUERY, { list: listInput(cursor) });
      const before = transactions.length;
      transactions = [...transactions, ...data.transactionsSearch.transactions];
      cursor = data.transactionsSearch.nextCursor;
      selected = Math.min(before, transactions.length - 1);
      paintList();
      say(`${plural(transactions.length - before, "more transaction")} shown.`);
      focusRow();
    } catch (error) {
      fail(error);
    }
  }

  function row(txn, i) {
    return h(
      "li",
      {},
      h(
        "button",
        {
          type: "button",
          class: `txn-row${i === selected ? " selected" : ""}${opened?.transaction.id === txn.id ? " opened" : ""}`,
          "data-id": txn.id,
          "data-index": String(i),
          "aria-current": i === selected ? "true" : false,
          "aria-expanded": opened?.transaction.id === txn.id ? "true" : "false",
          "aria-controls": "txn-detail-box",
          onclick: () => {
            selected = i;
            open(txn);
          },
        },
        h("span", { class: "txn-date" }, dateText(txn.bookingDate)),
        h("span", { class: "txn-who" }, txn.counterparty || "No counterparty"),
        h("span", { class: "txn-ref hint" }, txn.reference || ""),
        h("span", { class: `txn-amount num${Number(txn.amount) < 0 ? " debit" : ""}` }, money(txn.amount, txn.currency)),
        txn.matched ? h("span", { class: "badge" }, "Matched") : null,
      ),
    );
  }

  function paintList() {
    const filter = h(
      "div",
      { class: "field check" },
      h("input", {
        type: "checkbox",
        id: "show-matched",
        checked: showAll,
        onchange: async (event) => {
          showAll = event.target.checked;
          selected = 0;
          try {
            await reload();
            say(showAll ? `${plural(transactions.length, "transaction")} shown, matched ones too.` : `${plural(transactions.length, "unmatched transaction")} shown.`);
          } catch (error) {
            fail(error);
          }
        },
      }),
      h("label", { for: "show-matched" }, "Show matched transactions too"),
    );
    clear(
      listBox,
      h("h2", { id: "txn-list-h" }, showAll ? "Transactions" : "Unmatched transactions"),
      filter,
      transactions.length
        ? h("ul", { class: "txn-list", id: "txn-list", "aria-labelledby": "txn-list-h" }, transactions.map(row))
        : h("p", { id: "no-transactions", class: "empty" }, showAll ? "No transactions yet: import a statement." : "Every transaction has its document (or none is imported yet)."),
      cursor ? h("button", { type: "button", id: "txn-more", onclick: more }, "More") : null,
    );
  }

  function focusRow() {
    listBox.querySelector(`button.txn-row[data-index="${selected}"]`)?.focus();
  }

  function moveRow(step) {
    if (!transactions.length) return;
    // The first key from elsewhere (the heading, the opened transaction) goes to the selected row.
    if (!listBox.contains(document.activeElement)) {
      paintList();
      focusRow();
      return;
    }
    const next = selected + step;
    if (next < 0 || next >= transactions.length) {
      status.textContent = step > 0 ? (cursor ? "The last one shown: More shows the next ones." : "This is the last one.") : "This is the first one.";
      return;
    }
    selected = next;
    paintList();
    focusRow();
  }

  // -- 3. one transaction: its match, or its candidates ---------------------------------------
  async function open(txn, { focus = true } = {}) {
    try {
      let candidates = null;
      let ids = txn.matches.flatMap((m) => m.documentIds || []);
      if (!txn.matched) {
        candidates = (await api.data(CANDIDATES, { input: { id: txn.id } })).transactionsCandidates;
        ids = [...new Set(candidates.candidates.flatMap((c) => c.documentIds))];
      }
      opened = { transaction: txn, candidates, documents: await readDocuments(ids), pick: 0 };
    } catch (error) {
      fail(error);
      return;
    }
    paintList();
    paintDetail();
    if (focus) focusDetail();
  }

  function focusDetail() {
    const target =
      detail.querySelector("#match-undo") ||
      detail.querySelector(`li.candidate[data-index="${opened.pick}"] .candidate-confirm`) ||
      detail.querySelector("#txn-h");
    if (target?.id === "txn-h") target.setAttribute("tabindex", "-1");
    target?.focus();
  }

  function documentLine(doc, id) {
    if (!doc) return h("li", {}, h("a", { href: `#/documents/${encodeURIComponent(id)}` }, id));
    return h(
      "li",
      { "data-doc": doc.id },
      h("a", { href: `#/documents/${encodeURIComponent(doc.id)}` }, doc.merchant || "Unknown merchant"),
      ` · ${money(doc.amount, doc.currency)} · ${dateText(doc.docDate)}`,
      doc.invoiceId ? ` · ${doc.invoiceId}` : "",
    );
  }

  function signalList(signals) {
    return h(
      "ul",
      { class: "signals" },
      signals.map((s) =>
        h(
          "li",
          { "data-signal": s.name, class: s.contribution < 0 ? "against" : "for" },
          // The name, unless the words begin with it ("amount 42.50 EUR equals the total").
          s.reason.toLowerCase().startsWith(s.name.toLowerCase())
            ? [h("strong", {}, s.reason.slice(0, s.name.length)), `${s.reason.slice(s.name.length)} `]
            : [h("strong", {}, s.name), ` ${s.reason} `],
          h("span", { class: "num points" }, points(s.contribution)),
        ),
      ),
    );
  }

  function candidateItem(candidate, i) {
    const picked = i === opened.pick;
    const names = candidate.documentIds.map((id) => opened.documents.get(id)?.merchant || id).join(" + ");
    return h(
      "li",
      {
        class: `candidate${picked ? " selected" : ""}`,
        "data-index": String(i),
        "data-doc-ids": candidate.documentIds.join(" "),
        "aria-current": picked ? "true" : false,
        "aria-labelledby": `candidate-${i}-h`,
      },
      h("h4", { id: `candidate-${i}-h` }, `${names}: score ${points(candidate.score).replace(/^\+/, "")}`, candidate.kind !== "single" ? ` (${KINDS[candidate.kind] || candidate.kind})` : ""),
      h("ul", { class: "plain candidate-docs" }, candidate.documentIds.map((id) => documentLine(opened.documents.get(id), id))),
      signalList(candidate.signals),
      h(
        "div",
        { class: "actions", role: "group", "aria-label": `Candidate ${i + 1}` },
        h("button", { type: "button", class: "primary candidate-confirm", "aria-keyshortcuts": "c Enter", onclick: () => confirm(i) }, "Confirm ", h("kbd", {}, "c")),
        candidate.documentIds.length === 1
          ? h("button", { type: "button", class: "candidate-reject", "aria-keyshortcuts": "x", onclick: () => reject(i) }, "Reject ", h("kbd", {}, "x"))
          : null,
      ),
    );
  }

  function evidenceFor(ids) {
    const doc = ids.length === 1 ? opened.documents.get(ids[0]) : null;
    if (!doc) return null;
    return h("div", { class: "candidate-evidence", id: "candidate-evidence", "data-doc": doc.id }, h("h3", {}, `The original: ${doc.merchant || "document"}`), evidencePreview(doc).element);
  }

  function paintDetail() {
    if (!opened) {
      clear(detail, h("p", { class: "hint", id: "txn-none" }, "Open a transaction (Enter) to see the documents that could account for it."));
      return;
    }
    const txn = opened.transaction;
    const facts = [
      ["Booked", dateText(txn.bookingDate)],
      ["Value date", txn.valueDate ? dateText(txn.valueDate) : null],
      ["Amount", money(txn.amount, txn.currency)],
      ["Counterparty", txn.counterparty],
      ["Reference", txn.reference],
      ["Account", txn.account],
      ["Read from", `${txn.source.fileName}, ${txn.source.place}`],
    ].filter(([, v]) => v);
    let body;
    if (txn.matched) {
      const match = txn.matches[0] || {};
      const ids = match.documentIds || [];
      body = h(
        "section",
        { id: "txn-match", "aria-labelledby": "txn-match-h" },
        h("h3", { id: "txn-match-h" }, "Matched"),
        h("ul", { class: "plain" }, ids.map((id) => documentLine(opened.documents.get(id), id))),
        h("p", { class: "hint" }, [match.score != null ? `Score ${match.score}. ` : "", match.via === "person" ? "Confirmed by a person" : "Matched automatically", match.at ? `, ${new Date(match.at).toLocaleString()}` : "", "."].join("")),
        match.reasons?.length ? h("ul", { class: "signals" }, match.reasons.map((r) => h("li", {}, r))) : null,
        h("div", { class: "actions" }, h("button", { type: "button", id: "match-undo", "aria-keyshortcuts": "u", onclick: undo }, "Undo the match ", h("kbd", {}, "u"))),
        evidenceFor(ids),
      );
    } else {
      const found = opened.candidates;
      const picked = found.candidates[opened.pick];
      body = h(
        "section",
        { id: "txn-candidates", "aria-labelledby": "txn-candidates-h" },
        h("h3", { id: "txn-candidates-h" }, found.candidates.length ? `Candidates (${found.candidates.length}), best first` : "No candidate"),
        h("p", { class: "hint", id: "txn-why", "data-outcome": found.outcome }, `${found.why.charAt(0).toUpperCase()}${found.why.slice(1)} (an automatic match needs ${found.threshold} points and ${found.margin} ahead of any rival).`),
        found.candidates.length ? h("ol", { class: "candidates", id: "candidates" }, found.candidates.map(candidateItem)) : null,
        picked ? evidenceFor(picked.documentIds) : null,
      );
    }
    clear(
      detail,
      h(
        "article",
        { id: "txn-detail", "data-id": txn.id, "data-matched": String(txn.matched), "aria-labelledby": "txn-h" },
        h("h2", { id: "txn-h" }, `${txn.counterparty || "Transaction"} · ${money(txn.amount, txn.currency)}`),
        h("dl", { class: "fields txn-facts" }, facts.map(([k, v]) => h("div", { class: "field-row" }, h("dt", {}, k), h("dd", {}, v)))),
        body,
      ),
    );
  }

  function movePick(step) {
    const list = opened?.candidates?.candidates || [];
    if (opened?.transaction.matched || !list.length) return;
    const next = opened.pick + step;
    if (next < 0 || next >= list.length) {
      status.textContent = step > 0 ? "This is the last candidate." : "This is the first candidate.";
      return;
    }
    opened.pick = next;
    paintDetail();
    focusDetail();
  }

  // After a match changed: the opened transaction as the server answered, in the list too.
  async function changed(txn, text) {
    transactions = transactions.map((t) => (t.id === txn.id ? txn : t));
    await open(txn, { focus: false });
    say(text);
    focusDetail();
    try {
      await paintMissing();
    } catch (error) {
      fail(error);
    }
  }

  async function act(mutation, input) {
    if (busy) return null;
    busy = true;
    try {
      return await api.data(mutation, { input });
    } catch (error) {
      fail(error);
      announce(error.message);
      return null;
    } finally {
      busy = false;
    }
  }

  async function confirm(i = opened?.pick) {
    const candidate = opened?.candidates?.candidates[i];
    if (!candidate || opened.transaction.matched) return;
    const names = candidate.documentIds.map((id) => opened.documents.get(id)?.merchant || id).join(" + ");
    const data = await act(CONFIRM, { transactionId: opened.transaction.id, documentIds: candidate.documentIds });
    if (data) await changed(data.matchesConfirm.transaction, `Matched to ${names}. Press u to undo.`);
  }

  async function reject(i = opened?.pick) {
    const candidate = opened?.candidates?.candidates[i];
    if (!candidate || opened.transaction.matched || candidate.documentIds.length !== 1) return;
    const name = opened.documents.get(candidate.documentIds[0])?.merchant || candidate.documentIds[0];
    const data = await act(REJECT, { transactionId: opened.transaction.id, documentId: candidate.documentIds[0] });
    if (data) await changed(data.matchesReject.transaction, `${name} rejected: it will not be proposed for this transaction again.`);
  }

  async function undo() {
    if (!opened?.transaction.matched) return;
    const data = await act(UNDO, { transactionId: opened.transaction.id });
    if (data) await changed(data.matchesUndo.transaction, "Match undone: the transaction is unmatched again, and its document will not be proposed for it again.");
  }

  // -- 4. receipts missing ----------------------------------------------------------------------
  async function paintMissing() {
    if (!newest) {
      clear(missing, h("h2", { id: "missing-h" }, "Receipts missing"), h("p", { class: "empty", id: "missing-none" }, "No transactions yet."));
      return;
    }
    const { keys, filter } = monthsFilter(newest);
    const months = byMonth((await api.data(MISSING_QUERY, { filter })).workspace.transactionTotals.groups);
    const rows = keys
      .filter((key) => months.has(key))
      .map((key) => ({ key, all: months.get(key).all, missing: months.get(key) }))
      .map(({ key, all, missing: m }) =>
        h(
          "tr",
          { "data-month": key, "data-count": String(m.count) },
          h("th", { scope: "row" }, monthLabel(key)),
          h("td", { class: "num" }, String(m.count)),
          h("td", { class: "num" }, m.totals.length ? m.totals.map((t) => money(Math.abs(Number(t.debits)), t.currency)).join(", ") : "—"),
          h("td", { class: "num" }, String(all)),
        ),
      );
    clear(
      missing,
      h("h2", { id: "missing-h" }, "Receipts missing"),
      h("p", { class: "hint" }, "Per month (the last 12 up to the newest booking): payments out that no document accounts for yet, and their sum per currency."),
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { id: "missing", "aria-labelledby": "missing-h" },
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Month"), h("th", { scope: "col", class: "num" }, "Payments without a document"), h("th", { scope: "col", class: "num" }, "Their sum"), h("th", { scope: "col", class: "num" }, "Transactions"))),
          h("tbody", {}, rows),
        ),
      ),
    );
  }

  // -- the keys, while this page is shown ----------------------------------------------------
  const onKey = (event) => {
    if (!root.isConnected) {
      if (root.dataset.shown) document.removeEventListener("keydown", onKey);
      return;
    }
    root.dataset.shown = "1";
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest?.("input, select, textarea, [contenteditable]")) return;
    const inDetail = !!opened && (detail.contains(document.activeElement) || event.target === document.body) && !listBox.contains(document.activeElement);
    const step = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 }[event.key];
    let action = null;
    if (step) action = () => (inDetail && !opened.transaction.matched && opened.candidates.candidates.length ? movePick(step) : moveRow(step));
    else if (event.repeat) return;
    else if (event.key === "c" && opened) action = () => confirm();
    else if (event.key === "x" && opened) action = () => reject();
    else if (event.key === "u" && opened) action = undo;
    else if (event.key === "Escape" && opened) action = focusRow;
    else if (event.key === "Enter" && !event.target.closest?.("button, a") && transactions[selected]) action = () => open(transactions[selected]);
    if (!action) return;
    event.preventDefault();
    action();
  };
  document.addEventListener("keydown", onKey);

  clear(
    root,
    h("h1", { id: "bank-h" }, "Bank"),
    h("p", { class: "key-hints", id: "key-hints" }, "Keys: ", KEYS.map(([key, what]) => h("span", {}, h("kbd", {}, key), ` ${what} `))),
    status,
    importPanel,
    h("div", { class: "bank-layout" }, listBox, detail),
    missing,
  );
  paintList();
  paintDetail();
  await paintMissing();
  return root;
}
