// Money typed as text, read for the person's locale. A number input drops what it does not
// understand (in an English browser "12,50" became 1250), so amounts are plain text fields and
// this module decides what was meant, learning the separators from Intl.NumberFormat.

export function separators(locale) {
  const parts = new Intl.NumberFormat(locale).formatToParts(1234567.89);
  const find = (type, fallback) => parts.find((p) => p.type === type)?.value ?? fallback;
  return { decimal: find("decimal", "."), group: find("group", ",") };
}

export function fractionDigits(currency) {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency: currency || "USD" }).resolvedOptions().maximumFractionDigits;
  } catch {
    return 2;
  }
}

// "12,50", "1.234,56", "1,234.56", "1 234,56" -> { value: 1234.56, text: "1234.56" } or { error }.
// Rules, in order: with both "." and "," the last one is the decimal mark; a lone kind of mark is
// the locale's decimal mark, or a group mark when every group after it has three digits and it
// is the locale's group mark (or repeats) — so "12,50" is 12.50 in every locale, "1,234" is 1234
// in English and, in German, 1,234 (refused for a currency with two decimal places).
export function parseMoney(raw, { locale, currency } = {}) {
  const text = String(raw ?? "")
    .trim()
    .replace(/[\s\u00a0\u202f']/g, "");
  if (text === "") return { value: null, text: null };
  if (!/^[0-9.,]+$/.test(text) || !/[0-9]/.test(text)) {
    return { error: "Type an amount with digits, such as 12.50 or 12,50" };
  }
  const { decimal, group } = separators(locale);
  const marks = [...new Set(text.replace(/[0-9]/g, ""))];
  let decimalMark = null;
  if (marks.length === 2) {
    decimalMark = text.lastIndexOf(".") > text.lastIndexOf(",") ? "." : ",";
  } else if (marks.length === 1) {
    const mark = marks[0];
    const pieces = text.split(mark);
    const groupedByThree = pieces.slice(1).every((p) => p.length === 3) && pieces[0].length > 0;
    const asGroup = groupedByThree && (pieces.length > 2 || (mark === group && mark !== decimal));
    decimalMark = asGroup ? null : mark;
  }
  let whole = text;
  let fraction = "";
  if (decimalMark) {
    const at = text.lastIndexOf(decimalMark);
    whole = text.slice(0, at);
    fraction = text.slice(at + 1);
    if (fraction.includes(".") || fraction.includes(",")) return { error: `"${raw}" has a mark after the decimal part` };
  }
  const groupMark = decimalMark === "." ? "," : decimalMark === "," ? "." : marks[0];
  const groups = groupMark ? whole.split(groupMark) : [whole];
  if (groups.length > 1 && (groups[0] === "" || groups.slice(1).some((g) => g.length !== 3))) {
    return { error: `"${raw}" has thousands marks in the wrong places` };
  }
  if (whole.replace(/[.,]/g, "") === "" && fraction === "") return { error: "Type an amount with digits" };
  const digits = fractionDigits(currency);
  if (fraction.length > digits) {
    return { error: `${currency || "This currency"} has ${digits} decimal places; "${raw}" has ${fraction.length}` };
  }
  const canonical = `${groups.join("") || "0"}${fraction ? `.${fraction}` : ""}`;
  const value = Number(canonical);
  if (!Number.isFinite(value)) return { error: `"${raw}" is not an amount` };
  return { value, text: value.toFixed(digits) };
}

// How many times larger or smaller ``next`` is than ``previous`` (1 when either is empty or 0).
export function changeFactor(previous, next) {
  const a = Math.abs(Number(previous));
  const b = Math.abs(Number(next));
  if (previous == null || next == null || !a || !b) return 1;
  return Math.max(a / b, b / a);
}
