// The Review page: the documents that need a person's look (needsReview), oldest first, one at
// a time: the original with its evidence boxes (evidence.js, as on a document's page) beside the
// fields and why the document is here. Keyboard only: a accepts it as it is, e corrects (every
// field in one form, the first focused; Enter saves the corrections and accepts, Escape
// cancels), j or n the next, k or p the previous. After an accept the next one shows.

import * as api from "./api.js";
import { h, clear, announce, errorBox } from "./dom.js";
import { parseMoney, fractionDigits } from "./numbers.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";
import { evidencePreview } from "./evidence.js";
import { DOC_FIELDS, EDITABLE, editor, shownValue } from "./documents.js";
import { followEvents } from "./follow.js";
import { QUEUE_WHERE, showReviewCount } from "./nav_counts.js";

const QUEUE_SIZE = 100; // the most documents.search returns at once
const QUEUE_INPUT = { where: QUEUE_WHERE, useSearch: false, sortBy: "createdAt", sortOrder: 1, limit: QUEUE_SIZE };
const QUEUE_QUERY = `query Review($input: SearchDocumentsInput, $count: CountDocumentsInput) {
  ${WORKSPACES}
  workspace { id name preferredCurrency
    documents(input: $input) { documents { ${DOC_FIELDS} reviewReasons } }
    waiting: counts(input: $count) { count } } }`;
const REVIEW = `mutation Review($input: ReviewDocumentInput!) { documentsReview(input: $input) { document { id needsReview } } }`;

const REASONS = {
  flaggedField: "Fields to check",
  processingWarning: "Processing warned",
  possibleDuplicate: "Possible duplicate",
  noAmount: "No total found",
};
const KEYS = [
  ["a", "accept"],
  ["e", "correct"],
  ["j / n", "next"],
  ["k / p", "previous"],
];

async function readQueue() {
  const data = await loadWithWorkspace(QUEUE_QUERY, { input: QUEUE_INPUT, count: { where: QUEUE_WHERE } });
  return { queue: data.workspace?.documents.documents || [], waiting: data.workspace?.waiting.count ?? 0 };
}

