// A document's line items (description, quantity, unit price, total) and what does not add up.
// "Edit lines" turns the table into a form: change a line, add one, remove one, then Save sends
// the new list (documents.update replaces the lines). The server checks the amounts against each
// other and keeps them as sent; what does not add up is shown above the table, from the
// evidence's warnings (the total is never changed to agree).

import { h, money } from "./dom.js";
import { parseMoney, fractionDigits } from "./numbers.js";

const FIELD_NAMES = { lineItems: "Line items", taxLines: "Tax lines", taxAmount: "Tax", subtotal: "Subtotal" };

// The warnings of the amounts' checks (and of extraction), one line each; null when none.
export function amountWarnings(doc) {
  const warned = (doc.evidence || []).filter((e) => e.warning);
  if (!warned.length) return null;
  return h(
    "div",
    { class: "amount-warnings", id: "amount-warnings", role: "status" },
    h("p", {}, h("strong", {}, "Does not add up — please check:")),
    h("ul", {}, warned.map((e) => h("li", { "data-field": e.field }, `${FIELD_NAMES[e.field] || e.field}: ${e.warning}`))),
  );
}

function localAmount(value, currency) {
  if (value == null) return "";
  return new Intl.NumberFormat(undefined, { useGrouping: false, minimumFractionDigits: fractionDigits(currency), maximumFractionDigits: 20 }).format(Number(value));
}

// `save(lines)` sends the new list and resolves once the page shows the answer (it throws the
// server's refusal).
export function lineItemsSection(doc, save) {
  const items = doc.lineItems || [];
  const amount = (value) => (value == null ? "—" : money(value, doc.currency));
  const section = h("section", { class: "panel", "aria-labelledby": "items-h", id: "line-items-section" });
  const heading = h("h2", { id: "items-h" }, `Line items${items.length ? ` (${items.length})` : ""}`);
  const editButton = h("button", { type: "button", "data-edit": "lineItems", id: "edit-lines", onclick: () => edit() }, "Edit lines");
  const table = items.length
    ? h(
        "div",
        // Wider than a phone it scrolls sideways; nothing inside takes focus, so the box does
        // (a named region), for the keyboard to scroll it.
        { class: "scroll", tabindex: "0", role: "region", "aria-labelledby": "items-h" },
        h(
          "table",
          { class: "line-items", id: "line-items" },
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Description"), ["Quantity", "Unit price", "Total"].map((t) => h("th", { scope: "col", class: "num" }, t)))),
          h(
            "tbody",
            {},
            items.map((item) =>
              h(
                "tr",
                {},
                h("td", {}, item.description),
                h("td", { class: "num" }, item.quantity == null ? "—" : Number(item.quantity).toLocaleString()),
                h("td", { class: "num" }, amount(item.unitPrice)),
                h("td", { class: "num" }, amount(item.amount)),
              ),
            ),
          ),
        ),
      )
    : h("p", { class: "hint" }, "No line items were read from this document.");
  section.append(heading, amountWarnings(doc) || "", table, h("p", {}, editButton));

  function edit() {
    const rows = h("tbody", { id: "line-rows" });
    const problem = h("p", { class: "error", role: "alert", id: "lines-error" });
    let count = 0;
    const addRow = (item = {}) => {
      const n = count++;
      const input = (name, label, value, attributes = {}) => {
        const id = `line-${n}-${name}`;
        return h("td", { "data-col": name }, h("label", { for: id, class: "visually-hidden" }, `${label}, line ${n + 1}`), h("input", { id, name, value: value ?? "", autocomplete: "off", ...attributes }));
      };
      const decimal = { type: "text", inputmode: "decimal", size: "9" };
      const row = h(
        "tr",
        { class: "line-row" },
        input("description", "Description", item.description, { size: "18" }),
        input("quantity", "Quantity", item.quantity == null ? "" : Number(item.quantity).toLocaleString(undefined, { useGrouping: false }), { inputmode: "decimal", size: "4" }),
        input("unitPrice", "Unit price", localAmount(item.unitPrice, doc.currency), decimal),
        input("amount", "Total", localAmount(item.amount, doc.currency), decimal),
        h("td", {}, h("button", { type: "button", class: "link", "aria-label": `Remove line ${n + 1}`, onclick: () => { row.remove(); addButton.focus(); } }, "Remove")),
      );
      rows.append(row);
      return row;
    };
    const addButton = h("button", { type: "button", id: "add-line", onclick: () => addRow().querySelector("input").focus() }, "Add a line");
    for (const item of items) addRow(item);
    const read = () => {
      const lines = [];
      for (const row of rows.querySelectorAll("tr")) {
        const value = (name) => row.querySelector(`input[name=${name}]`);
        const description = value("description").value.trim();
        if (!description) throw Object.assign(new Error("Every line needs a description"), { input: value("description") });
        const line = { description, quantity: null, unitPrice: null, amount: null };
        const quantity = value("quantity").value.trim().replace(",", ".");
        if (quantity) {
          if (!/^\d+(\.\d+)?$/.test(quantity)) throw Object.assign(new Error(`Quantity: "${quantity}" is not a number`), { input: value("quantity") });
          line.quantity = quantity;
        }
        for (const name of ["unitPrice", "amount"]) {
          const parsed = parseMoney(value(name).value, { currency: doc.currency });
          if (parsed.error) throw Object.assign(new Error(parsed.error), { input: value(name) });
          line[name] = parsed.text;
        }
        lines.push(line);
      }
      return lines;
    };
    const form = h(
      "form",
      {
        id: "lines-form",
        onsubmit: async (event) => {
          event.preventDefault();
          problem.textContent = "";
          let lines;
          try {
            lines = read();
          } catch (error) {
            problem.textContent = error.message;
            error.input?.focus();
            return;
          }
          try {
            await save(lines);
          } catch (error) {
            problem.textContent = error.message;
          }
        },
        onkeydown: (event) => {
          if (event.key === "Escape") cancel();
        },
      },
      h(
        "div",
        { class: "scroll", tabindex: "0", role: "region", "aria-label": "Lines being edited" },
        h("table", { class: "line-items editing" }, h("thead", {}, h("tr", {}, ["Description", "Quantity", "Unit price", "Total", ""].map((t) => h("th", { scope: "col" }, t)))), rows),
      ),
      h("p", {}, addButton, " ", h("button", { type: "submit", class: "primary", id: "save-lines" }, "Save lines"), " ", h("button", { type: "button", onclick: () => cancel() }, "Cancel")),
      problem,
    );
    const cancel = () => {
      form.replaceWith(table);
      editButton.hidden = false;
      editButton.focus();
    };
    table.replaceWith(form);
    editButton.hidden = true;
    (rows.querySelector("input") || addButton).focus();
  }

  return section;
}
