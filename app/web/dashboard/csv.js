// CSV files made in the browser from documents fetched through the API (RFC 4180: a header row,
// CRLF between rows, fields with commas, quotes or line breaks quoted, quotes doubled).
// Spreadsheets run a cell that starts with =, +, -, @ (or a tab or carriage return) as a
// formula: such text cells get a leading apostrophe, as OWASP advises for CSV injection.
// A spreadsheet set to ';' as its separator (the default in German and other locales) splits a
// line at every ';', inside quotes placed mid-field too, so "Acme;=1+2" would give a cell
// "=1+2": a ';' followed by such a character gets the apostrophe after it as well.
// Amounts are plain decimals with a dot ("-12.50" stays a number: it is not text).

const FORMULA_START = /^[=+\-@\t\r]/;
const FORMULA_AFTER_SEMICOLON = /;(?=[=+\-@\t\r])/g;
const DECIMAL = /^-?\d+(\.\d+)?$/;

export function csvCell(value) {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (DECIMAL.test(text)) return text;
  if (FORMULA_START.test(text)) text = `'${text}`;
  text = text.replace(FORMULA_AFTER_SEMICOLON, ";'");
  return /[",;\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

// `columns`: [[header, (row) => value], …].
export function toCsv(rows, columns) {
  const lines = [columns.map(([name]) => csvCell(name)).join(",")];
  for (const row of rows) lines.push(columns.map(([, pick]) => csvCell(pick(row))).join(","));
  return lines.join("\r\n") + "\r\n";
}

// The API's amounts are decimal strings ("12.50"); anything else becomes one with a dot.
export function decimal(value) {
  if (value === null || value === undefined || value === "") return "";
  const text = String(value);
  return DECIMAL.test(text) ? text : String(Number(text));
}

export const DOCUMENT_COLUMNS = [
  ["id", (d) => d.id],
  ["date", (d) => d.docDate],
  ["merchant", (d) => d.merchant],
  ["amount", (d) => decimal(d.amount)],
  ["currency", (d) => d.currency],
  ["category", (d) => d.category],
  ["type", (d) => d.docType],
  ["status", (d) => d.processingStatus],
  ["archived", (d) => (d.archived ? "yes" : "no")],
  // A cell of names: a later name never starts the cell, so no tag can make it a formula.
  ["tags", (d) => (d.tags || []).join(", ")],
];

// Save `text` as a file (UTF-8 with a byte-order mark, so spreadsheet programs read accents).
export function download(text, fileName) {
  const url = URL.createObjectURL(new Blob(["\ufeff", text], { type: "text/csv;charset=utf-8" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
