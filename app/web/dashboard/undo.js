// "Archived … Undo": a toast that outlives the move back to the list (it sits on <body>) for
// a few seconds; Undo restores the documents (and the duplicates archived with them).

import * as api from "./api.js";
import { h, clear, announce, errorBox } from "./dom.js";

const UNDO_SECONDS = 10;
const RESTORE = `mutation Restore($input: UnarchiveDocumentInput!) { documentsUnarchive(input: $input) { document { id archived } } }`;

export function undoToast(text, ids) {
  document.getElementById("toast")?.remove();
  const toast = h("div", { id: "toast", class: "toast", role: "status" });
  const close = () => toast.remove();
  const timer = setTimeout(close, UNDO_SECONDS * 1000);
  const undo = async () => {
    clearTimeout(timer);
    try {
      for (const id of ids) await api.data(RESTORE, { input: { id } });
      clear(toast, h("span", {}, "Restored"));
      announce("Restored");
      setTimeout(close, 3000);
      window.dispatchEvent(new HashChangeEvent("hashchange")); // the list shows them again
    } catch (error) {
      clear(toast, errorBox(error), h("button", { type: "button", onclick: close }, "Close"));
    }
  };
  clear(toast, h("span", {}, text), h("button", { type: "button", id: "undo", onclick: undo }, "Undo"), h("button", { type: "button", class: "link", "aria-label": "Dismiss", onclick: close }, "×"));
  document.body.append(toast);
}
