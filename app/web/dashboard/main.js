// The dashboard: a hash router over eleven views. Every view loads with one GraphQL request (the
// Bank page with two: the months it counts depend on the newest booking the first one reads).

import * as api from "./api.js";
import { h, clear, announce, errorBox } from "./dom.js";
import { state } from "./state.js";
import { overviewView } from "./overview.js";
import { documentsView, documentView } from "./documents.js";
import { uploadView } from "./upload.js";
import { keysView } from "./keys.js";
import { membersView } from "./members.js";
import { tagsView } from "./tags.js";
import { reviewView } from "./review.js";
import { bankView } from "./bank.js";
import { integrationsView } from "./integrations.js";
import { approvalsView } from "./approvals.js";
import { rulesView } from "./rules.js";
import { sourcesView } from "./sources.js";
import { followNavCounts, stopNavCounts, refreshNavCounts } from "./nav_counts.js";
import { disconnect as stopLiveEvents } from "./live.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const picker = document.getElementById("workspace");
const signedOut = document.getElementById("signed-out");

// Signed out, the header shows only "Sign in": no navigation, no workspace list from before.
function showHeader(signedIn) {
  nav.hidden = !signedIn;
  signedOut.hidden = signedIn;
  if (!signedIn) {
    clear(picker);
    state.workspaces = [];
    state.workspace = null;
  }
}

function route() {
  const path = (location.hash || "#/").slice(1);
  const parts = path.split("?")[0].split("/").filter(Boolean);
  if (parts[0] === "documents" && parts[1]) return { name: "document", id: decodeURIComponent(parts[1]) };
  if (["documents", "review", "bank", "rules", "sources", "upload", "keys", "members", "tags", "integrations", "approvals"].includes(parts[0])) return { name: parts[0] };
  return { name: "overview" };
}

const VIEWS = {
  overview: overviewView,
  documents: documentsView,
  document: documentView,
  review: reviewView,
  bank: bankView,
  rules: rulesView,
  sources: sourcesView,
  upload: uploadView,
  keys: keysView,
  members: membersView,
  tags: tagsView,
  integrations: integrationsView,
  approvals: approvalsView,
};

let renderToken = 0;

async function render() {
  const token = ++renderToken;
  // Opened from a one-time sign-in link (also in a tab already showing the dashboard, where
  // only the fragment changed). A link that did not work says why; a sign-in already in this
  // tab stays.
  const linkProblem = await signInWithLink();
  if (linkProblem === "away") return;
  if (!api.session()) {
    showHeader(false);
    clear(main, signInView(linkProblem));
    focusHeading();
    return;
  }
  showHeader(true);
  followNavCounts();
  const current = route();
  for (const link of nav.querySelectorAll("a[data-route]")) {
    const active = link.dataset.route === current.name || (["document", "tags"].includes(current.name) && link.dataset.route === "documents");
    if (active) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  main.setAttribute("aria-busy", "true");
  try {
    const content = await VIEWS[current.name]({ ...current, rerender: render });
    if (token !== renderToken) return; // a newer navigation won
    clear(main, content);
    if (linkProblem) main.prepend(h("p", { class: "error", role: "alert" }, linkProblem));
    fillPicker();
    // Time to first render since navigation start (bench/web.py reads it).
    window.__fincapFirstRender ??= performance.now();
  } catch (error) {
    if (token !== renderToken) return;
    if (error.status === 401) {
      api.saveSession(null);
      clear(main, signInView(error.message));
      showHeader(false);
    } else {
      clear(main, h("h1", {}, "Something went wrong"), errorBox(error));
    }
  } finally {
    main.removeAttribute("aria-busy");
  }
  focusHeading();
}

function focusHeading() {
  // After a navigation, focus goes to the new page's heading (screen readers read it).
  const heading = main.querySelector("h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: false });
  }
}

function fillPicker() {
  const session = api.session();
  const options = state.workspaces.map((w) =>
    h("option", { value: w.id, selected: w.id === state.workspace?.id }, `${w.name} (${w.role})`),
  );
  if (session?.kind === "oauth") {
    // A sign-in is bound to one workspace: another one means signing in again.
    options.push(h("option", { value: "__another" }, "Another workspace… (sign in)"));
  }
  clear(picker, options);
}

picker.addEventListener("change", async () => {
  if (picker.value === "__another") {
    stopLiveEvents();
    await api.signOut();
    await api.startSignIn({ chooseWorkspace: true });
    return;
  }
  api.setWorkspace(picker.value);
  stopNavCounts(); // the next render follows the new workspace's
  refreshNavCounts();
  announce("Workspace changed");
  render();
});

document.getElementById("sign-out").addEventListener("click", async () => {
  stopNavCounts();
  stopLiveEvents();
  await api.signOut();
  showHeader(false);
  location.hash = "#/";
  render();
});

document.getElementById("header-sign-in").addEventListener("click", async (event) => {
  event.target.disabled = true;
  try {
    await api.startSignIn();
  } catch (error) {
    event.target.disabled = false;
    clear(main, signInView(error.message));
  }
});

function signInView(problem) {
  const keyInput = h("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    autocomplete: "off",
    required: true,
    placeholder: "sk_…",
    spellcheck: "false",
  });
  return h(
    "section",
    { class: "sign-in" },
    h("h1", {}, "Sign in to fincap"),
    problem ? h("p", { class: "error", role: "alert" }, problem) : null,
    h(
      "div",
      { class: "panel" },
      h("h2", {}, "With your account"),
      h(
        "p",
        {},
        "You will sign in on fincap's sign-in page with your email and password. No password yet? " +
          "The operator sets one (fincap admin set-password) or gives you a one-time sign-in link (fincap admin sign-in-link).",
      ),
      h(
        "button",
        {
          type: "button",
          id: "oauth-sign-in",
          class: "primary",
          onclick: async (event) => {
            event.target.disabled = true;
            try {
              await api.startSignIn();
            } catch (error) {
              event.target.disabled = false;
              event.target.after(errorBox(error));
            }
          },
        },
        "Sign in",
      ),
    ),
    h(
      "form",
      {
        class: "panel",
        id: "key-form",
        onsubmit: (event) => {
          event.preventDefault();
          api.useApiKey(keyInput.value);
          render();
        },
      },
      h("h2", {}, "With an API key"),
      h("label", { for: "api-key" }, "API key"),
      keyInput,
      h("p", { class: "hint" }, "Kept in this tab only. ", h("a", { href: "/#api-keys" }, "How to get a key")),
      h("button", { type: "submit" }, "Use this key"),
    ),
  );
}

// The token of a one-time sign-in link leaves the address bar (and the history) at once, then
// is used. Returns null (no link), "away" (off to the sign-in, which now needs no password) or
// why the link did not work (used, expired).
async function signInWithLink() {
  const found = (location.hash || "").match(/^#\/sign-in-link\/([A-Za-z0-9_-]{1,100})$/);
  if (!found) return null;
  history.replaceState(null, "", "/app/");
  try {
    await api.useSignInLink(found[1]);
  } catch (error) {
    return error.message;
  }
  stopLiveEvents();
  api.saveSession(null); // the link's person, from now on
  try {
    await api.startSignIn();
  } catch (error) {
    return error.message;
  }
  return "away";
}

async function start() {
  try {
    await api.finishSignIn();
  } catch (error) {
    showHeader(false);
    clear(main, signInView(error.message));
    return;
  }
  window.addEventListener("hashchange", render);
  await render();
  window.__fincapReady = true;
}

start();
