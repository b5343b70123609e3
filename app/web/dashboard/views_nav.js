// Saved views in the navigation: each of the person's views and the workspace's shared ones,
// with how many documents it lists now. They are read with the review count, in the
// navigation's one request (nav_counts.js), and again when documents change. A view's
// address is stable: #/documents?view=view_….

import { h, clear } from "./dom.js";

export const VIEWS_NAV = "viewsList(input: { counts: true }) { views { id name count shared } }";

export function viewHref(id) {
  return `#/documents?view=${encodeURIComponent(id)}`;
}

export function showViews(views) {
  const box = document.getElementById("views-nav");
  if (!box) return;
  clear(
    box,
    views.map((view) =>
      h(
        "a",
        {
          href: viewHref(view.id),
          class: "view-link",
          "data-view": view.id,
          title: view.shared ? "Shared with the workspace" : "Yours",
          "aria-current": location.hash.includes(`view=${encodeURIComponent(view.id)}`) ? "page" : null,
        },
        view.name,
        " ",
        h("span", { class: "badge", "data-count": String(view.count ?? "") }, (view.count ?? 0).toLocaleString()),
        h("span", { class: "visually-hidden" }, " documents"),
      ),
    ),
  );
}