export async function reviewView() {
  let { queue, waiting } = await readQueue();
  showReviewCount(waiting);
  let index = 0;
  let accepted = 0; // this page's accepts: a queue read before the latest one is stale
  let editing = false;
  let busy = false;
  const root = h("section", { class: "review", id: "review", "aria-labelledby": "review-h" });
  const status = h("p", { role: "status", id: "review-status" });
  const current = () => queue[index] || null;

  const paint = () => {
    editing = false;
    const doc = current();
    clear(
      root,
      h("h1", { id: "review-h" }, "Review"),
      h("p", { id: "review-left", "data-count": String(waiting) }, waiting === 1 ? "1 document waits for a look." : `${waiting} documents wait for a look.`),
      h("p", { class: "key-hints", id: "key-hints" }, "Keys: ", KEYS.map(([key, what]) => h("span", {}, h("kbd", {}, key), ` ${what} `))),
      status,
      doc ? documentPanel(doc) : h("p", { id: "review-empty" }, "Nothing to review: every document was read clearly or has been accepted."),
    );
  };

  function documentPanel(doc) {
    const preview = evidencePreview(doc);
    const evidence = new Map((doc.evidence || []).map((e) => [e.field, e]));
    return h(
      "article",
      { id: "review-doc", "data-id": doc.id, "aria-labelledby": "review-doc-h" },
      h("h2", { id: "review-doc-h" }, `${index + 1} of ${queue.length}: ${doc.merchant || "Unknown merchant"}`),
      h("ul", { class: "badges review-reasons", id: "review-reasons", "aria-label": "Why it is here" }, (doc.reviewReasons || []).map((r) => h("li", { class: "badge warn", "data-reason": r }, REASONS[r] || r))),
      doc.processingReason ? h("p", { class: "hint" }, doc.processingReason) : null,
      h(
        "div",
        { class: "doc-layout" },
        h("div", {}, preview.element),
        h(
          "div",
          { id: "review-fields" },
          h("dl", { class: "fields" }, EDITABLE.map(([name, label, kind]) => fieldRow(doc, name, label, kind, evidence.get(name), preview))),
          h(
            "div",
            { class: "actions", role: "group", "aria-label": "Review" },
            h("button", { type: "button", id: "review-accept", class: "primary", "aria-keyshortcuts": "a", onclick: () => accept() }, "Accept ", h("kbd", {}, "a")),
            h("button", { type: "button", id: "review-edit", "aria-keyshortcuts": "e", onclick: () => edit() }, "Correct ", h("kbd", {}, "e")),
            h("button", { type: "button", id: "review-previous", "aria-keyshortcuts": "k p", disabled: index === 0, onclick: () => move(-1) }, "Previous ", h("kbd", {}, "k")),
            h("button", { type: "button", id: "review-next", "aria-keyshortcuts": "j n", disabled: index >= queue.length - 1, onclick: () => move(1) }, "Next ", h("kbd", {}, "j")),
          ),
          h("p", {}, h("a", { href: `#/documents/${encodeURIComponent(doc.id)}` }, "Open its page (line items, history)")),
        ),
      ),
    );
  }

  function fieldRow(doc, name, label, kind, evidence, preview) {
    const flagged = evidence && evidence.source !== "edited" && (evidence.warning || evidence.confidence < 0.8);
    const row = h(
      "div",
      { class: `field-row${flagged ? " flagged" : ""}`, "data-field": name },
      h("dt", {}, label),
      h(
        "dd",
        { id: `review-value-${name}` },
        h("span", { class: "value" }, shownValue(doc, name, kind)),
        evidence ? h("span", { class: `confidence ${flagged ? "low" : ""}` }, `${Math.round(evidence.confidence * 100)}% sure`) : null,
        evidence?.warning ? h("span", { class: "error" }, ` ${evidence.warning}`) : null,
      ),
    );
    if (preview.hasBox(name)) {
      row.classList.add("has-box");
      for (const [type, on] of [["mouseenter", true], ["mouseleave", false], ["focusin", true], ["focusout", false]]) {
        row.addEventListener(type, () => preview.highlight(name, on));
      }
    }
    return row;
  }

  const move = (step) => {
    const next = index + step;
    if (next < 0 || next >= queue.length) {
      status.textContent = step > 0 ? "This is the last one." : "This is the first one.";
      return;
    }
    index = next;
    paint();
    announce(`${index + 1} of ${queue.length}: ${current().merchant || "Unknown merchant"}`);
  };

  async function accept(corrections = null) {
    const doc = current();
    if (!doc || busy) return false;
    busy = true;
    try {
      await api.data(REVIEW, { input: corrections ? { id: doc.id, corrections } : { id: doc.id } });
    } catch (error) {
      // Reviewed elsewhere meanwhile (409): it leaves the queue all the same.
      if (error.status !== 409) {
        status.replaceChildren(errorBox(error));
        return false;
      }
    } finally {
      busy = false;
    }
    accepted += 1;
    queue = queue.filter((d) => d.id !== doc.id);
    waiting = Math.max(0, waiting - 1);
    index = Math.min(index, Math.max(0, queue.length - 1));
    showReviewCount(waiting);
    paint();
    announce(`Accepted${corrections ? " with corrections" : ""}. ${waiting} left.`);
    (document.getElementById("review-accept") || root.querySelector("h1"))?.focus();
    return true;
  }

  // Every field in one form: what a person changes is sent as the review's corrections.
  function edit() {
    const doc = current();
    if (!doc) return;
    editing = true;
    const inputs = EDITABLE.map(([name, label, kind]) => {
      const input = editor(name, kind, doc[name]);
      input.id = `review-edit-${name}`;
      // The stored amount as this person writes numbers ("12,50" in German), so it reads back.
      if (kind === "money" && doc[name] != null) {
        input.value = new Intl.NumberFormat(undefined, { useGrouping: false, minimumFractionDigits: fractionDigits(doc.currency), maximumFractionDigits: 20 }).format(Number(doc[name]));
      }
      return { name, label, kind, input };
    });
    const problem = h("p", { class: "error", role: "alert", id: "review-error" });
    const cancel = () => {
      paint();
      document.getElementById("review-edit")?.focus();
    };
    const form = h(
      "form",
      {
        id: "review-form",
        class: "review-form",
        "aria-label": `Correct ${doc.merchant || "the document"}`,
        onsubmit: async (event) => {
          event.preventDefault();
          const corrections = {};
          for (const { name, label, kind, input } of inputs) {
            const raw = input.value.trim();
            let next = raw === "" ? null : raw;
            if (kind === "money") {
              const read = parseMoney(input.value, { currency: doc.currency });
              if (read.error) {
                problem.textContent = `${label}: ${read.error}`;
                input.focus();
                return;
              }
              next = read.value == null ? null : read.text;
              if ((next == null) !== (doc[name] == null) || (next != null && Number(next) !== Number(doc[name]))) corrections[name] = next;
              continue;
            }
            if (next !== null && kind === "currency") next = next.toUpperCase();
            if (next !== (doc[name] == null ? null : String(doc[name]))) corrections[name] = next;
          }
          const done = await accept(Object.keys(corrections).length ? corrections : null);
          if (!done) problem.textContent = status.textContent;
        },
        onkeydown: (event) => {
          if (event.key === "Escape") cancel();
        },
      },
      h("h3", {}, "Correct, then accept"),
      inputs.map(({ name, label, kind, input }) =>
        h("div", { class: "field" }, h("label", { for: input.id }, label), input, kind === "money" && doc.currency ? h("span", { class: "hint" }, ` ${doc.currency}`) : null),
      ),
      problem,
      h("button", { type: "submit", class: "primary", id: "review-save" }, "Save and accept (Enter)"),
      h("button", { type: "button", onclick: cancel }, "Cancel (Esc)"),
    );
    const fields = root.querySelector("#review-fields");
    clear(fields, form);
    inputs[0].input.focus();
  }

  // The keys, while this page is shown (the listener goes when the page is left). Keys typed
  // into a field are the field's; the correction form takes Enter and Escape itself.
  const onKey = (event) => {
    if (!root.isConnected) {
      if (root.dataset.shown) document.removeEventListener("keydown", onKey);
      return;
    }
    root.dataset.shown = "1";
    if (editing || event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    if (event.target.closest?.("input, select, textarea, [contenteditable]")) return;
    const action = { a: () => accept(), e: edit, j: () => move(1), n: () => move(1), k: () => move(-1), p: () => move(-1) }[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  };
  document.addEventListener("keydown", onKey);

  // Documents reviewed elsewhere leave the queue, new ones join it at the end (oldest first);
  // the one on screen stays (unless it left), and a correction being typed is never repainted.
  followEvents(() => root.isConnected, async () => {
    if (editing || busy) return;
    const before = accepted;
    const read = await readQueue();
    // An accept (or a correction begun) while it was read: its own event reads again.
    if (before !== accepted || editing || busy) return;
    const shownId = current()?.id;
    ({ queue, waiting } = read);
    showReviewCount(waiting);
    const at = queue.findIndex((d) => d.id === shownId);
    index = at >= 0 ? at : Math.min(index, Math.max(0, queue.length - 1));
    const focused = document.activeElement?.id;
    paint();
    if (focused) document.getElementById(focused)?.focus({ preventScroll: true });
  });

  paint();
  return root;
}
