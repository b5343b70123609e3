// Small DOM helpers: elements are built with textContent, never from HTML strings, so a
// merchant called "<script>" is shown as text.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

export function clear(element, ...children) {
  element.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
  return element;
}

export function announce(text) {
  const region = document.getElementById("announce");
  region.textContent = "";
  // A fresh text node after a tick is announced even when the text repeats.
  setTimeout(() => (region.textContent = text), 50);
}

export function money(amount, currency) {
  if (amount === null || amount === undefined || amount === "") return "—";
  const value = Number(amount);
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency: currency || "USD" }).format(value);
  } catch {
    return `${value.toFixed(2)} ${currency || ""}`.trim();
  }
}

export function shortMoney(value, currency) {
  try {
    return new Intl.NumberFormat(undefined, {
      style: "currency",
      currency: currency || "USD",
      notation: "compact",
      maximumFractionDigits: 1,
    }).format(value);
  } catch {
    return String(Math.round(value));
  }
}

export function monthLabel(key) {
  // "2026-03" -> "Mar 2026"
  const [year, month] = (key || "").split("-").map(Number);
  if (!year || !month) return key || "unknown";
  return new Date(Date.UTC(year, month - 1, 1)).toLocaleDateString(undefined, {
    month: "short",
    year: "numeric",
    timeZone: "UTC",
  });
}

export function errorBox(error) {
  return h("p", { class: "error", role: "alert" }, error.message || String(error));
}

// Ask in place before something that cannot be undone: the cell shows the warning, "yes" (focused)
// and "no" (which puts the original button back). `onYes` runs when the person confirms.
export function confirmInPlace(cell, button, { id, warning, yes, no, onYes }) {
  const confirm = h("button", { type: "button", class: "danger", id, onclick: onYes }, yes);
  const keep = h("button", { type: "button", onclick: () => { clear(cell, button); button.focus(); } }, no);
  clear(cell, h("span", { role: "alert" }, warning), confirm, keep);
  confirm.focus();
}

// A moment as the browser's locale writes it (medium date, short time); `none` when there is none.
export function moment(value, none = "—") {
  return value ? new Date(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : none;
}

// "1 document", "1,204 documents": a count with its noun.
export function plural(n, one, many = `${one}s`) {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}
