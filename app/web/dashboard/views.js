// Saved views on the Documents page: "Save view…" keeps the list as it is now (its where
// clause, words, archive filter, sort and columns, in the API's terms: views.create), for the person or
// shared with the workspace; a view opens by its address (#/documents?view=view_…), named at
// the top with what it is and, for whoever may, a Delete button.

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace } from "./dom.js";
import { refreshNavCounts as refreshViews } from "./nav_counts.js";
import { viewHref } from "./views_nav.js";

// A where clause three levels deep: the page's filters over a view saved from another view.
const VIEW_FIELDS = `id name shared query archived sortBy sortOrder columns viewerCanEdit count
  where { logic conditions { field op value logic conditions { field op value logic conditions { field op value } } } }`;
const GET = `query View($input: ViewRefInput!) { viewsGet(input: $input) { view { ${VIEW_FIELDS} } } }`;
const CREATE = `mutation SaveView($input: CreateViewInput!) { viewsCreate(input: $input) { view { id name } } }`;
const DELETE = `mutation DeleteView($input: ViewRefInput!) { viewsDelete(input: $input) { id deleted } }`;

// GraphQL answers a clause with null for what a condition or a group does not have; the
// input takes only what each has.
function clean(value) {
  if (Array.isArray(value)) return value.map(clean);
  if (value && typeof value === "object") {
    // A condition keeps its value even when it is null ("field eq null"); a group has none.
    const kept = Object.entries(value).filter(([k, v]) => v !== null || (k === "value" && value.field != null));
    return Object.fromEntries(kept.map(([k, v]) => [k, k === "value" ? v : clean(v)]));
  }
  return value;
}

export async function savedView(id) {
  const view = (await api.data(GET, { input: { id } })).viewsGet.view;
  return { ...view, where: view.where ? clean(view.where) : null };
}

export function viewHeader(view) {
  const status = h("p", { role: "status", id: "view-status" });
  const line = h(
    "p",
    { class: "meta view-meta", id: "view-meta", "data-view": view.id },
    `Saved view${view.shared ? ", shared with the workspace" : ""}: ${view.count.toLocaleString()} document${view.count === 1 ? "" : "s"} when opened. `,
    h("a", { href: "#/documents" }, "All documents"),
    " ",
  );
  if (view.viewerCanEdit) {
    const remove = h("button", { type: "button", id: "view-delete" }, "Delete view");
    const cell = h("span", {}, remove);
    remove.addEventListener("click", () =>
      confirmInPlace(cell, remove, {
        id: "view-delete-yes",
        warning: `Delete the view “${view.name}”? The documents stay. `,
        yes: "Delete",
        no: "Keep",
        onYes: async () => {
          try {
            await api.data(DELETE, { input: { id: view.id } });
            announce(`View ${view.name} deleted`);
            await refreshViews();
            location.hash = "#/documents";
          } catch (error) {
            status.replaceChildren(errorBox(error));
          }
        },
      }),
    );
    line.append(cell);
  }
  return h("div", {}, line, status);
}

// `current()` gives the list as the API runs it now.
export function saveViewForm(current) {
  const box = h("div", { class: "save-view", id: "save-view" });
  const open = h("button", { type: "button", id: "save-view-open", "aria-expanded": "false" }, "Save view…");
  const form = () => {
    const name = h("input", { id: "view-name", maxlength: "60", autocomplete: "off", required: true });
    const shared = h("input", { type: "checkbox", id: "view-shared" });
    const problem = h("p", { class: "error", role: "alert", id: "view-error" });
    const close = () => {
      clear(box, open);
      open.setAttribute("aria-expanded", "false");
      open.focus();
    };
    const element = h(
      "form",
      {
        "aria-label": "Save this list as a view",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            const input = { name: name.value, shared: shared.checked, ...current() };
            const saved = (await api.data(CREATE, { input })).viewsCreate.view;
            announce(`Saved the view ${saved.name}`);
            await refreshViews();
            location.hash = viewHref(saved.id);
          } catch (error) {
            problem.replaceChildren(errorBox(error));
            name.focus();
          }
        },
        onkeydown: (event) => {
          if (event.key === "Escape") close();
        },
      },
      h("label", { for: "view-name" }, "Name"),
      name,
      h("label", { for: "view-shared" }, shared, " Share with the workspace"),
      problem,
      h("button", { type: "submit", class: "primary", id: "view-save" }, "Save"),
      h("button", { type: "button", onclick: close }, "Cancel"),
    );
    return { element, name };
  };
  open.addEventListener("click", () => {
    const made = form();
    clear(box, made.element);
    made.name.focus();
  });
  box.append(open);
  return box;
}
