// Two small SVG charts (no library): spend by month as columns, spend by category as bars.
// Each chart is an image with a label for screen readers and a table of the same numbers.

import { h, shortMoney, money } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) element.append(child instanceof Node ? child : String(child));
  return element;
}

function table(caption, rows, currency) {
  return h(
    "details",
    { class: "chart-table" },
    h("summary", {}, "Show as a table"),
    h(
      "table",
      {},
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Group"), h("th", { scope: "col" }, "Documents"), h("th", { scope: "col" }, `Total (${currency})`))),
      h(
        "tbody",
        {},
        rows.map((row) =>
          h("tr", {}, h("th", { scope: "row" }, row.label), h("td", {}, row.count), h("td", {}, money(row.value, currency))),
        ),
      ),
    ),
  );
}

// The axis's top: the largest value rounded up to 1, 2, 2.5 or 5 × a power of ten, so the
// three labels are round numbers in every locale (a locale whose compact notation does not
// shorten thousands, as German's, would otherwise print the raw maximum: "8189,7 $").
export function niceCeiling(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 2.5, 5, 10].find((m) => m * power >= value - 1e-9 * power);
  return step * power;
}

// rows: [{key, label, value, count}]; onPick(row) when a column is chosen (click or Enter).
export function columnChart({ id, title, rows, currency, onPick }) {
  const width = 640;
  const height = 220;
  const pad = { top: 16, right: 8, bottom: 36, left: 64 };
  const max = niceCeiling(Math.max(0, ...rows.map((r) => r.value)));
  const inner = width - pad.left - pad.right;
  const band = rows.length ? inner / rows.length : inner;
  const svg = s("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-labelledby": `${id}-title`,
    class: "chart",
    id,
  });
  svg.append(s("title", { id: `${id}-title` }, `${title}: ${rows.map((r) => `${r.label} ${money(r.value, currency)}`).join(", ") || "no data"}`));
  for (const fraction of [0, 0.5, 1]) {
    const y = pad.top + (1 - fraction) * (height - pad.top - pad.bottom);
    svg.append(s("line", { x1: pad.left, x2: width - pad.right, y1: y, y2: y, class: "grid" }));
    svg.append(s("text", { x: pad.left - 6, y: y + 4, class: "axis", "text-anchor": "end" }, shortMoney(max * fraction, currency)));
  }
  const every = Math.max(1, Math.ceil(rows.length / 12));
  rows.forEach((row, index) => {
    const barHeight = (row.value / max) * (height - pad.top - pad.bottom);
    const x = pad.left + index * band + band * 0.15;
    const y = height - pad.bottom - barHeight;
    const bar = s("rect", {
      x,
      y,
      width: Math.max(1, band * 0.7),
      height: Math.max(0, barHeight),
      class: "bar",
      "data-key": row.key ?? "",
      "data-value": String(row.value),
    });
    bar.append(s("title", {}, `${row.label}: ${money(row.value, currency)} (${row.count} documents)`));
    if (onPick) bar.addEventListener("click", () => onPick(row));
    svg.append(bar);
    if (index % every === 0) {
      svg.append(s("text", { x: x + band * 0.35, y: height - pad.bottom + 16, class: "axis", "text-anchor": "middle" }, row.short || row.label));
    }
  });
  return h("figure", { class: "chart-box" }, h("figcaption", {}, title), svg, table(title, rows, currency));
}

export function barChart({ id, title, rows, currency, onPick }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  const list = h(
    "ol",
    { class: "hbars", id, "aria-label": title },
    rows.map((row) =>
      h(
        "li",
        {},
        h(
          onPick ? "button" : "span",
          {
            type: onPick ? "button" : null,
            class: "hbar-label",
            onclick: onPick ? () => onPick(row) : null,
            title: onPick ? row.hint || `Filter by ${row.label}` : null,
          },
          row.label,
        ),
        h(
          "span",
          { class: "hbar-track", "aria-hidden": "true" },
          h("span", { class: "hbar", "data-key": row.key ?? "", "data-value": String(row.value), style: null }),
        ),
        h("span", { class: "hbar-value" }, money(row.value, currency)),
      ),
    ),
  );
  // Widths are set as properties, not a style attribute: the page's CSP forbids inline styles.
  list.querySelectorAll(".hbar").forEach((bar, i) => {
    bar.style.width = `${(rows[i].value / max) * 100}%`;
  });
  return h("figure", { class: "chart-box" }, h("figcaption", {}, title), list, table(title, rows, currency));
}
